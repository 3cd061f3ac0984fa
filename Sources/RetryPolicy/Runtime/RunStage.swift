/// The stages of a run, compiled from a policy's clauses, in the order the driver asks them.
///
/// Every way a policy runs (``CompiledPolicy/run(in:isolation:_:)``, `runHedged`,
/// `retrying`, `RetryPolicyHTTP`, the storm simulator) goes through ``RetryRun`` or the hedging
/// driver, which ask the stages at two places only:
///
/// - **Before an attempt** (``beforeAttempt``): each stage may refuse it, in this order:
///   `within` (no attempt starts past the deadline), the circuit breaker, then the budget (a
///   retry withdraws its token only once every stage before admitted it, so a refused attempt
///   never spends one). The first refusal ends the run.
/// - **After an attempt fails** (``afterFailure``): the policy's own `timeout` marks a cut-off
///   attempt, the rules decide (retry after a delay, or give up), the breaker counts the
///   failure (and a failure that opens the circuit ends the run at once), then the budget
///   must hold a token for the retry.
///
/// Hedging (`hedge N after D`) is the driver of a hedged run, asking the same stages for each
/// extra attempt. See <doc:TheRunPipeline> for the order and how to add a stage.
///
/// To add a stage (`limit`, `throttle`, `rate`): add its case here and its place in
/// ``beforeAttempt``; the compiler then shows every `switch` that must ask it, one per driver
/// (each is exhaustive, with no `default:`). Its state is a small machine in the style of
/// ``RetryStateMachine``: time, randomness and cancellation are its inputs.
@usableFromInline
package enum RunStage: Sendable, Hashable, CaseIterable {
  /// `within D`: no attempt starts past the deadline, no retry waits past it.
  case deadline
  /// `timeout D`: each attempt is cut off after D, failing with class `timeout`.
  case attemptTimeout
  /// `breaker P% …`: the circuit may refuse an attempt; every result is counted.
  case breaker
  /// `throttle xK`: adaptive client throttling may refuse an attempt.
  case throttle
  /// `rate N/s`: an attempt waits for its token, or is refused when the wait would pass
  /// `within`.
  case rate
  /// `limit N`, `limit adaptive`: an attempt holds a slot while it runs, waits in line for one
  /// (`queue M`), or is refused.
  case limit
  /// `budget P%`: a retry spends a token; a first attempt deposits.
  case budget
  /// `hedge N after D`: extra concurrent attempts.
  case hedge
  /// The retry rules: which failures are retried, after which delay.
  case rules

  /// The stages that may refuse an attempt before it starts, in the order they are asked.
  ///
  /// The breaker comes before every stage that spends (the budget; per the contract, then
  /// throttle, rate and limit), so that an attempt it refuses spends nothing.
  /// `rate` and `limit` may make the attempt wait (for its token, in line for a slot): the
  /// driver then performs the wait and asks the stages after it.
  package static let beforeAttempt: [RunStage] = [
    .deadline, .breaker, .throttle, .rate, .limit, .budget,
  ]

  /// The stages that decide after an attempt failed, in the order they are asked.
  package static let afterFailure: [RunStage] = [.attemptTimeout, .rules, .breaker, .budget]

  /// The keyword of the stage's clause, as the run-order article names the stage.
  package var keyword: Keyword {
    switch self {
    case .deadline: .within
    case .attemptTimeout: .timeout
    case .breaker: .breaker
    case .throttle: .throttle
    case .rate: .rate
    case .limit: .limit
    case .budget: .budget
    case .hedge: .hedge
    case .rules: .retry
    }
  }
}
