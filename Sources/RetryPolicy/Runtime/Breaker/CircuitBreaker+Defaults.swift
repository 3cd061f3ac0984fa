extension CircuitBreaker {
  /// The process-wide breakers of policies run without one, by policy value.
  private static let byPolicy = ProcessWideTable<ClockedPolicy, CircuitBreaker>()

  /// The breaker a run of `policy` on `clock` uses when its environment gives none.
  ///
  /// One per policy value and clock for the life of the process, made on first use on that clock
  /// (the system's monotonic clock for the continuous clock). A test on a manual clock and a
  /// run on the real clock never share one.
  package static func standard(
    for policy: CompiledPolicy, clock: any Clock<Duration>
  ) -> CircuitBreaker {
    let isContinuous = clock is ContinuousClock
    let key = ClockedPolicy(policy: policy, clock: isContinuous ? nil : ClockIdentity(clock))
    return byPolicy.value(for: key) {
      isContinuous ? CircuitBreaker() : CircuitBreaker(clock: clock)
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

/// A policy value and the clock of the runs that share its process-wide breaker (nil: the
/// continuous clock).
struct ClockedPolicy: Hashable, Sendable {
  var policy: CompiledPolicy
  var clock: ClockIdentity?
}
