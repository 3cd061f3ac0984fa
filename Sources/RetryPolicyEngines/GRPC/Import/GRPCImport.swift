import RetryPolicy

/// `retry-policy import --from grpc`: a gRPC service config's retry, hedging and throttling
/// settings as a policy file, one `policy` per method config.
///
/// The config is read strictly, by gRFC A6's rules (see Grammar/Engines.md): every value gRPC
/// would refuse is an error naming its JSON path. Each method config becomes a
/// ``CompiledPolicy`` value, printed by the canonical printer (with its comments, no syntax
/// tree between), and the file is read back once to check it; what the language cannot say
/// (the method names, `maxTokens`) is kept in a record comment that `export --to grpc` reads
/// back (``GRPCRecord``).
package enum GRPCImport {
  /// One problem with the config: the JSON path of the value and a lowercase phrase.
  package struct Problem: Error, Equatable, CustomStringConvertible {
    var path: String
    var message: String
    package var description: String { path.isEmpty ? message : path + ": " + message }
  }

  /// Why a config cannot be imported: every error found.
  package struct Failure: Error, Equatable {
    package var problems: [Problem]
    /// Every problem's text, joined with `; ` (the CLI prints each one on its own line).
    var message: String { problems.map(\.description).joined(separator: "; ") }
  }

  /// What an import gives: the policy file and the warnings about it.
  package struct Imported: Equatable {
    /// The policy file, as the canonical printer writes it.
    package var text: String
    /// Values changed on the way: clamped to gRPC's limits, names made valid.
    package var warnings: [Problem]
    /// The compiled policies the text holds, one per method config, in order.
    package var policies: [CompiledPolicy]
  }

  /// gRPC's jitter: every delay is multiplied by a uniform factor in [0.8, 1.2].
  static let jitter = Jitter.proportional(fraction: 0.2)

  /// The policy file for the service config in `bytes`; `header` lines become comments first.
  package static func policyFile(
    _ bytes: [UInt8], header: [String] = []
  ) -> Result<Imported, Failure> {
    let root: JSONValue
    switch GRPCConfigJSON.parse(bytes) {
    case .success(let value): root = value
    case .failure(let failure):
      return .failure(
        Failure(problems: [
          Problem(
            path: "", message: "not valid JSON (\(failure.message), at byte \(failure.offset))")
        ]))
    }
    var reader = ConfigReader()
    guard let members = reader.object(root, at: "") else {
      return .failure(Failure(problems: reader.errors))
    }
    let throttling = reader.throttling(members)
    var policies: [ImportedPolicy] = []
    var usedNames: Set<String> = []
    var seenMethods: [String: String] = [:]
    let configs = reader.member("methodConfig", of: members)
    if let configs {
      if let list = reader.array(configs, at: "methodConfig") {
        for (index, config) in list.enumerated() {
          let path = "methodConfig[\(index)]"
          guard var policy = reader.methodConfig(config, at: path, throttling: throttling) else {
            continue
          }
          for (nameIndex, name) in policy.names.enumerated() {
            let key = name.service + "/" + name.method
            if let first = seenMethods[key] {
              reader.warn(
                "\(path).name[\(nameIndex)]",
                "names the same methods as \(first); gRPC's C core refuses such a config")
            } else {
              seenMethods[key] = "\(path).name[\(nameIndex)]"
            }
          }
          policy.name = PolicyNaming.unique(
            policy.names.first, index: index, used: &usedNames, path: path, reader: &reader)
          policies.append(policy)
        }
      }
    }
    guard reader.errors.isEmpty else { return .failure(Failure(problems: reader.errors)) }
    var trailing: [String] = []
    if configs == nil {
      if throttling != nil {
        reader.warn(
          "retryThrottling",
          "a config without 'methodConfig' retries nothing; its throttling is kept in a comment")
        trailing.append(
          "retryThrottling without methodConfig: no method is retried, so no policy is written")
        trailing.append(GRPCRecord(names: nil, throttling: throttling).comment)
      } else {
        reader.warn("", "no 'methodConfig' and no 'retryThrottling': nothing to import")
      }
    }
    let expected = policies.map { imported -> CompiledPolicy in
      var policy = imported.policy
      policy.name = imported.name
      return policy
    }
    // The values print once, with their comments; the text is checked once, as a whole: it
    // must read back as exactly these policies.
    let text = CanonicalPrinter.print(
      header: header,
      policies: zip(policies, expected).map { imported, policy in
        CanonicalPrinter.CommentedPolicy(
          name: imported.name, comments: imported.comments, policy: policy)
      },
      trailing: trailing)
    let check = analyze(policyFile: text)
    guard !check.hasErrors, check.policies == expected else {
      let reason = check.diagnostics.first.map { "\($0.message)" } ?? "the policies differ"
      return .failure(
        Failure(problems: [
          Problem(
            path: "", message: "internal error: the printed policies do not read back (\(reason))")
        ]))
    }
    return .success(Imported(text: text, warnings: reader.warnings, policies: expected))
  }
}
