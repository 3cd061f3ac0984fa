extension CompiledPolicy {
  /// The limiter of a policy whose only stage before an attempt is `limit N` without `queue`
  /// (no `within`, `budget`, `breaker`, `throttle` or `rate`); nil for any other policy.
  ///
  /// `run` takes such a policy's first slot itself, as it makes a plain first attempt without
  /// the driver: one compare-and-exchange on the limiter's count, and one subtraction to give
  /// it back. A failed first attempt gives its slot back before the driver decides the retry,
  /// as the driver does (``RunStage``); a refused one throws ``LimitExceededError``, which is
  /// what the driver throws for it when nothing observes the run.
  @usableFromInline
  package func countedLimiter() -> ConcurrencyLimiter? {
    guard deadline == nil, budgetRatio == nil, breaker == nil, throttle == nil, rate == nil,
      case .fixed(_, 0)? = limit
    else { return nil }
    return ConcurrencyLimiter.standard(for: self)
  }
}

extension ConcurrencyLimiter {
  /// Takes a slot for the first attempt of a policy with `limit N` and no `queue` (see
  /// ``CompiledPolicy/countedLimiter()``); returns the refusal, nil when the attempt holds a
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

extension ConcurrencyLimiter {
  private static let recent = RecentPolicyStates<ConcurrencyLimiter>()

  /// The limiter of `policy` in ``RetryStateRegistry/processWide``, found without a lock once
  /// a run of the policy value has found it there.
  package static func standard(for policy: CompiledPolicy) -> ConcurrencyLimiter {
    recent.value(for: policy) {
      RetryStateRegistry.processWide.state(for: policy, clock: ContinuousClock()).limiter
        ?? ConcurrencyLimiter()
    }
  }
}
