/// A run's side of its policy's shedding stages: `throttle` and `limit`, asked after the
/// breaker and before the budget (``RunStage/beforeAttempt``).
///
/// The state is the host's, kept in a ``RetryStateRegistry`` with the budgets and breakers
/// (the process-wide one, per policy value, when the environment gives none). A limit's slot is held
/// from the attempt's start to its end, however it ends; the throttle counts every attempt
/// asked for, and an accept for each success or error no rule matches.
@usableFromInline
package struct RunShedding: Sendable {
  private let throttle: AdaptiveThrottle?
  private let throttlePolicy: ThrottlePolicy?
  private let limiter: ConcurrencyLimiter?
  private let limitPolicy: ConcurrencyLimitPolicy?
  /// The slot of the attempt under way.
  private var permit: ConcurrencyLimiter.Permit?

  /// The shedding of `policy` over its shared `state`, nil when it has neither `throttle`
  /// nor `limit`.
  package init?(policy: borrowing CompiledPolicy, state: PolicyState) {
    guard policy.throttle != nil || policy.limit != nil else { return nil }
    throttlePolicy = policy.throttle
    limitPolicy = policy.limit
    throttle = state.throttle
    limiter = state.limiter
  }

  /// Asks the throttle; returns its refusal, nil when the attempt may go on.
  ///
  /// `uniform` is a random number in [0, 1) from the run's random source.
  package func admitThrottle(uniform: Double) -> ThrottledError? {
    guard let throttle, let throttlePolicy else { return nil }
    return throttle.request(policy: throttlePolicy, uniform: uniform)
  }

  /// Asks the limit for a slot; returns its refusal, nil when the attempt holds a slot.
  ///
  /// A policy with `queue M` whose slots are taken is refused here too: waiting in line is
  /// done by the drivers that can wait (not yet wired; see the report of issue 34).
  package mutating func admitLimit() -> LimitExceededError? {
    guard let limiter, let limitPolicy else { return nil }
    switch limiter.acquire(policy: limitPolicy) {
    case .admitted(let permit):
      self.permit = permit
      return nil
    case .queued(let ticket):
      limiter.leave(ticket)
      return LimitExceededError(limit: limiter.limit ?? 0)
    case .refused(let limit):
      return LimitExceededError(limit: limit)
    }
  }

  /// Gives back the slot of the attempt under way; returns an adaptive limit's new value.
  package mutating func release(isMeasured: Bool) -> Int? {
    guard let permit, let limiter else { return nil }
    self.permit = nil
    return limiter.release(permit, isMeasured: isMeasured)
  }

  /// Counts an accept for the throttle: a success, or an error no rule matches.
  package func recordAccept() {
    throttle?.recordAccept()
  }
}
