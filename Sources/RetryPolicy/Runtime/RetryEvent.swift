/// Something that happened during a run of a policy, as seen by an observer.
///
/// Attempts are counted from 1. For one run the events come in this order: for each attempt,
/// ``attemptStarted(attempt:)`` and, if it fails, ``attemptFailed(attempt:error:)`` followed by
/// either ``retryScheduled(attempt:rule:delay:)`` or ``gaveUp(attempt:reason:error:)``; last,
/// ``finished(_:)`` with the run's summary. A scheduled retry is followed by the next
/// attempt's `attemptStarted`, or by `gaveUp` with the same attempt number when the task is
/// cancelled during the wait or the hook, the hook fails, the `within` deadline has passed or
/// the budget is empty by the time the retry's attempt would start. Under `breaker`, an
/// attempt the circuit refuses is reported by ``attemptRefused(attempt:remaining:cause:)``
/// instead of `attemptStarted`, then `gaveUp` ends the run; a change of the circuit's state
/// comes right after the `attemptStarted` (half-open) or the `attemptFailed` (opened) or
/// before the `finished` (closed) of the attempt that made it. A policy with `hedge` run by
/// `run` or `retrying`, whose attempts never overlap, first reports
/// ``hedgeNotApplied(_:)``.
///
///     var environment = RetryEnvironment()
///     environment.observer = { event in
///       if case .retryScheduled(let attempt, _, let delay) = event {
///         print("attempt \(attempt) failed; retrying in \(delay)")
///       }
///     }
public enum RetryEvent: Sendable {
  /// Attempt `attempt` is about to call the operation (or subscribe to the sequence again).
  case attemptStarted(attempt: Int)
  /// Attempt `attempt` failed with `error`.
  case attemptFailed(attempt: Int, error: any Error)
  /// After attempt `attempt` failed, the rule at index `rule` of the policy's `rules` will
  /// retry after `delay`.
  ///
  /// `rule` is an index, counted from 0; the event's description, like the command line,
  /// numbers rules from 1 (`rule 1` is `rules[0]`).
  case retryScheduled(attempt: Int, rule: Int, delay: Duration)
  /// After attempt `attempt` failed, the run stops for `reason` and throws `error`.
  case gaveUp(attempt: Int, reason: RetryStopReason, error: any Error)
  /// The run is over; the summary tells how it went.
  case finished(RetrySummary)
  /// Attempt `attempt` was not made: the policy's circuit breaker is open for `remaining`
  /// more (zero while a probe runs; nil when ``CircuitBreaker/isolate()`` holds it open);
  /// `cause` holds the counts that last opened it.
  case attemptRefused(attempt: Int, remaining: Duration?, cause: CircuitBreakerCause?)
  /// The failure of attempt `attempt` opened the circuit: `cause` has the window's failures
  /// and attempts, and their ratio.
  case circuitOpened(attempt: Int, cause: CircuitBreakerCause)
  /// The circuit's open time was over: attempt `attempt` is the single probe.
  case circuitHalfOpened(attempt: Int)
  /// Attempt `attempt`, the probe, succeeded: the circuit is closed and its window cleared.
  case circuitClosed(attempt: Int)
  /// Attempt `attempt` was not made: the policy's `throttle` (`reason`
  /// ``RetryStopReason/throttled``), `rate` (``RetryStopReason/rateLimited``) or `limit`
  /// (``RetryStopReason/limitExceeded``) refused it.
  case attemptShed(attempt: Int, reason: RetryStopReason)
  /// When attempt `attempt` ended, the policy's adaptive limit changed to `limit`.
  case limitChanged(attempt: Int, limit: Int)
  /// The policy's `hedge` was not applied: this run's operation may not be raced (`run`
  /// and `retrying` take operations that need not be `Sendable`), so its attempts run one
  /// after another; `runHedged`, which takes a `@Sendable` operation, races them. Reported
  /// first, before attempt 1 starts.
  case hedgeNotApplied(HedgePolicy)
}

extension RetryEvent: CustomStringConvertible {
  /// The event in a short sentence, rules numbered from 1 as in a policy file:
  /// `attempt 1 failed; rule 1 retries after 250ms`.
  public var description: String {
    switch self {
    case .attemptStarted(let attempt):
      "attempt \(attempt) started"
    case .attemptFailed(let attempt, let error):
      "attempt \(attempt) failed with \(error)"
    case .retryScheduled(let attempt, let rule, let delay):
      "attempt \(attempt) failed; rule \(rule.addingReportingOverflow(1).partialValue) retries after \(delay.messageText)"
    case .gaveUp(let attempt, let reason, _):
      // A run refused before its first attempt gives up at attempt 0: nothing failed.
      attempt == 0
        ? "refused before attempt 1; gave up: \(reason)"
        : "attempt \(attempt) failed; gave up: \(reason)"
    case .finished(let summary):
      "finished after \(summary.attempts) attempt\(summary.attempts == 1 ? "" : "s"): "
        + Self.text(of: summary.outcome)
    case .attemptRefused(let attempt, let remaining, _):
      "attempt \(attempt) refused: "
        + (remaining.map { "circuit open for \($0.messageText) more" } ?? "circuit held open")
    case .circuitOpened(let attempt, let cause):
      "attempt \(attempt) opened the circuit: \(cause.failures) of \(cause.attempts) attempts failed"
    case .circuitHalfOpened(let attempt):
      "attempt \(attempt) probes the half-open circuit"
    case .circuitClosed(let attempt):
      "attempt \(attempt) closed the circuit"
    case .attemptShed(let attempt, let reason):
      "attempt \(attempt) refused: \(reason)"
    case .limitChanged(let attempt, let limit):
      "after attempt \(attempt) the adaptive limit is \(limit)"
    case .hedgeNotApplied(let hedge):
      "hedge \(hedge.count) after \(hedge.delay.messageText) not applied: the operation is not "
        + "@Sendable, so attempts run one after another (runHedged races them)"
    }
  }

  /// `succeeded`, or `failed: ` and the reason.
  private static func text(of outcome: RetryOutcome) -> String {
    switch outcome {
    case .succeeded: "succeeded"
    case .failed(let reason): "failed: \(reason)"
    }
  }
}

/// Why a run stopped retrying and threw.
public enum RetryStopReason: Sendable, Hashable, CustomStringConvertible {
  /// The rule that took the error had used all its retries.
  case retriesExhausted
  /// No rule's classes match the error, so it is thrown at once.
  case errorNotMatched
  /// The next retry's delay would end past the policy's `within` deadline.
  case deadlineExceeded
  /// The policy's shared `budget` had no token left for another retry.
  case budgetExhausted
  /// The task was cancelled, or the operation threw `CancellationError`.
  case cancelled
  /// The rule's `after` hook threw, or no hook of that name is registered.
  case hookFailed
  /// A hedged run had started all its `hedge N` extra attempts, and every attempt failed,
  /// though the rule that took the last error had retries left.
  case hedgeLimitReached
  /// The host refused every retry of the run, for the reason the ``RetryRefusal`` gives, so
  /// a failure a rule would have retried ends it (see
  /// ``CompiledPolicy/run(in:refusingRetries:isolation:_:)``).
  ///
  /// `RetryPolicyHTTP` refuses the retries of a request it may not send twice (a method that
  /// is not idempotent, without an `Idempotency-Key`, or a body stream) with
  /// `RetryRefusal.notIdempotent`: the reason prints `request not idempotent`, and its
  /// ``RetryStopReason/caseName`` is `notIdempotent`.
  case retriesRefused(RetryRefusal)
  /// The policy's circuit breaker refused the next attempt.
  case circuitOpen
  /// The policy's adaptive throttling (`throttle`) refused the next attempt.
  case throttled
  /// The policy's concurrency limit (`limit`) refused the next attempt.
  case limitExceeded
  /// The policy's rate limit (`rate`) refused the next attempt: its token would come past
  /// `within`.
  case rateLimited

  /// A short phrase such as `retries exhausted`.
  public var description: String {
    switch self {
    case .retriesExhausted: "retries exhausted"
    case .errorNotMatched: "error not matched"
    case .deadlineExceeded: "deadline exceeded"
    case .budgetExhausted: "budget exhausted"
    case .cancelled: "cancelled"
    case .hookFailed: "hook failed"
    case .hedgeLimitReached: "hedge limit reached"
    case .retriesRefused(let refusal): refusal.description
    case .circuitOpen: "circuit open"
    case .throttled: "throttled"
    case .limitExceeded: "limit exceeded"
    case .rateLimited: "rate limited"
    }
  }
}

/// How a run ended.
public enum RetryOutcome: Sendable, Hashable {
  /// An attempt succeeded (for a sequence: the sequence finished).
  case succeeded
  /// The run threw, for this reason.
  case failed(RetryStopReason)
}

/// The statistics of one finished run.
public struct RetrySummary: Sendable, Hashable {
  /// The attempts made, the first included.
  public var attempts: Int
  /// The time actually spent in the policy's delays before retries: a wait cut short by
  /// cancellation counts for the part it lasted; hooks and attempts are not counted.
  public var totalDelay: Duration
  /// The time from the start of the first attempt to the end of the run, on the run's clock.
  public var elapsed: Duration
  /// Whether the run succeeded, or why it stopped.
  public var outcome: RetryOutcome
  /// For an HTTP request run by `RetryPolicyHTTP`, the times it was sent again after its
  /// first attempt (OpenTelemetry's `http.request.resend_count`); nil otherwise.
  public var resendCount: Int?

  /// What other products of this package add to a summary (`RetryPolicyHTTP`: the status
  /// and the method), by key: the core's type stays free of their concepts.
  package var details: [String: RetrySummaryDetail] = [:]

  /// Creates a summary.
  public init(
    attempts: Int, totalDelay: Duration, elapsed: Duration, outcome: RetryOutcome,
    resendCount: Int? = nil
  ) {
    self.attempts = attempts
    self.totalDelay = totalDelay
    self.elapsed = elapsed
    self.outcome = outcome
    self.resendCount = resendCount
  }
}

/// A value another product of the package adds to a ``RetrySummary``.
package enum RetrySummaryDetail: Sendable, Hashable {
  case integer(Int)
  case text(String)
}
