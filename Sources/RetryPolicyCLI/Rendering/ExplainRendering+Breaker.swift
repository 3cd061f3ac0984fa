import RetryPolicy
import RetryPolicyEngines

// `explain` for `breaker P% over D min N for D`: the row and the JSON member.

extension ExplainRendering {
  /// The `breaker` row: when the circuit opens, how long it stays open, and the probe.
  ///
  ///     breaker  opens when at least 50% of at least 20 attempts in the last 30s failed;
  ///              stays open 5s, then one attempt probes
  static func breakerText(_ breaker: CircuitBreakerPolicy) -> String {
    let attempts =
      breaker.minimumAttempts == 1 ? "1 attempt" : "\(breaker.minimumAttempts) attempts"
    return "opens when at least \(breaker.failurePercent)% of at least \(attempts) in the last "
      + "\(breaker.window.policyText) failed; stays open \(breaker.openDuration.policyText), "
      + "then one attempt probes"
  }

  /// `"breaker": {"ratio": 0.5, "window": 30.0, "minimum": 20, "open": 5.0}` or null.
  static func breakerJSON(_ breaker: CircuitBreakerPolicy?) -> JSONValue {
    guard let breaker else { return .null }
    return .object([
      JSONMember("ratio", .double(breaker.failureRatio)),
      JSONMember("window", .seconds(breaker.window)),
      JSONMember("minimum", .int(breaker.minimumAttempts)),
      JSONMember("open", .seconds(breaker.openDuration)),
    ])
  }
}
