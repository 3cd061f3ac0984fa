import Foundation
import RetryPolicyEngines

/// `retry-policy import [--from grpc] FILE.json`: a gRPC service config's retry settings as
/// policy text, to bring existing configs under `check` and `explain`.
enum ImportCommand: Subcommand {
  static let spec = CommandSpec(
    name: "import",
    abstract: "turn a gRPC service config's retry settings into policy text",
    usage: ["import [--from grpc] <file.json>", "import [--from grpc] -"],
    discussion: """
      Prints a policy file: one 'policy' per method config, named after its first service
      and method (made a valid, unique name that is no keyword; a warning when it changes),
      from its 'retryPolicy' (a rule on its status codes with gRPC's jitter of 20%) or
      'hedgingPolicy' (a rule on its non-fatal codes and 'hedge'), its 'timeout' ('within')
      and the config's 'retryThrottling' ('budget'). The config is checked by gRFC A6's
      rules: each value gRPC refuses is an error with its JSON path. What the language
      cannot say (every method name, maxTokens) is kept in a record comment before the
      policy, so 'export --to grpc --file' gives back a config gRPC treats the same.
      gRPC is the one format read; '--from grpc' may be given, any other format is an error.
      """,
    options: Options.optionSpecs,
    minimumArguments: 1, maximumArguments: 1, argumentName: "file",
    examples: [
      ("retry-policy import service-config.json > fleet.retry", "Import a config.")
    ],
    exitStatuses: [
      (0, "imported"),
      (1, "the file is no service config this command can read"),
      (2, "usage error, unreadable file, or output that cannot be written"),
    ])

  /// The options of `import`.
  struct Options: CommandOptions {
    /// The formats `import` reads.
    enum Format: Sendable { case grpc }

    /// The format read: gRPC, the only one, whether `--from grpc` is given or not.
    var format: Format = .grpc
    var arguments: [String] = []

    static var declarations: [OptionDeclaration<Self>] {
      [
        .option(
          "from", value: "ENGINE", help: "The format read: 'grpc' (the default and only one).",
          \.format, .choice(["grpc": .grpc]))
      ]
    }
  }

  static func run(_ options: Options, context: CommandContext) async -> Int32 {
    let output = context.output
    let path = options.arguments.first ?? "-"
    let data: Data
    if path == "-" {
      switch context.standardInput() {
      case .success(let input): data = input
      case .failure(let error):
        output.error(PolicyInput.standardInputMessage(error))
        return ExitStatus.usage
      }
    } else {
      switch PolicyInput.readFileBytes(path, context: context) {
      case .success(let bytes): data = Data(bytes)
      case .failure(let error):
        error.report(to: output)
        return ExitStatus.usage
      }
    }
    let header = ["imported from \(path) by 'retry-policy import --from grpc'"]
    switch GRPCImport.policyFile(Array(data), header: header) {
    case .success(let imported):
      for warning in imported.warnings { output.warning("\(path): \(warning)") }
      output.write(imported.text)
      return ExitStatus.success
    case .failure(let failure):
      for problem in failure.problems { output.error("\(path): \(problem)") }
      return ExitStatus.failure
    }
  }
}
