import RetryPolicy

extension GRPCExport {
  /// Notes each policy-wide clause the service config has no field for: it is left out.
  ///
  /// The `switch` has a case for every clause, so that a new clause is placed here: in the
  /// method config, in `retryThrottling`, or left out with a note.
  static func noteLeftOut(
    _ policy: CompiledPolicy, locator: ExportLocator, result: inout ExportResult
  ) {
    for clause in Clause.allCases {
      switch clause {
      case .breaker:
        guard policy.breaker != nil else { continue }
        result.note(
          "gRPC's service config has no circuit breaker: 'breaker' is left out; keep a"
            + " CircuitBreaker in the client",
          at: locator.policyWide(.breaker))
      case .limit:
        guard policy.limit != nil else { continue }
        result.note(
          "gRPC's service config has no concurrency limit: 'limit' is left out; keep a"
            + " ConcurrencyLimiter in the client",
          at: locator.policyWide(.limit))
      case .throttle:
        guard policy.throttle != nil else { continue }
        result.note(
          "gRPC's service config has no adaptive throttling ('retryThrottling' limits retries"
            + " only): 'throttle' is left out; keep an AdaptiveThrottle in the client",
          at: locator.policyWide(.throttle))
      case .rate:
        guard policy.rate != nil else { continue }
        result.note(
          "gRPC's service config has no rate limit: 'rate' is left out; keep a RateLimiter in"
            + " the client",
          at: locator.policyWide(.rate))
      // The method config (`methodConfig`): its timeout, retry or hedging policy.
      case .within, .timeout, .hedge: continue
      // `retryThrottling` (`throttlingValue`).
      case .budget: continue
      // Each rule's clauses: the retry policy (`retryPolicy`, `statusCodes`).
      case .on, .except, .immediately, .delay, .backoff, .delays, .jitter, .max, .after,
        .honoringRetryAfter:
        continue
      }
    }
  }
}
