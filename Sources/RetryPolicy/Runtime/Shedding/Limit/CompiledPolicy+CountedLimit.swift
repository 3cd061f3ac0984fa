extension CompiledPolicy {
  /// The process-wide registry's counted limiters, found without its lock and without
  /// retaining them (see ``ProcessWideCountedLimits``): an entry of a registry keyed by value
  /// never changes its limiter.
  private static let processWideLimits = ProcessWideCountedLimits()

  /// The slot of the first attempt of a run in `environment` of a policy whose only stage
  /// before an attempt is `limit N` without `queue` (no `within`, `budget`, `breaker`,
  /// `throttle` or `rate`); nil for any other policy, or when the registry's limiter keeps
  /// another kind of limit (the driver then asks it).
  ///
  /// `run` takes such a policy's first slot itself, as it makes a plain first attempt without
  /// the driver: one atomic addition on the limiter's count, and one subtraction to give it
  /// back (``CountedLimitSlot``). A failed first attempt gives its slot back before the driver
  /// decides the retry, as the driver does (``RunStage``); a refused one throws
  /// ``LimitExceededError``, which is what the driver throws for it when nothing observes
  /// the run. The limiter is the one the driver finds (``RetryEnvironment/sharedState(for:)``).
  @usableFromInline
  package func countedLimitSlot(in environment: borrowing RetryEnvironment) -> CountedLimitSlot? {
    guard deadline == nil, budgetRatio == nil, breaker == nil, throttle == nil, rate == nil,
      case .fixed(let limit, 0)? = self.limit
    else { return nil }
    let isProcessWide = environment.registry === RetryStateRegistry.processWide
    if isProcessWide {
      if let slot = Self.processWideLimits.slot(for: self, limit: limit) { return slot }
    } else if let slot = environment.registry.countedLimitSlot(for: self, limit: limit) {
      // The registry keeps the limiter while the environment, which the run holds, keeps it.
      return slot
    }
    // The clock (an existential to copy) is read only when the registry is asked.
    guard let limiter = environment.registry.state(for: self, clock: environment.clock).limiter
    else { return nil }
    let counted = limiter.countedLimit(for: .fixed(limit: limit, queue: 0))
    guard counted > 0 else { return nil }
    guard isProcessWide, counted == limit else {
      if !isProcessWide {
        environment.registry.keepCountedLimiter(limiter, limit: counted, for: self)
      }
      return CountedLimitSlot(of: limiter, limit: counted, owner: limiter)
    }
    let kept = Self.processWideLimits.keep(limiter, limit: counted, for: self)
    return CountedLimitSlot(of: kept, limit: counted, owner: nil)
  }

  /// The limiter of ``countedLimitSlot(in:)``.
  package func countedLimiter(in environment: borrowing RetryEnvironment) -> ConcurrencyLimiter? {
    countedLimitSlot(in: environment)?.limiter.takeUnretainedValue()
  }
}
