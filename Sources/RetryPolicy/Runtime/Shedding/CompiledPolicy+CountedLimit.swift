extension CompiledPolicy {
  /// The process-wide registry's limiters, found without its lock (see
  /// ``RecentPolicyStates``): an entry of a registry keyed by value never changes its limiter.
  private static let processWideLimiters = RecentPolicyStates<ConcurrencyLimiter>()

  /// The limiter of a run in `environment` of a policy whose only stage before an attempt is
  /// `limit N` without `queue` (no `within`, `budget`, `breaker`, `throttle` or `rate`); nil
  /// for any other policy.
  ///
  /// `run` takes such a policy's first slot itself, as it makes a plain first attempt without
  /// the driver: one compare-and-exchange on the limiter's count, and one subtraction to give
  /// it back. A failed first attempt gives its slot back before the driver decides the retry,
  /// as the driver does (``RunStage``); a refused one throws ``LimitExceededError``, which is
  /// what the driver throws for it when nothing observes the run. The limiter is the one the
  /// driver finds (``RetryEnvironment/sharedState(for:)``).
  @usableFromInline
  package func countedLimiter(in environment: borrowing RetryEnvironment) -> ConcurrencyLimiter? {
    guard deadline == nil, budgetRatio == nil, breaker == nil, throttle == nil, rate == nil,
      case .fixed(_, 0)? = limit
    else { return nil }
    let registry = environment.registry
    let isProcessWide = registry === RetryStateRegistry.processWide
    // The clock (an existential to copy) is read only when the registry is asked.
    if isProcessWide, let limiter = Self.processWideLimiters.value(for: self) { return limiter }
    guard let limiter = registry.state(for: self, clock: environment.clock).limiter else {
      return nil
    }
    return isProcessWide ? Self.processWideLimiters.keep(limiter, for: self) : limiter
  }
}

extension ConcurrencyLimiter {
  /// Takes a slot for the first attempt of a policy with `limit N` and no `queue` (see
  /// ``CompiledPolicy/countedLimiter(in:)``); returns the refusal, nil when the attempt holds a
  /// slot, which ``releaseCounted()`` gives back.
  @usableFromInline
  package func admitCounted(policy: ConcurrencyLimitPolicy) -> LimitExceededError? {
    switch acquire(policy: policy) {
    case .admitted:
      return nil
    case .queued(let ticket):
      leave(ticket)
      return LimitExceededError(limit: limit ?? 0)
    case .refused(let limit):
      return LimitExceededError(limit: limit)
    }
  }

  /// Gives back the slot ``admitCounted(policy:)`` took.
  @usableFromInline
  package func releaseCounted() {
    release(Permit(start: 0))
  }
}
