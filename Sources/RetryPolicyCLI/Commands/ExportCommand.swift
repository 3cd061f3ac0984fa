import RetryPolicy
import RetryPolicyEngines

/// `retry-policy export --to grpc|envoy POLICY`: the policy as a gRPC service config or as
/// Envoy route and cluster settings, with a warning for each clause the engine cannot express
/// exactly.
enum ExportCommand: Subcommand {
  static let spec = CommandSpec(
    name: "export",
    abstract: "write a policy as a gRPC service config or as Envoy retry settings",
    usage: [
      "export --to grpc|envoy [--strict] [--json] [--service S [--method M]] '<policy>'",
      "export --to grpc|envoy [--strict] [--json] --file <file> [--policy <name>]",
    ],
    discussion: """
      '--to grpc' prints a gRPC service config (JSON): one method config, for every method
      or for '--service S [--method M]', with a 'retryPolicy' (or a 'hedgingPolicy' under
      'hedge'), its 'timeout' from 'within', 'perAttemptRecvTimeout' from 'timeout', and
      'retryThrottling' from 'budget'. Classes named like gRPC status codes ('unavailable',
      'resourceExhausted', 'UNAVAILABLE') become its status codes. gRPC multiplies each
      delay by a uniform factor in [0.8, 1.2]: 'jitter 20%' is exact, any other jitter
      warns. With '--file' and no '--policy', every policy of the file becomes a method
      config, named by the comment on the line before it, the record 'import' writes
      ('# grpc-service-config: {"name": [{"service": "S", "method": "M"}]}'; an imported
      policy also gets back its maxTokens); without one, or '--service', for every method.
      gRPC refuses a config that names a method twice, '[{}]' included: a policy that
      would is a warning at its name.

      '--to envoy' prints YAML (JSON with '--json'): 'route' holds the fields of a
      RouteAction ('timeout' from 'within', 'retry_policy', 'hedge_policy') and 'cluster'
      the 'circuit_breakers' with the 'retry_budget' from 'budget'.

      Where the engine cannot say exactly what the policy says, a warning at the clause's
      line and column names what changes; with '--strict' those are errors and nothing is
      printed. An exact export prints nothing on standard error.
      """,
    options: Options.optionSpecs,
    minimumArguments: 0, maximumArguments: nil, argumentName: "policy",
    examples: [
      (
        "retry-policy export --to grpc --service helloworld.Greeter 'retry 3 on unavailable"
          + " backoff 100ms jitter 20% max 1s'",
        "A retry policy gRPC runs exactly."
      ),
      (
        "retry-policy export --to envoy --file payments.retry --policy payments",
        "Envoy's retry_policy for a policy of a file, as YAML."
      ),
    ],
    exitStatuses: [
      (0, "exported (warnings, if any, on standard error)"),
      (1, "invalid policy, or an inexact mapping under --strict"),
      (2, "usage error, unreadable file, or output that cannot be written"),
    ])

  /// The options of `export`.
  struct Options: CommandOptions {
    /// The engines `export` writes for.
    enum Engine: Sendable { case grpc, envoy }

    var engine: Engine?
    var service: String?
    var method: String?
    var isStrict = false
    var isJSON = false
    var selection = PolicySelection()
    var arguments: [String] = []

    static var declarations: [OptionDeclaration<Self>] {
      [
        .option(
          "to", value: "ENGINE", help: "The engine: 'grpc' or 'envoy'.", \.engine,
          .choice(["grpc": .grpc, "envoy": .envoy]))
      ] + .group(\.selection) + [
        .option(
          "service", value: "S", help: "gRPC: the service the method config names.",
          \.service, .text),
        .option("method", value: "M", help: "gRPC: the method (with --service).", \.method, .text),
        .flag("strict", help: "Treat every inexact mapping as an error (exit 1).", \.isStrict),
        .flag("json", help: "Envoy: print JSON instead of YAML.", \.isJSON),
      ]
    }

    func validate() throws(UsageError) {
      if engine == nil { throw .missingArgument("'--to grpc' or '--to envoy'") }
      if method != nil, service == nil { throw .other("'--method' needs '--service'") }
      try selection.validate()
    }
  }

  static func run(_ options: Options, context: CommandContext) async -> Int32 {
    let output = context.output
    let engine = options.engine ?? .grpc
    let isStrict = options.isStrict
    if engine == .grpc {
      for (option, value, isMethod) in [
        ("service", options.service, false), ("method", options.method, true),
      ] {
        guard let value, !GRPCExport.isValidName(value, isMethod: isMethod) else { continue }
        output.usageError(
          .invalidValue(
            option: option, value: value,
            expected: isMethod
              ? "a gRPC method name (an identifier such as 'SayHello')"
              : "a gRPC service name (dot-separated identifiers such as 'helloworld.Greeter')",
            suggestion: nil), command: spec.fullName)
        return ExitStatus.usage
      }
      if let path = options.selection.file {
        if let extra = options.arguments.first {
          output.usageError(
            .other("give either a policy or '--file', not both (unexpected '\(extra)')"),
            command: spec.fullName)
          return ExitStatus.usage
        }
        let names = options.service.map {
          [GRPCMethodName(service: $0, method: options.method ?? "")]
        }
        switch GRPCFileExport.items(
          path: path, policy: options.selection.policyName, names: names, context: context)
        {
        case .failure(let status): return status.code
        case .success(let (source, items)):
          return finish(
            GRPCExport.export(items), source: source, name: path, isStrict: isStrict,
            engine: engine, json: true, context: context)
        }
      }
    }
    let resolved: PolicyInput.ResolvedPolicy
    switch PolicyInput.resolveSourcedPolicy(
      options.selection, words: options.arguments, context: context)
    {
    case .exit(let status): return status
    case .policy(let policy): resolved = policy
    }
    let policy = resolved.checked.policy
    let locator = ExportLocator(resolved.checked)
    let result =
      engine == .grpc
      ? GRPCExport.export(
        policy, locator: locator, service: options.service, method: options.method)
      : EnvoyExport.export(policy, locator: locator)
    return finish(
      result, source: resolved.source, name: resolved.sourceName, isStrict: isStrict,
      engine: engine, json: options.isJSON, context: context)
  }

  /// Prints the notes as diagnostics, then the document unless `--strict` found notes.
  private static func finish(
    _ result: ExportResult, source: [UInt8], name: String, isStrict: Bool,
    engine: Options.Engine, json: Bool, context: CommandContext
  ) -> Int32 {
    let output = context.output
    let diagnostics = result.diagnostics(isStrict: isStrict)
    PolicyInput.printDiagnostics(diagnostics, bytes: source, name: name, context: context)
    if isStrict, !diagnostics.isEmpty { return ExitStatus.failure }
    if engine == .envoy, !json {
      output.write(YAMLWriter().write(result.document))
    } else {
      output.write(JSONWriter().write(result.document) + "\n")
    }
    return ExitStatus.success
  }
}

/// The policies of a file exported to gRPC, with the records an import left before them.
enum GRPCFileExport {
  /// An exit status, as a failure.
  struct Status: Error {
    var code: Int32
  }

  /// The file's text and one item per policy: the one named `policy`, else every policy
  /// (one method config each).
  static func items(
    path: String, policy name: String?, names: [GRPCMethodName]?, context: CommandContext
  ) -> Result<([UInt8], [GRPCExport.Item]), Status> {
    let output = context.output
    let bytes: [UInt8]
    switch PolicyInput.readFileBytes(path, context: context) {
    case .success(let read): bytes = read
    case .failure(let error):
      error.report(to: output)
      return .failure(Status(code: ExitStatus.usage))
    }
    let analysis = analyze(policyFile: bytes)
    PolicyInput.printDiagnostics(analysis.diagnostics, bytes: bytes, name: path, context: context)
    if analysis.hasErrors { return .failure(Status(code: ExitStatus.failure)) }
    var policies = analysis.checked
    if let name {
      policies = policies.filter { $0.policy.name == name }
      if policies.isEmpty {
        let known = analysis.policies.compactMap(\.name)
        output.error(
          "no policy '\(name)' in '\(path)'"
            + (Suggestion.nearest(to: name, in: known).map { "; did you mean '\($0)'?" } ?? ""))
        return .failure(Status(code: ExitStatus.failure))
      }
    }
    guard !policies.isEmpty else {
      output.error("'\(path)' has no policies")
      return .failure(Status(code: ExitStatus.failure))
    }
    // The analysis's tree and each policy's source: nothing is parsed again.
    let file = analysis.syntax
    let converter = SourceLocationConverter(bytes: bytes)
    func line(_ location: SourceLocation) -> Int {
      converter.location(ofOffset: location.offset).line
    }
    var items: [GRPCExport.Item] = []
    for checked in policies {
      guard let index = file.policies.firstIndex(where: { $0.range == checked.range }) else {
        output.error("internal error: a policy has no declaration")
        return .failure(Status(code: ExitStatus.failure))
      }
      let declaration = file.policies[index]
      let after = index > 0 ? line(file.policies[index - 1].range.end) : 0
      let before = line(declaration.range.start)
      let record = file.comments.filter {
        let commentLine = line($0.range.start)
        return commentLine > after && commentLine < before
      }.compactMap { GRPCRecord.read($0.text) }.last
      items.append(
        GRPCExport.Item(
          policy: checked.policy, locator: ExportLocator(checked), names: names,
          record: record))
    }
    return .success((bytes, items))
  }
}
