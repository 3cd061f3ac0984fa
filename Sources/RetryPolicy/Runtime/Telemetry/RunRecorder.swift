/// A run's side of its ``RetryMetrics``: turns the facts of a run whose attempts follow one
/// another (``RetryRun``, hence `run`, `retrying`, `RetryPolicyHTTP` and the storm
/// simulator), with the time since the run started, into its policy's counters.
///
/// - `attemptStarted` starts an attempt (in flight), `attemptFailed` ends it as a failure;
///   `finished` with success ends the attempt under way as a success, and every `finished`
///   ends the run, with its duration.
/// - `gaveUp` for a reason that is a refusal (``RetryStopReason/circuitOpen``,
///   ``RetryStopReason/budgetExhausted``) counts the attempt the run could not make.
///
/// A retry's attempt that starts at once after a failure (no wait, no hook, no place in line
/// between them) starts at the failure's time: the recorder keeps that reading, and the
/// driver calls ``willWait()`` before any suspension, after which it reads the time again.
///
/// A plain value (no reference, no collection), so that a run carries and drops it for free;
/// a hedged run's attempts overlap and are recorded by ``HedgeRecorder``.
@usableFromInline
package struct RunRecorder: Sendable {
  /// The counters of the run's policy name.
  let counters: PolicyCounters
  /// When the run started on ``MetricsTime``, for a run on the continuous clock: the
  /// recorder then reads the time itself; nil: the driver passes it (its clock's time).
  private let start: UInt64?
  /// When the attempt under way started, in nanoseconds since the run started.
  private var attemptStart: UInt64 = 0
  /// When the last attempt failed, in nanoseconds since the run started, while the next
  /// attempt may start at that time (see ``retryStart(_:)``).
  private var failedAt: UInt64 = 0
  /// Whether ``failedAt`` dates the next attempt's start: no suspension since the failure.
  private var isFailureRecent = false

  /// The recorder of a run of `policy` into `metrics`, whose circuit breaker is `breaker`;
  /// `start` is when the run started on ``MetricsTime`` when the recorder times the run
  /// itself (a run on the continuous clock), nil when the driver passes its clock's time;
  /// `known`, the counters of the policy's name when the caller already found them (without
  /// a breaker).
  init(
    _ metrics: RetryMetrics, policy: borrowing CompiledPolicy, breaker: CircuitBreaker?,
    timingSince start: UInt64? = nil, counters known: PolicyCounters? = nil
  ) {
    counters = Self.counters(in: metrics, policy: policy, breaker: breaker, known: known)
    self.start = start
  }

  /// The counters of `policy`'s name in `metrics` (`known` when the caller found them),
  /// its breaker's state observed for the gauge.
  static func counters(
    in metrics: RetryMetrics, policy: borrowing CompiledPolicy, breaker: CircuitBreaker?,
    known: PolicyCounters? = nil
  ) -> PolicyCounters {
    if let breaker {
      let policyMetrics = metrics.policy(policy)
      policyMetrics.observe(breaker)
      return policyMetrics.counters
    }
    return known ?? metrics.counters(named: policy.name)
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

  /// The time to date the start of the next attempt with, when it is the time of the last
  /// failure (the retry's attempt starts at once), in nanoseconds since the run started; nil
  /// when the driver must read the time (``now(_:)``).
  @inline(__always)
  func retryStart(_ given: Duration?) -> UInt64? {
    guard isFailureRecent, given == nil else { return nil }
    return failedAt
  }

  /// `elapsed` in nanoseconds, as ``now(_:)`` gives it.
  @inline(__always)
  static func nanoseconds(_ elapsed: Duration) -> UInt64 {
    DurationBuckets.nanoseconds(elapsed)
  }

  /// An attempt starts, `elapsed` nanoseconds after the run started.
  @inline(__always)
  mutating func attemptStarted(at elapsed: UInt64) {
    counters.attemptStarted()
    attemptStart = elapsed
    isFailureRecent = false
  }

  /// The attempt under way failed, `elapsed` nanoseconds after the run started.
  @inline(__always)
  mutating func attemptFailed(at elapsed: UInt64) {
    counters.attemptEnded(
      succeeded: false,
      afterNanoseconds: elapsed > attemptStart ? elapsed &- attemptStart : 0)
    failedAt = elapsed
    isFailureRecent = true
  }

  /// The run is about to wait (a delay, a hook, a yield, a place in line): the next attempt
  /// no longer starts at the last failure's time.
  @inline(__always)
  mutating func willWait() {
    isFailureRecent = false
  }

  /// The run stopped for `reason`: a refusal counts the attempt the run could not make.
  func gaveUp(_ reason: RetryStopReason) {
    if let cause = reason.refusalCause { counters.attemptRefused(by: cause) }
  }

  /// The run ended with `outcome`, `elapsed` nanoseconds after it started; a success ends
  /// the attempt under way.
  mutating func finished(_ outcome: RetryOutcome, at elapsed: UInt64) {
    isFailureRecent = false
    if outcome == .succeeded {
      let last = elapsed > attemptStart ? elapsed &- attemptStart : 0
      counters.runSucceeded(lastAttempt: last, run: elapsed)
    } else {
      counters.runEnded(outcome, afterNanoseconds: elapsed)
    }
  }
}

/// A hedged run's side of its ``RetryMetrics``: its attempts overlap, so each is matched by
/// its number, and the driver ends those still in flight when the run ends (see
/// ``endUnfinished(at:)``).
///
/// ``RetryEnvironment/report(_:recording:at:)`` hands it every event of the hedging driver
/// (``record(_:at:)``).
@usableFromInline
package struct HedgeRecorder: Sendable {
  /// The counters of the run's policy name.
  let counters: PolicyCounters
  /// The start of each attempt in flight, by number, in nanoseconds since the run started.
  private var starts: [Int: UInt64] = [:]

  /// The recorder of a hedged run of `policy` into `metrics`, whose circuit breaker is
  /// `breaker`.
  init(_ metrics: RetryMetrics, policy: borrowing CompiledPolicy, breaker: CircuitBreaker?) {
    counters = RunRecorder.counters(in: metrics, policy: policy, breaker: breaker)
  }

  /// Records `event`, reported `elapsed` after the run started.
  mutating func record(_ event: RetryEvent, at elapsed: Duration) {
    let nanoseconds = DurationBuckets.nanoseconds(elapsed)
    switch event {
    case .attemptStarted(let attempt):
      counters.attemptStarted()
      starts[attempt] = nanoseconds
    case .attemptFailed(let attempt, _):
      endAttempt(attempt, succeeded: false, at: nanoseconds)
    case .gaveUp(_, let reason, _):
      if let cause = reason.refusalCause { counters.attemptRefused(by: cause) }
    case .finished(let summary):
      counters.runEnded(summary.outcome, afterNanoseconds: nanoseconds)
    case .retryScheduled, .attemptRefused, .circuitOpened, .circuitHalfOpened, .circuitClosed,
      .attemptShed, .limitChanged, .hedgeNotApplied:
      break
    }
  }

  /// Ends attempt `attempt`, the one that succeeded.
  mutating func attemptSucceeded(_ attempt: Int, at elapsed: Duration) {
    endAttempt(attempt, succeeded: true, at: DurationBuckets.nanoseconds(elapsed))
  }

  /// Ends, as failures, the attempts still in flight when the run ends: they were
  /// cancelled.
  mutating func endUnfinished(at elapsed: Duration) {
    let nanoseconds = DurationBuckets.nanoseconds(elapsed)
    for attempt in starts.keys { endAttempt(attempt, succeeded: false, at: nanoseconds) }
  }

  private mutating func endAttempt(_ attempt: Int, succeeded: Bool, at elapsed: UInt64) {
    guard let start = starts.removeValue(forKey: attempt) else { return }
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
  /// Reports `event` of a hedged run to the observer and, through the run's `recorder`, to
  /// the metrics; `elapsed` is the time since the run started (zero when the run has no
  /// recorder: the caller reads its clock only for one).
  ///
  /// The event is built only when something observes it.
  @inline(__always)
  package func report(
    _ event: @autoclosure () -> RetryEvent, recording recorder: inout HedgeRecorder?,
    at elapsed: Duration
  ) {
    guard isObserved else { return }
    let made = event()
    recorder?.record(made, at: elapsed)
    report(made)
  }
}
