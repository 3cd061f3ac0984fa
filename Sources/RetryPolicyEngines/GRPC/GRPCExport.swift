import RetryPolicy

/// `retry-policy export --to grpc`: a gRPC service config (gRFC A6) for policies.
///
/// One method config per policy (for every method, for `--service S [--method M]`, or for
/// the names an imported policy's record keeps) with a `retryPolicy` (or a `hedgingPolicy`
/// under `hedge`), its `timeout` from `within`, `perAttemptRecvTimeout` from `timeout`, and
/// `retryThrottling` from `budget`. Each clause gRPC does not run exactly as `explain`
/// predicts adds a note; gRPC's own semantics are those of Grammar/Engines.md.
package enum GRPCExport {
  /// gRPC clients never make more attempts than this, whatever the config says.
  static let attemptCap = 5
  /// The `maxTokens` a `budget` exports with: retries stop below half of it, 10 tokens, the
  /// floor this package's budget starts with.
  static let throttlingTokens = 20

  /// One policy to export, with what places it.
  package struct Item {
    var policy: CompiledPolicy
    var locator: ExportLocator
    /// The `name` list: from `--service`/`--method`, else the record's, else `[{}]`.
    var names: [GRPCMethodName]?
    /// What an import kept beside the policy, if it was imported.
    var record: GRPCRecord?

    package init(
      policy: CompiledPolicy, locator: ExportLocator, names: [GRPCMethodName]?,
      record: GRPCRecord?
    ) {
      self.policy = policy
      self.locator = locator
      self.names = names
      self.record = record
    }
  }

  /// A service config with one method config per item; `retryThrottling` from the first
  /// item with a `budget`.
  package static func export(_ items: [Item]) -> ExportResult {
    var result = ExportResult(document: .null)
    var configs: [JSONValue] = []
    var throttling: (value: JSONValue, ratio: Double?)?
    var earlier: [(names: [GRPCMethodName], policy: String)] = []
    for item in items {
      let names = methodNames(item)
      if let taken = earlier.first(where: { $0.names.contains(where: names.contains) }) {
        noteNameTaken(item, names: names, by: taken, result: &result)
      }
      earlier.append((names, item.policy.name ?? "<policy>"))
      configs.append(methodConfig(item, names: names, result: &result))
      noteLeftOut(item.policy, locator: item.locator, result: &result)
      guard let value = throttlingValue(item, result: &result) else { continue }
      if let throttling {
        if throttling.ratio != item.policy.budgetRatio {
          result.note(
            "gRPC throttles all methods of a server with one retryThrottling; the first"
              + " policy's budget is written", at: item.locator.policyWide(.budget))
        }
      } else {
        throttling = (value, item.policy.budgetRatio)
      }
    }
    var document = [JSONMember("methodConfig", .array(configs))]
    if let throttling { document.append(JSONMember("retryThrottling", throttling.value)) }
    result.document = .object(document)
    return result
  }

  /// One policy's service config (the form the tests and `.ci/engines-e2e` use).
  package static func export(
    _ policy: CompiledPolicy, locator: ExportLocator, service: String?, method: String?
  ) -> ExportResult {
    let names = service.map { [GRPCMethodName(service: $0, method: method ?? "")] }
    return export([Item(policy: policy, locator: locator, names: names, record: nil)])
  }

  /// Whether `text` is a name gRPC accepts for `--service` (dot-separated identifiers,
  /// `helloworld.Greeter`) or, with `isMethod`, for `--method` (one identifier).
  package static func isValidName(_ text: String, isMethod: Bool) -> Bool {
    let parts = text.split(separator: ".", omittingEmptySubsequences: false)
    guard !parts.isEmpty, !isMethod || parts.count == 1 else { return false }
    return parts.allSatisfy { part in
      guard let first = part.unicodeScalars.first, !("0"..."9").contains(first) else {
        return false
      }
      return part.unicodeScalars.allSatisfy {
        $0.isASCII
          && (("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0)
            || $0 == "_")
      }
    }
  }

  /// The `name` list of an item's method config: `--service`/`--method`, else its record's,
  /// else `[{}]` (every method).
  private static func methodNames(_ item: Item) -> [GRPCMethodName] {
    item.names ?? item.record?.names ?? [GRPCMethodName(service: "", method: "")]
  }

  /// The note of a policy whose method config names a method an earlier one names: gRPC's C
  /// core refuses the whole config (and `import` warns).
  private static func noteNameTaken(
    _ item: Item, names: [GRPCMethodName], by taken: (names: [GRPCMethodName], policy: String),
    result: inout ExportResult
  ) {
    let name = item.policy.name ?? "<policy>"
    guard let shared = names.first(where: taken.names.contains) else { return }
    let fix =
      "; name them on the line before the policy:"
      + " '# \(GRPCRecord.marker) {\"name\": [{\"service\": \"S\", \"method\": \"M\"}]}'"
    if shared.service.isEmpty {
      result.note(
        "policy '\(name)' names no gRPC service, nor does policy '\(taken.policy)': gRPC refuses"
          + " two method configs for every method" + fix, at: item.locator.policy)
    } else {
      let method = shared.method.isEmpty ? shared.service : shared.service + "/" + shared.method
      result.note(
        "policy '\(name)' names '\(method)' as policy '\(taken.policy)' does: gRPC refuses two"
          + " method configs for one method" + fix, at: item.locator.policy)
    }
  }

  private static func methodConfig(
    _ item: Item, names: [GRPCMethodName], result: inout ExportResult
  ) -> JSONValue {
    let policy = item.policy
    let locator = item.locator
    var config = [
      JSONMember(
        "name",
        .array(
          names.map { name in
            var members: [JSONMember] = []
            if !name.service.isEmpty {
              members.append(JSONMember("service", .string(name.service)))
            }
            if !name.method.isEmpty { members.append(JSONMember("method", .string(name.method))) }
            return .object(members)
          }))
    ]
    if let deadline = policy.deadline {
      config.append(JSONMember("timeout", .string(deadline.protobufText)))
      result.note(
        "gRPC's deadline 'timeout' also cancels the attempt in flight at \(deadline.policyText);"
          + " '\(Keyword.within.text)' only stops new retries", at: locator.policyWide(.within))
    }
    let retries = policy.rules.first?.behavior.maxCount
    if policy.hedge == nil, retries == 0 {
      // Nothing is retried: only later rules that would retry are lost.
      for (index, rule) in policy.rules.enumerated().dropFirst() where rule.behavior.maxCount != 0 {
        result.note(
          "gRPC has one retry policy per method and rule 1 makes no retry: rule \(index + 1) is"
            + " left out", at: locator.head(ofRule: index))
      }
      noteAttemptTimeout(policy, locator: locator, result: &result)
      return .object(config)
    }
    let retriesTimeouts = policy.attemptTimeout != nil && policy.hedge == nil
    let codes = statusCodes(
      policy, locator: locator, keepingTimeout: retriesTimeouts, result: &result)
    if let hedge = policy.hedge {
      noteAttemptTimeout(policy, locator: locator, result: &result)
      if !codes.isEmpty || policy.rules.allSatisfy({ $0.behavior.maxCount == 0 }) {
        config.append(
          JSONMember(
            "hedgingPolicy", hedgingPolicy(hedge, codes, item.record, locator, &result)))
      }
    } else if let rule = policy.rules.first {
      let timesOut = retriesTimeouts && rule.matchesAttemptTimeout
      if !timesOut { noteAttemptTimeout(policy, locator: locator, result: &result) }
      if codes.isEmpty, !timesOut {
        result.note(
          "no class of this rule is a gRPC status code; the export has no retry policy",
          at: locator.clause(.on, inRule: 0))
      } else {
        config.append(
          JSONMember(
            "retryPolicy",
            retryPolicy(
              rule, codes, timesOut ? policy.attemptTimeout : nil, item.record, locator,
              &result)))
      }
    }
    return .object(config)
  }

  private static func noteAttemptTimeout(
    _ policy: CompiledPolicy, locator: ExportLocator, result: inout ExportResult
  ) {
    guard let timeout = policy.attemptTimeout else { return }
    result.note(
      "gRPC's per-attempt limit 'perAttemptRecvTimeout' belongs to a retry policy that retries"
        + " its expiry; '\(Keyword.timeout.text) \(timeout.policyText)' is left out",
      at: locator.policyWide(.timeout))
  }

  private static func throttlingValue(_ item: Item, result: inout ExportResult) -> JSONValue? {
    guard let ratio = item.policy.budgetRatio else { return nil }
    var tokens = throttlingTokens
    var milli = Int((min(ratio, 1) * 1000).rounded())
    if let kept = item.record?.throttling, kept.budgetRatio == ratio {
      tokens = kept.maxTokens
      milli = kept.milliRatio
    }
    milli = max(milli, 1)
    let tokenRatio = GRPCRecord.milliText(milli)
    result.note(
      "gRPC throttles with a token bucket: each failed attempt costs a token, each success"
        + " earns \(tokenRatio), and retries stop at half of maxTokens \(tokens); '\(Keyword.budget.text)'"
        + " earns its share per first attempt instead",
      at: item.locator.policyWide(.budget))
    return .object([
      JSONMember("maxTokens", .int(tokens)),
      JSONMember("tokenRatio", .number(tokenRatio)),
    ])
  }

  /// The status codes of every rule's `on`, in order, once each; notes what is left out.
  private static func statusCodes(
    _ policy: CompiledPolicy, locator: ExportLocator, keepingTimeout: Bool,
    result: inout ExportResult
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
          "gRPC retries only the status codes it lists; a rule without '\(Keyword.on.text)' becomes"
            + " '\(Keyword.on.text) unavailable'", at: locator.head(ofRule: index))
        if !codes.contains("UNAVAILABLE") { codes.append("UNAVAILABLE") }
      }
      for name in rule.errorClasses {
        if index == 0, keepingTimeout, name == ErrorClassName.timeout { continue }
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
        "gRPC has no '\(Keyword.except.text)'; it is left out",
        at: locator.clause(.except, inRule: index))
    }
    if let hook = rule.hook {
      result.note(
        "gRPC runs no hooks; '\(Keyword.after.text) \(hook)' is left out",
        at: locator.clause(.after, inRule: index))
    }
    if rule.honorsRetryAfter {
      result.note(
        "gRPC honors the server's pushback (grpc-retry-pushback-ms), not Retry-After",
        at: locator.clause(.honoringRetryAfter, inRule: index))
    }
  }

  /// `maxAttempts` for `retries`: the record's own value when it was above the cap.
  private static func attempts(
    _ retries: Int?, record: GRPCRecord?, at range: SourceRange, _ result: inout ExportResult
  ) -> JSONValue {
    guard let retries else {
      result.note(
        "gRPC clients cap attempts at \(attemptCap); '\(Keyword.retry.text) \(Keyword.forever.text)' becomes \(attemptCap)"
          + " attempts", at: range)
      return .int(attemptCap)
    }
    if retries + 1 >= attemptCap, let kept = record?.maxAttempts {
      return .number(kept)
    }
    if retries + 1 > attemptCap {
      result.note(
        "gRPC clients cap attempts at \(attemptCap); \(retries + 1) attempts become"
          + " \(attemptCap)", at: range)
      return .int(attemptCap)
    }
    return .int(retries + 1)
  }

  private static func hedgingPolicy(
    _ hedge: HedgePolicy, _ codes: [String], _ record: GRPCRecord?, _ locator: ExportLocator,
    _ result: inout ExportResult
  ) -> JSONValue {
    let count = attempts(
      hedge.count, record: record, at: locator.policyWide(.hedge), &result)
    var members = [
      JSONMember("maxAttempts", count),
      JSONMember("hedgingDelay", .string(hedge.delay.protobufText)),
    ]
    if !codes.isEmpty {
      members.append(JSONMember("nonFatalStatusCodes", .array(codes.map { .string($0) })))
    }
    return .object(members)
  }

  private static func retryPolicy(
    _ rule: RetryRule, _ codes: [String], _ attemptTimeout: Duration?, _ record: GRPCRecord?,
    _ locator: ExportLocator, _ result: inout ExportResult
  ) -> JSONValue {
    let count = attempts(
      rule.behavior.maxCount, record: record, at: locator.head(ofRule: 0), &result)
    let retries = min(rule.behavior.maxCount ?? attemptCap, attemptCap - 1)
    let backoff = GRPCBackoff(rule, retries: retries)
    for note in backoff.notes {
      result.note(note.text, at: locator.clause(note.clause, inRule: 0))
    }
    if backoff.isPositive, rule.jitter != GRPCImport.jitter {
      result.note(
        "gRPC multiplies each delay by a uniform factor in [0.8, 1.2] ('\(Keyword.jitter.text) 20%'), not "
          + EngineBackoff.jitterText(rule.jitter),
        at: locator.clause(.jitter, inRule: 0))
    }
    var members = [
      JSONMember("maxAttempts", count),
      JSONMember("initialBackoff", .string(backoff.initial.protobufText)),
      JSONMember("maxBackoff", .string(backoff.maximum.protobufText)),
      JSONMember("backoffMultiplier", .double(backoff.multiplier)),
    ]
    if let attemptTimeout {
      members.append(JSONMember("perAttemptRecvTimeout", .string(attemptTimeout.protobufText)))
      result.note(
        "grpcio (gRPC's C core) honors 'perAttemptRecvTimeout' only on channels with"
          + " 'grpc.experimental.enable_hedging'; without it each attempt runs to the deadline"
          + (codes.isEmpty ? ", and it refuses a retry policy without status codes" : ""),
        at: locator.policyWide(.timeout))
    }
    if !codes.isEmpty || attemptTimeout == nil {
      members.append(JSONMember("retryableStatusCodes", .array(codes.map { .string($0) })))
    }
    return .object(members)
  }
}

/// A rule's delays as gRPC's back-off.
///
/// Retry n waits min(initial × multiplier^(n−1), maxBackoff), then gRPC multiplies it by a uniform factor in [0.8, 1.2]. Exact when the
/// rule's nominal delays for the retries gRPC makes are exactly these and its cap, if any,
/// never cuts a jittered delay.
struct GRPCBackoff {
  var initial: Duration
  var multiplier: Double
  var maximum: Duration
  /// Whether the rule waits at all.
  var isPositive = true
  /// The rule's delay clause, where the notes point.
  var clause: Clause
  /// What changes, one phrase per difference, with the clause it is about.
  var notes: [(clause: Clause, text: String)] = []

  init(_ rule: RetryRule, retries: Int) {
    let count = max(1, retries)
    var uncapped = rule
    uncapped.maxDelay = nil
    let nominal = (1...count).map { uncapped.nominalDelay(beforeRetry: $0) }
    let first = nominal[0]
    clause = Clause.delayClause(of: rule.behavior)
    guard first > .zero else {
      initial = EngineBackoff.smallest
      multiplier = 1
      maximum = EngineBackoff.smallest
      isPositive = false
      notes.append((clause, "a positive back-off is needed, so retries wait up to 1.2ms, not 0s"))
      return
    }
    initial = first
    switch rule.behavior {
    case .exponential(_, _, let factor): multiplier = factor
    case .delayed: multiplier = 1
    default:
      multiplier = nominal.count > 1 ? (nominal[1] / .seconds(1)) / (first / .seconds(1)) : 1
    }
    let largest = nominal.max() ?? first
    maximum = largest
    if let cap = rule.maxDelay {
      if nominal.allSatisfy({ $0 * 1.2 <= cap }) {
        maximum = max(cap, largest)
      } else {
        // gRPC caps before its jitter; this policy caps after it.
        maximum = min(cap, largest)
        notes.append(
          (
            .max,
            "gRPC caps a delay before its jitter, so a retry near '\(Keyword.max.text)' may wait up to 1.2 ×"
              + " maxBackoff \(maximum.policyText)"
          ))
      }
    }
    // The schedule gRPC runs, compared with the rule's own.
    var grpc = first / .seconds(1)
    let cap = maximum / .seconds(1)
    for (index, delay) in nominal.enumerated() {
      let expected = min(grpc, cap)
      let actual = min(delay / .seconds(1), rule.maxDelay.map { $0 / .seconds(1) } ?? .infinity)
      if abs(expected - actual) > max(1e-9, actual * 1e-9) {
        notes.append(
          (
            clause,
            "gRPC's back-off is exponential: retry \(index + 1) waits"
              + " \(GRPCDelays.duration(seconds: expected).policyText), not \(delay.policyText)"
          ))
        break
      }
      grpc *= multiplier
    }
  }
}

extension Clause {
  /// The delay clause that writes `behavior`, where a note about the delays points.
  static func delayClause(of behavior: RepeatBehavior) -> Clause {
    switch behavior {
    case .immediate: .immediately
    case .delayed: .delay
    case .exponential, .linear: .backoff
    case .customTimerDelayed: .delays
    }
  }
}

extension RetryRule {
  /// Whether the rule retries an attempt cut off by the policy's `timeout`.
  var matchesAttemptTimeout: Bool {
    guard let timeoutClass = ErrorClassName.timeout else { return false }
    return (errorClasses.isEmpty || errorClasses.contains(timeoutClass))
      && !excludedClasses.contains(timeoutClass)
  }
}
