import RetryPolicy
import RetryPolicyEngines

// `explain` for `hedge N after D`: the timeline of attempt starts, and the JSON member.

extension ExplainRendering {
  /// The `hedge` row: the timeline of attempt starts while none has finished.
  ///
  ///     hedge  2 extra attempts: attempt 1 at 0s, 2 at 100ms, 3 at 200ms while none has
  ///            finished; a failure a rule retries starts the next at once; 3 attempts at most
  static func hedgeText(_ hedge: HedgePolicy) -> String {
    var starts: [String] = []
    var elapsed = Duration.zero
    for attempt in 1...(hedge.count + 1) {
      starts.append(attempt == 1 ? "attempt 1 at 0s" : "\(attempt) at \(elapsed.policyText)")
      elapsed = elapsed.addingClamped(hedge.delay)
    }
    let extra = hedge.count == 1 ? "1 extra attempt" : "\(hedge.count) extra attempts"
    return "\(extra) (concurrent): " + starts.joined(separator: ", ")
      + " while none has finished; a failure a rule retries starts the next at once;"
      + " the first success wins and the others are cancelled; \(hedge.count + 1) attempts at most"
  }

  /// `"hedge": {"count": N, "after": seconds}` or null.
  static func hedgeJSON(_ hedge: HedgePolicy?) -> JSONValue {
    guard let hedge else { return .null }
    return .object([
      JSONMember("count", .int(hedge.count)),
      JSONMember("after", .seconds(hedge.delay)),
    ])
  }
}
