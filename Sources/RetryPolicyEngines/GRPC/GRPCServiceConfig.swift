import RetryPolicy

/// gRPC service configs (gRFC A6): a policy as a method config, and a config's retry
/// settings as policies.
///
/// An export writes one method config with a `retryPolicy` (or a `hedgingPolicy` under
/// `hedge`), its `timeout` from `within`, `perAttemptRecvTimeout` from `timeout`, and
/// `retryThrottling` from `budget`. gRPC multiplies each delay by a uniform factor in
/// [0.8, 1.2]: `jitter 20%` is exact, any other jitter warns. Grammar/Engines.md describes
/// each mapping.
///
///     let exported = try GRPCServiceConfig.export(
///       policy: "retry 3 on unavailable backoff 100ms jitter 20% max 1s",
///       service: "helloworld.Greeter")
///     print(exported.json)   // hand it to the channel as its service config
public enum GRPCServiceConfig {
  /// A service or method name gRPC would not accept.
  public struct InvalidNameError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The name as given.
    public var name: String
    /// Why it was refused, as `retry-policy export` says it.
    public var description: String
  }

  /// A service config gRPC would refuse, or a document that is no service config.
  public struct ImportError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Every problem found, each as `JSON.PATH: MESSAGE` (the path is empty for the whole
    /// document).
    public var problems: [String]
    /// The problems, one a line.
    public var description: String { problems.joined(separator: "\n") }
  }

  /// What an import gives: the policies as text and as values, and what changed on the way.
  public struct Imported: Sendable, Equatable {
    /// A policy file, one `policy` per method config, as the canonical printer writes it;
    /// what the language cannot say (method names, `maxTokens`) is in a record comment that
    /// `retry-policy export --to grpc --file` reads back.
    public var text: String
    /// The compiled policies of `text`, one per method config, in order.
    public var policies: [CompiledPolicy]
    /// Values changed on the way (clamped to gRPC's limits, names made valid), each as
    /// `JSON.PATH: MESSAGE`.
    public var warnings: [String]
  }

  /// Exports the one policy of `text` as a service config with one method config, as
  /// `retry-policy export --to grpc` does.
  ///
  /// - Parameters:
  ///   - text: the text of one policy, as ``RetryPolicy/compile(policy:vocabulary:)`` reads
  ///     it.
  ///   - service: the service the method config names (dot-separated identifiers such as
  ///     `helloworld.Greeter`); nil for every method of every service.
  ///   - method: the method of `service` (an identifier such as `SayHello`); nil for every
  ///     method of the service.
  /// - Returns: the document (``EngineDocument/json``) and a warning for each clause gRPC
  ///   cannot express exactly.
  /// - Throws: ``RetryPolicy/PolicyCompileError`` when the text has an error,
  ///   ``InvalidNameError`` for a name gRPC would not accept, or for a method without a
  ///   service.
  public static func export(
    policy text: String, service: String? = nil, method: String? = nil
  ) throws -> EngineDocument {
    if let service, !GRPCExport.isValidName(service, isMethod: false) {
      throw InvalidNameError(
        name: service,
        description:
          "a gRPC service name (dot-separated identifiers such as 'helloworld.Greeter')")
    }
    if let method {
      guard service != nil else {
        throw InvalidNameError(name: method, description: "a method needs a service")
      }
      guard GRPCExport.isValidName(method, isMethod: true) else {
        throw InvalidNameError(
          name: method, description: "a gRPC method name (an identifier such as 'SayHello')")
      }
    }
    let checked = try checkedPolicy(text)
    return EngineDocument(
      GRPCExport.export(
        checked.policy, locator: ExportLocator(checked), service: service, method: method))
  }

  /// Imports the retry, hedging and throttling settings of the service config in `json`, as
  /// `retry-policy import --from grpc` does.
  ///
  /// The config is read by gRFC A6's rules: every value gRPC would refuse is a problem
  /// naming its JSON path.
  ///
  /// - Parameters:
  ///   - json: the service config's bytes (UTF-8 JSON).
  ///   - header: lines written first, each as a comment.
  /// - Throws: ``ImportError`` with every problem found.
  public static func importPolicies(
    fromJSON json: [UInt8], header: [String] = []
  ) throws(ImportError) -> Imported {
    switch GRPCImport.policyFile(json, header: header) {
    case .success(let imported):
      return Imported(
        text: imported.text, policies: imported.policies,
        warnings: imported.warnings.map(\.description))
    case .failure(let failure):
      throw ImportError(problems: failure.problems.map(\.description))
    }
  }
}
