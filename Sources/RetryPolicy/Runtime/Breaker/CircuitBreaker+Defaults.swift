extension CircuitBreaker {
  /// The process-wide breakers of policies run without one, by policy value.
  private static let byPolicy = ProcessWideTable<CircuitBreaker>()

  /// The breaker a run of `policy` uses when its environment gives none: one per policy value
  /// for the life of the process, made on first use on `clock` (the system's monotonic clock
  /// when it is the continuous clock).
  package static func standard(
    for policy: CompiledPolicy, clock: any Clock<Duration>
  ) -> CircuitBreaker {
    byPolicy.value(for: policy) {
      clock is ContinuousClock ? CircuitBreaker() : CircuitBreaker(clock: clock)
    }
  }
}

extension RetryEnvironment {
  /// The breaker a run of `policy` in this environment uses: none without `breaker P%`;
  /// else the breaker bound to the policy's name, the environment's breaker, or the default.
  @usableFromInline
  package func breaker(for policy: borrowing CompiledPolicy) -> CircuitBreaker? {
    guard policy.breaker != nil else { return nil }
    if !breakers.isEmpty, let name = policy.name, let bound = breakers[name] { return bound }
    return breaker ?? CircuitBreaker.standard(for: copy policy, clock: clock)
  }
}
