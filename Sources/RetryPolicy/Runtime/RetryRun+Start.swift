// The parts of a run's start that read the environment (its shared state, its metrics, its
// stopwatch, the report that a hedged policy is not raced), the readings of its time, the
// small steps of its waits (the waited total, a hook, a cancelled sequence's end), and the
// small types a run keeps.

extension RetryRun {
  /// Starts a run whose shared state (budget, breaker, limit, throttle, rate) is found in
  /// `environment` with one look-up.
  @usableFromInline
  init(
    policy: borrowing CompiledPolicy, sharing environment: borrowing RetryEnvironment,
    attempts: Int, permit: CircuitBreakerStateMachine.Permit
  ) {
    guard policy.hasSharedState else {
      // No budget, breaker or shedding: nothing to look up, nothing to keep.
      self.init(
        policy: policy, random: environment.random, budget: nil, attempts: attempts,
        permit: permit, asksShedding: false)
      return
    }
    let state = environment.sharedState(for: policy)
    self.init(
      policy: policy, random: environment.random, budget: state.budget, breaker: state.breaker,
      attempts: attempts, permit: permit, asksShedding: false)
    shedding = RunShedding(policy: policy, state: state)
    // `run` asked the shedding stages of the first attempt itself (``SheddingGate``): the
    // driver spends the random number it would have drawn for it, so that the retries'
    // jitter is the same whether `run` or the driver made the first attempt. (The system
    // generator's draws are never repeated, and the throttle does not draw from it.)
    if attempts > 0, shedding != nil, !AdaptiveThrottle.isSystem(random.base) {
      _ = random.next()
    }
  }

  /// Reports that `run` or `retrying` does not apply the policy's `hedge`.
  @usableFromInline
  static func reportNotHedging(_ hedge: HedgePolicy, in environment: borrowing RetryEnvironment) {
    environment.report(.hedgeNotApplied(hedge))
  }

  /// Records the run into `metrics` (the storm simulator's runs too, on its virtual time);
  /// `start`, when given, is when the run started on ``MetricsTime``, which the recorder
  /// then reads itself; `counters`, those of the policy's name when `run` already found them.
  @usableFromInline
  package mutating func record(
    into metrics: RetryMetrics, policy: borrowing CompiledPolicy, timingSince start: UInt64? = nil,
    counters: PolicyCounters? = nil
  ) {
    recorder = RunRecorder(
      metrics, policy: policy, breaker: circuit?.breaker, timingSince: start, counters: counters)
    isRecording = true
  }

  /// Counts the tokens of `rate` on `clock`, the run's.
  @usableFromInline
  mutating func bindRate<C: Clock<Duration>>(to clock: C) {
    shedding?.bindRate(to: clock)
  }

  /// The time to date a record of the recorder with (see ``RunRecorder/now(_:)``).
  ///
  /// Static, and given the run's parts: a method of the run called from a mutating method
  /// would take a copy of the whole run.
  @inline(__always)
  static func recordingTime(
    _ given: Duration?, _ recorder: RunRecorder?,
    _ stopwatch: (any RunStopwatch)?
  ) -> UInt64 {
    if let now = recorder?.now(given) { return now }
    return RunRecorder.nanoseconds(stopwatch?.elapsed() ?? .zeroInline)
  }

  /// The time `stopwatch` measured since `start`, or zero without a stopwatch; static for
  /// the reason ``recordingTime(_:_:_:)`` is.
  @inline(__always)
  static func elapsed(
    _ stopwatch: (any RunStopwatch)?, since start: Duration
  ) -> Duration {
    guard let elapsed = stopwatch?.elapsed() else { return .zeroInline }
    return elapsed.subtractingClamped(start)
  }

  /// Counts the part of a wait of `delay` that passed, `remaining` being left of it.
  @usableFromInline
  mutating func addWaited(_ delay: Duration, remaining: Duration = .zeroInline) {
    let waited = remaining.isPositive ? delay.subtractingClamped(remaining) : delay
    totalDelay = totalDelay.addingClamped(waited.isPositive ? waited : .zeroInline)
  }

  /// Runs a retry's hook; a failure of the hook ends the run.
  @usableFromInline
  nonisolated(nonsending) mutating func run(
    _ hook: @Sendable (RetryHookContext) async throws -> Void, after error: any Error,
    in environment: RetryEnvironment
  ) async throws {
    do {
      try await hook(RetryHookContext(error: error, attempt: machine.attempts))
    } catch {
      throw stop(Task.isCancelled ? .cancelled : .hookFailed, error, in: environment)
    }
  }

  /// Ends the run as cancelled, for a sequence whose subscription ended because its task was
  /// cancelled; returns the `CancellationError` to throw.
  package mutating func stopCancelled(in environment: borrowing RetryEnvironment) -> any Error {
    stop(.cancelled, CancellationError(), in: environment)
  }

  /// Starts measuring the run's elapsed time on `clock`, for `within` or an observer.
  @usableFromInline
  mutating func startStopwatch<C: Clock<Duration>>(on clock: C, at start: C.Instant? = nil) {
    stopwatch = Stopwatch(clock: clock, start: start ?? clock.now)
  }
}

/// The stages a run's policy has (``RetryRun``'s flags).
struct Stages: OptionSet, Sendable {
  let rawValue: UInt8

  /// `breaker`.
  static let breaker = Stages(rawValue: 1)
  /// `throttle`, `rate` or `limit`.
  static let shedding = Stages(rawValue: 2)
  /// `budget`.
  static let budget = Stages(rawValue: 4)
  /// `within`.
  static let deadline = Stages(rawValue: 8)

  init(rawValue: UInt8) {
    self.rawValue = rawValue
  }

  /// The stages of `policy`.
  init(policy: borrowing CompiledPolicy) {
    var stages: Stages = []
    if policy.breaker != nil { stages.insert(.breaker) }
    if policy.throttle != nil || policy.rate != nil || policy.limit != nil {
      stages.insert(.shedding)
    }
    if policy.budgetRatio != nil { stages.insert(.budget) }
    if policy.deadline != nil { stages.insert(.deadline) }
    self = stages
  }

  /// Whether a failed attempt's error is kept for the checks at the next attempt's start,
  /// which only `within`, a budget and a breaker make.
  var keepsPendingError: Bool { !isDisjoint(with: [.breaker, .budget, .deadline]) }
}

/// A random source of any type, as one concrete type: the state machine's draws are
/// specialized for it, and only ``next()`` is a dynamic call.
struct RandomSource: RandomNumberGenerator, Sendable {
  var base: any RandomNumberGenerator & Sendable

  @inline(__always)
  mutating func next() -> UInt64 {
    base.next()
  }
}

/// The time since a run started, on the run's clock.
protocol RunStopwatch: Sendable {
  /// The time since the start.
  func elapsed() -> Duration
}

/// A ``RunStopwatch`` on a clock of type `C`: its instants never leave it.
struct Stopwatch<C: Clock<Duration>>: RunStopwatch {
  let clock: C
  let start: C.Instant

  func elapsed() -> Duration {
    start.duration(to: clock.now)
  }
}

/// A ``RetryRefusal`` behind one reference, as a run keeps it (immutable: copies of the run
/// may share it).
final class RefusalBox: Sendable {
  let value: RetryRefusal

  init(_ value: RetryRefusal) {
    self.value = value
  }
}

/// What a run waits for before its next attempt: a delay on its clock, then a hook; with
/// neither, a yield of the thread.
@usableFromInline
package struct RetryWait: Sendable {
  /// The delay to sleep first; zero for none.
  @usableFromInline package var delay: Duration
  /// The hook to run after the delay.
  @usableFromInline package var hook: (@Sendable (RetryHookContext) async throws -> Void)?
}
