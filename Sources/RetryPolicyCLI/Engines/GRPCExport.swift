import RetryPolicy

/// `retry-policy export --to grpc`: a gRPC service config (gRFC A6) for one policy.
///
/// One method config (for every method, or for `--service S [--method M]`) with a
/// `retryPolicy` (or a `hedgingPolicy` under `hedge`), its `timeout` from `within`, and
/// `retryThrottling` from `budget`. Each clause gRPC cannot say exactly adds a note.
enum GRPCExport {
  /// gRPC clients never make more attempts than this, whatever the config says.
  static let attemptCap = 5
  /// The `maxTokens` a `budget` exports with: retries stop below half of it, 10 tokens, the
  /// floor this package's budget starts with.
  static let throttlingTokens = 20

  static func export(
    _ policy: CompiledPolicy, locator: ExportLocator, service: String?, method: String?
  ) -> ExportResult {
    var result = ExportResult(document: .null)
    var name: [JSONMember] = []
    if let service { name.append(JSONMember("service", .string(service))) }
    if let method { name.append(JSONMember("method", .string(method))) }
    var config = [JSONMember("name", .array([.object(name)]))]
    if let deadline = policy.deadline {
      config.append(JSONMember("timeout", .string(deadline.protobufText)))
      result.note(
        "gRPC's deadline 'timeout' also cancels the attempt in flight at \(deadline.policyText);"
          + " 'within' only stops new retries", at: locator.policyWide("within"))
    }
    if let timeout = policy.attemptTimeout {
      result.note(
        "a gRPC service config has no per-attempt timeout; 'timeout \(timeout.policyText)' is"
          + " left out", at: locator.policyWide("timeout"))
    }
    let codes = statusCodes(policy, locator: locator, result: &result)
    if let hedge = policy.hedge {
      if !codes.isEmpty || policy.rules.allSatisfy({ $0.behavior.maxCount == 0 }) {
        config.append(
          JSONMember("hedgingPolicy", hedgingPolicy(hedge, codes, locator, &result)))
      }
    } else if let rule = policy.rules.first, rule.behavior.maxCount != 0 {
      if codes.isEmpty {
        result.note(
          "no class of this rule is a gRPC status code; the export has no retry policy",
          at: locator.clause("on", inRule: 0))
      } else {
        config.append(
          JSONMember("retryPolicy", retryPolicy(rule, codes, locator, &result)))
      }
    }
    var document = [JSONMember("methodConfig", .array([.object(config)]))]
    if let ratio = policy.budgetRatio {
      let tokenRatio = (ratio * 1000).rounded() / 1000
      document.append(
        JSONMember(
          "retryThrottling",
          .object([
            JSONMember("maxTokens", .int(throttlingTokens)),
            JSONMember("tokenRatio", .double(max(tokenRatio, 0.001))),
          ])))
      result.note(
        "gRPC throttles with a token bucket: each failed attempt costs a token, each success"
          + " earns \(NumberText.decimal(max(tokenRatio, 0.001))), and retries stop at half of"
          + " maxTokens \(throttlingTokens); 'budget' earns its share per first attempt instead",
        at: locator.policyWide("budget"))
    }
    noteBreaker(policy, locator: locator, result: &result)
    result.document = .object(document)
    return result
  }

  /// The status codes of every rule's `on`, in order, once each; notes what is left out.
  private static func statusCodes(
    _ policy: CompiledPolicy, locator: ExportLocator, result: inout ExportResult
  ) -> [String] {
    var codes: [String] = []
    for (index, rule) in policy.rules.enumerated() {
      if index > 0 {
        result.note(
          "gRPC has one retry policy per method: rule \(index + 1)'s status codes join rule 1's,"
            + " and its count and delays are left out", at: locator.head(ofRule: index))
      }
      if rule.errorClasses.isEmpty {
        result.note(
          "gRPC retries only the status codes it lists; a rule without 'on' becomes"
            + " 'on unavailable'", at: locator.head(ofRule: index))
        if !codes.contains("UNAVAILABLE") { codes.append("UNAVAILABLE") }
      }
      for name in rule.errorClasses {
        guard let code = GRPCStatus.canonical(name) else {
          result.note(
            "'\(name)' is no gRPC status code; it is left out",
            at: locator.className(name, inRule: index))
          continue
        }
        if !codes.contains(code) { codes.append(code) }
      }
      notePerRuleClauses(rule, index: index, locator: locator, result: &result)
    }
    return codes
  }

  private static func notePerRuleClauses(
    _ rule: RetryRule, index: Int, locator: ExportLocator, result: inout ExportResult
  ) {
    if !rule.excludedClasses.isEmpty {
      result.note(
        "gRPC has no 'except'; it is left out", at: locator.clause("except", inRule: index))
    }
    if let hook = rule.hook {
      result.note(
        "gRPC runs no hooks; 'after \(hook)' is left out",
        at: locator.clause("after", inRule: index))
    }
    if rule.honorsRetryAfter {
      result.note(
        "gRPC honors the server's pushback (grpc-retry-pushback-ms), not Retry-After",
        at: locator.clause("honoring retry-after", inRule: index))
    }
  }

  private static func attempts(
    _ retries: Int?, at range: SourceRange, _ result: inout ExportResult
  ) -> Int {
    guard let retries else {
      result.note(
        "gRPC clients cap attempts at \(attemptCap); 'retry forever' becomes \(attemptCap)"
          + " attempts", at: range)
      return attemptCap
    }
    if retries + 1 > attemptCap {
      result.note(
        "gRPC clients cap attempts at \(attemptCap); \(retries + 1) attempts become"
          + " \(attemptCap)", at: range)
      return attemptCap
    }
    return retries + 1
  }

  private static func hedgingPolicy(
    _ hedge: HedgePolicy, _ codes: [String], _ locator: ExportLocator,
    _ result: inout ExportResult
  ) -> JSONValue {
    let count = attempts(hedge.count, at: locator.policyWide("hedge"), &result)
    var members = [
      JSONMember("maxAttempts", .int(count)),
      JSONMember("hedgingDelay", .string(hedge.delay.protobufText)),
    ]
    if !codes.isEmpty {
      members.append(JSONMember("nonFatalStatusCodes", .array(codes.map { .string($0) })))
    }
    return .object(members)
  }

  private static func retryPolicy(
    _ rule: RetryRule, _ codes: [String], _ locator: ExportLocator,
    _ result: inout ExportResult
  ) -> JSONValue {
    let count = attempts(rule.behavior.maxCount, at: locator.head(ofRule: 0), &result)
    let backoff = EngineBackoff(rule, attempts: count)
    if let approximation = backoff.approximation {
      result.note("gRPC's back-off is exponential: \(approximation)", at: backoff.range(locator))
    }
    if backoff.isPositive, rule.jitter != .full {
      result.note(
        "gRPC always uses full jitter: each delay is uniform in [0, d], not"
          + " \(EngineBackoff.jitterText(rule.jitter))", at: locator.clause("jitter", inRule: 0))
    }
    return .object([
      JSONMember("maxAttempts", .int(count)),
      JSONMember("initialBackoff", .string(backoff.initial.protobufText)),
      JSONMember("maxBackoff", .string(backoff.maximum.protobufText)),
      JSONMember("backoffMultiplier", .double(backoff.multiplier)),
      JSONMember("retryableStatusCodes", .array(codes.map { .string($0) })),
    ])
  }
}
