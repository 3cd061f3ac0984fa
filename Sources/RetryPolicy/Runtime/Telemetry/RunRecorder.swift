/// A run's side of its ``RetryMetrics``: turns the run's events, as the driver reports them
/// with the time since the run started, into its policy's counters.
///
/// The one place where metrics are derived from a run: ``RetryEnvironment/report(_:recording:at:)``
/// hands every event of every driver (``RetryRun``, hence `run`, `retrying`, `RetryPolicyHTTP`
/// and the storm simulator, and the hedging driver) to ``record(_:at:)``.
///
/// - `attemptStarted` starts an attempt (in flight), `attemptFailed` ends it as a failure;
///   `finished` with success ends the attempt under way as a success, and every `finished`
///   ends the run, with its duration.
/// - `gaveUp` for a reason that is a refusal (``RetryStopReason/circuitOpen``,
///   ``RetryStopReason/budgetExhausted``) counts the attempt the run could not make.
/// - In a hedged run, attempts overlap: each is matched by its number, and the driver ends
///   those still in flight when the run ends (see ``endUnfinished(at:)``).
@usableFromInline
package struct RunRecorder: Sendable {
  /// The counters of the run's policy name.
  let counters: PolicyCounters
  /// When the run started on ``MetricsTime``, for a run on the continuous clock: the
  /// recorder then reads the time itself; nil: the driver passes it (its clock's time).
  private let start: UInt64?
  /// When the attempt under way started, in nanoseconds since the run started.
  private var attemptStart: UInt64 = 0
  /// For a hedged run, the start of each attempt in flight, by number.
  private var starts: [Int: UInt64] = [:]
  private let hasOverlappingAttempts: Bool

  /// The recorder of a run of `policy` into `metrics`, whose circuit breaker is `breaker`;
  /// `start` is when the run started on ``MetricsTime`` when the recorder times the run
  /// itself (a run on the continuous clock), nil when the driver passes its clock's time;
  /// `known`, the counters of the policy's name when the caller already found them (without
  /// a breaker).
  init(
    _ metrics: RetryMetrics, policy: borrowing CompiledPolicy, breaker: CircuitBreaker?,
    hasOverlappingAttempts: Bool = false, timingSince start: UInt64? = nil,
    counters known: PolicyCounters? = nil
  ) {
    if let breaker {
      let policyMetrics = metrics.policy(policy)
      policyMetrics.observe(breaker)
      counters = policyMetrics.counters
    } else {
      counters = known ?? metrics.counters(named: policy.name)
    }
    self.hasOverlappingAttempts = hasOverlappingAttempts
    self.start = start
  }

  /// The time since the run started to date a record with, in nanoseconds: `given` (a
  /// driver's virtual time) when there is one, else the recorder's own reading; nil when
  /// the driver must read its clock (``nanoseconds(_:)`` of its elapsed time).
  ///
  /// Not a closure over the driver's clock: a closure of a method of the driver would copy
  /// the whole driver on every record.
  @inline(__always)
  func now(_ given: Duration?) -> UInt64? {
    if let given { return DurationBuckets.nanoseconds(given) }
    if let start { return MetricsTime.since(start) }
    return nil
  }

  /// `elapsed` in nanoseconds, as ``now(_:)`` gives it.
  @inline(__always)
  static func nanoseconds(_ elapsed: Duration) -> UInt64 {
    DurationBuckets.nanoseconds(elapsed)
  }

  /// Attempt `attempt` starts, `elapsed` nanoseconds after the run started.
  mutating func attemptStarted(_ attempt: Int, at elapsed: UInt64) {
    counters.attemptStarted()
    if hasOverlappingAttempts { starts[attempt] = elapsed } else { attemptStart = elapsed }
  }

  /// Attempt `attempt` failed.
  mutating func attemptFailed(_ attempt: Int, at elapsed: UInt64) {
    endAttempt(attempt, succeeded: false, at: elapsed)
  }

  /// The run stopped for `reason`: a refusal counts the attempt the run could not make.
  func gaveUp(_ reason: RetryStopReason) {
    if let cause = reason.refusalCause { counters.attemptRefused(by: cause) }
  }

  /// The run ended with `outcome` after `attempts` attempts; a success ends the attempt
  /// under way.
  mutating func finished(_ outcome: RetryOutcome, attempts: Int, at elapsed: UInt64) {
    if outcome == .succeeded, !hasOverlappingAttempts {
      endAttempt(attempts, succeeded: true, at: elapsed)
    }
    counters.runEnded(outcome, afterNanoseconds: elapsed)
  }

  /// Records `event`, reported `elapsed` after the run started.
  mutating func record(_ event: RetryEvent, at elapsed: Duration) {
    let nanoseconds = DurationBuckets.nanoseconds(elapsed)
    switch event {
    case .attemptStarted(let attempt):
      attemptStarted(attempt, at: nanoseconds)
    case .attemptFailed(let attempt, _):
      attemptFailed(attempt, at: nanoseconds)
    case .gaveUp(_, let reason, _):
      gaveUp(reason)
    case .finished(let summary):
      finished(summary.outcome, attempts: summary.attempts, at: nanoseconds)
    case .retryScheduled, .attemptRefused, .circuitOpened, .circuitHalfOpened, .circuitClosed,
      .attemptShed, .limitChanged, .hedgeNotApplied:
      break
    }
  }

  /// Ends attempt `attempt` of a hedged run, the one that succeeded.
  mutating func attemptSucceeded(_ attempt: Int, at elapsed: Duration) {
    endAttempt(attempt, succeeded: true, at: DurationBuckets.nanoseconds(elapsed))
  }

  /// Ends, as failures, the attempts of a hedged run still in flight when it ends: they were
  /// cancelled.
  mutating func endUnfinished(at elapsed: Duration) {
    let nanoseconds = DurationBuckets.nanoseconds(elapsed)
    for attempt in starts.keys { endAttempt(attempt, succeeded: false, at: nanoseconds) }
  }

  private mutating func endAttempt(_ attempt: Int, succeeded: Bool, at elapsed: UInt64) {
    let start: UInt64
    if hasOverlappingAttempts {
      guard let started = starts.removeValue(forKey: attempt) else { return }
      start = started
    } else {
      start = attemptStart
    }
    counters.attemptEnded(
      succeeded: succeeded, afterNanoseconds: elapsed > start ? elapsed &- start : 0)
  }
}

extension RetryStopReason {
  /// The refusal a run that stops for this reason counts: the attempt it could not make.
  var refusalCause: RetryMetrics.RefusalCause? {
    switch self {
    case .circuitOpen: .breaker
    case .budgetExhausted: .budget
    case .throttled: .throttle
    case .limitExceeded: .limit
    case .rateLimited: .rate
    case .retriesExhausted, .errorNotMatched, .deadlineExceeded, .cancelled, .hookFailed,
      .hedgeLimitReached, .retriesRefused:
      nil
    }
  }
}

extension RetryEnvironment {
  /// Reports `event` of a run to the observer and, through the run's `recorder`, to the
  /// metrics; `elapsed` is the time since the run started (zero when the run has no
  /// recorder: the caller reads its clock only for one).
  ///
  /// The event is built only when something observes it.
  @inline(__always)
  package func report(
    _ event: @autoclosure () -> RetryEvent, recording recorder: inout RunRecorder?,
    at elapsed: Duration
  ) {
    guard isObserved else { return }
    let made = event()
    recorder?.record(made, at: elapsed)
    report(made)
  }
}
