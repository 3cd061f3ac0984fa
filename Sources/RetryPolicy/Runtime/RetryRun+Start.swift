// The parts of a run's start that read the environment: its shared state, its metrics, its
// stopwatch, and the report that a hedged policy is not raced.

extension RetryRun {
  /// Starts a run whose shared state (budget, breaker, limit, throttle, rate) is found in
  /// `environment` with one look-up.
  @usableFromInline
  init(
    policy: borrowing CompiledPolicy, sharing environment: borrowing RetryEnvironment,
    attempts: Int, permit: CircuitBreakerStateMachine.Permit
  ) {
    let state = environment.sharedState(for: policy)
    self.init(
      policy: policy, random: environment.random, budget: state.budget, breaker: state.breaker,
      attempts: attempts, permit: permit, asksShedding: false)
    shedding = RunShedding(policy: policy, state: state)
  }

  /// Reports that `run` or `retrying` does not apply the policy's `hedge`.
  @usableFromInline
  static func reportNotHedging(_ hedge: HedgePolicy, in environment: borrowing RetryEnvironment) {
    environment.report(.hedgeNotApplied(hedge))
  }

  /// Records the run into `metrics` (the storm simulator's runs too, on its virtual time);
  /// `start`, when given, is when the run started on ``MetricsTime``, which the recorder
  /// then reads itself.
  @usableFromInline
  package mutating func record(
    into metrics: RetryMetrics, policy: borrowing CompiledPolicy, timingSince start: UInt64? = nil
  ) {
    recorder = RunRecorder(metrics, policy: policy, breaker: circuit?.breaker, timingSince: start)
  }

  /// Starts measuring the run's elapsed time on `clock`, for `within` or an observer.
  @usableFromInline
  mutating func startStopwatch<C: Clock<Duration>>(on clock: C, at start: C.Instant? = nil) {
    stopwatch = Stopwatch(clock: clock, start: start ?? clock.now)
  }
}
