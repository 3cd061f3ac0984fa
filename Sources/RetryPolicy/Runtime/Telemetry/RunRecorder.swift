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
  let counters: PolicyMetrics
  /// When the attempt under way started: the time since the run started.
  private var attemptStart: Duration = .zeroInline
  /// For a hedged run, the start of each attempt in flight, by number.
  private var starts: [Int: Duration] = [:]
  private let hasOverlappingAttempts: Bool

  /// The recorder of a run of `policy` into `metrics`, whose circuit breaker is `breaker`.
  init(
    _ metrics: RetryMetrics, policy: borrowing CompiledPolicy, breaker: CircuitBreaker?,
    hasOverlappingAttempts: Bool = false
  ) {
    counters = metrics.policy(policy)
    if let breaker { counters.observe(breaker) }
    self.hasOverlappingAttempts = hasOverlappingAttempts
  }

  /// Records `event`, reported `elapsed` after the run started.
  mutating func record(_ event: RetryEvent, at elapsed: Duration) {
    switch event {
    case .attemptStarted(let attempt):
      counters.attemptStarted()
      if hasOverlappingAttempts { starts[attempt] = elapsed } else { attemptStart = elapsed }
    case .attemptFailed(let attempt, _):
      endAttempt(attempt, succeeded: false, at: elapsed)
    case .gaveUp(_, let reason, _):
      if let cause = reason.refusalCause { counters.attemptRefused(by: cause) }
    case .finished(let summary):
      if summary.outcome == .succeeded, !hasOverlappingAttempts {
        endAttempt(summary.attempts, succeeded: true, at: elapsed)
      }
      counters.runEnded(summary.outcome, after: elapsed)
    case .retryScheduled, .attemptRefused, .circuitOpened, .circuitHalfOpened, .circuitClosed,
      .attemptShed, .limitChanged, .hedgeNotApplied:
      break
    }
  }

  /// Ends attempt `attempt` of a hedged run, the one that succeeded.
  mutating func attemptSucceeded(_ attempt: Int, at elapsed: Duration) {
    endAttempt(attempt, succeeded: true, at: elapsed)
  }

  /// Ends, as failures, the attempts of a hedged run still in flight when it ends: they were
  /// cancelled.
  mutating func endUnfinished(at elapsed: Duration) {
    for attempt in starts.keys { endAttempt(attempt, succeeded: false, at: elapsed) }
  }

  private mutating func endAttempt(_ attempt: Int, succeeded: Bool, at elapsed: Duration) {
    let start: Duration
    if hasOverlappingAttempts {
      guard let started = starts.removeValue(forKey: attempt) else { return }
      start = started
    } else {
      start = attemptStart
    }
    counters.attemptEnded(succeeded: succeeded, after: elapsed.subtractingClamped(start))
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
      .hedgeLimitReached, .notIdempotent:
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
