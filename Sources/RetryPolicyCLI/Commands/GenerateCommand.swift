import Foundation
import RetryPolicy

/// `retry-policy generate --output FILE FILE.retry…`: compiles policy files into one Swift
/// file, `enum RetryPolicies`, for the build plugin `RetryPolicyPlugin`.
///
/// Diagnostics go to standard error in the compiler's form, `PATH:LINE:COL: error: MESSAGE`,
/// so that a build running this command fails with the `.retry` file's line and column.
enum GenerateCommand: Subcommand {
  static let spec = CommandSpec(
    name: "generate",
    abstract: "compile policy files into Swift source (for the build plugin)",
    usage: ["generate --output <file.swift> <file-or-folder>…"],
    discussion: """
      Compiles every policy of the files given (a folder stands for every .retry file below
      it) and writes one Swift file declaring 'enum RetryPolicies', with a
      'static let NAME: CompiledPolicy' for each policy, named as in its file (in backticks
      where the name is a Swift keyword), built directly from the compiled values: the
      generated code parses nothing at run time. Code refers to a policy as
      RetryPolicies.NAME, and to a policy named 'init' or 'self' in backticks:
      RetryPolicies.`init`. A policy named 'Type' or 'Protocol' is an error (Swift reads
      RetryPolicies.Type as the metatype, with or without backticks), as is a policy or hook
      named '_'; 'check' reports the same errors. A policy that names hooks also gets
      'static func NAME(HOOK: …, in:isolation:_:)', which takes each hook as a closure and
      runs the policy, so a missing hook is a Swift compile error.

      Diagnostics go to standard error as PATH:LINE:COL: error: MESSAGE (or warning:), the
      form compilers use, so that editors mark the line of the .retry file. A policy name
      defined in two files is an error naming both places. On any error nothing is written
      and the exit status is 1; warnings do not stop the output. An output file that already
      holds the text is left as it is (its modification time too).

      The build plugin RetryPolicyPlugin runs this command; there is rarely a reason to run
      it by hand.
      """,
    options: Options.optionSpecs,
    minimumArguments: 1, maximumArguments: nil, argumentName: "file or folder to compile",
    examples: [
      (
        "retry-policy generate --output RetryPolicies.swift Sources/App/payments.retry",
        "Write RetryPolicies.swift for one policy file."
      )
    ],
    exitStatuses: [
      (0, "the Swift file was written, or already held the text (warnings allowed)"),
      (1, "a policy file has errors, or a name is defined twice; nothing written"),
      (2, "usage error, a file that cannot be read, or an output that cannot be written"),
    ])

  /// Where a policy is declared.
  struct Place {
    var file: String
    var line: Int
    var column: Int
    var text: String { "\(file):\(line):\(column)" }
  }

  /// The options of `generate`.
  struct Options: CommandOptions {
    var destination = ""
    var arguments: [String] = []

    static var declarations: [OptionDeclaration<Self>] {
      [
        .option(
          "output", value: "FILE", help: "The Swift file to write (required).", \.destination,
          .nonEmpty("a file name"))
      ]
    }

    func validate() throws(UsageError) {
      if destination.isEmpty { throw .other("missing '--output FILE'") }
    }
  }

  static func run(_ options: Options, context: CommandContext) async -> Int32 {
    let output = context.output
    let expansion = PolicyInput.expand(options.arguments, context: context)
    // As `check` does: a folder without policy files is worth a warning, not silence.
    var unreadable = expansion.reportProblems(to: output)
    let destination = options.destination
    var hasErrors = false
    var entries: [PolicySwiftSource.Entry] = []
    var defined: [String: Place] = [:]
    for file in expansion.files {
      guard let data = PolicyInput.read(file, context: context, unreadable: &unreadable) else {
        continue
      }
      let source = [UInt8](data)
      let analysis = analyze(policyFile: source)
      let compiled = Dictionary(
        analysis.policies.compactMap { policy in policy.name.map { ($0, policy) } },
        uniquingKeysWith: { first, _ in first })
      let fileName = file.name.split(separator: "/").last.map(String.init) ?? file.name
      var lines: [String] = []
      let converter = SourceLocationConverter(bytes: source)
      for declaration in analysis.syntax.policies {
        let name = declaration.name.text
        let location = converter.location(ofOffset: declaration.name.range.start.offset)
        let place = Place(file: file.name, line: location.line, column: location.column)
        if let first = defined[name], first.file != file.name {
          lines.append(
            "\(place.text): error: policy '\(name)' is also defined in \(first.text)\n"
              + "\(first.text): note: '\(name)' is first defined here")
        } else if defined[name] == nil {
          defined[name] = place
        }
        guard let policy = compiled[name] else { continue }
        entries.append(
          PolicySwiftSource.Entry(policy: policy, fileName: fileName, line: place.line))
      }
      // Names the generated Swift cannot use are errors here and in `check` alike.
      let nameErrors = PolicySwiftSource.nameDiagnostics(of: analysis.syntax)
      let diagnostics = PolicySwiftSource.merging(nameErrors, into: analysis.diagnostics)
      if !diagnostics.isEmpty {
        let renderer = DiagnosticRenderer(bytes: source, sourceName: file.name)
        output.writeError(renderer.render(diagnostics))
      }
      for line in lines { output.writeError(line + "\n") }
      if analysis.hasErrors || !nameErrors.isEmpty || !lines.isEmpty { hasErrors = true }
    }
    if unreadable { return ExitStatus.usage }
    if hasErrors { return ExitStatus.failure }
    let sources = expansion.files.map { $0.name.split(separator: "/").last.map(String.init) ?? "" }
    let text = PolicySwiftSource.file(entries, sources: sources)
    // An output that already holds this text is left untouched, modification time and all:
    // when SwiftPM runs the command again with nothing changed (see PoliciesInTheBuild.md),
    // the target that compiles the file is then not recompiled.
    let written = context.fileReplacement.write(
      context.pathBytes(destination), contents: Array(text.utf8), unlessUnchanged: true)
    if case .failure(let failure) = written {
      output.error("cannot write '\(destination)': \(failure.reason)")
      return ExitStatus.usage
    }
    return ExitStatus.success
  }
}
