/// A run's side of its policy's shedding stages: `throttle`, `rate` and `limit`, asked after
/// the breaker and before the budget (``RunStage/beforeAttempt``).
///
/// The state is the host's, kept in a ``RetryStateRegistry`` with the budgets and breakers
/// (the process-wide one, per policy value, when the environment gives none). A limit's slot
/// is held from the attempt's start to its end, however it ends; the throttle counts every
/// attempt asked for, and an accept for each success or error no rule matches; a rate's token
/// is taken by every attempt, on the run's clock, and given back when its wait is cancelled.
@usableFromInline
package struct RunShedding: Sendable {
  private let throttle: AdaptiveThrottle?
  private let throttlePolicy: ThrottlePolicy?
  private let limiter: ConcurrencyLimiter?
  private let limitPolicy: ConcurrencyLimitPolicy?
  private let ratePolicy: RatePolicy?
  private let rateLimiter: RateLimiter?
  /// The run's clock, when it is not the continuous clock, which `rate` reads.
  private var rateClock: (any Clock<Duration>)?
  /// The slot of the attempt under way.
  private var permit: ConcurrencyLimiter.Permit?

  /// What the rate says to an attempt that has no token yet.
  package enum RateAdmission: Sendable {
    /// It has the token that comes after this wait: it waits first.
    case wait(Duration)
    /// Its wait would end past `within`; it took no token.
    case refused(RateLimitedError)
  }

  /// What the limit says to an attempt that finds every slot taken.
  package enum LimitAdmission: Sendable {
    /// It waits in line under this ticket (``waitInLine(_:until:on:)``).
    case queued(UInt64)
    /// It is refused.
    case refused(LimitExceededError)
  }

  /// The shedding of `policy` over its shared `state`, nil when it has neither `throttle`,
  /// `rate` nor `limit`.
  package init?(policy: borrowing CompiledPolicy, state: PolicyState) {
    guard policy.throttle != nil || policy.limit != nil || policy.rate != nil else { return nil }
    throttlePolicy = policy.throttle
    limitPolicy = policy.limit
    ratePolicy = policy.rate
    throttle = state.throttle
    limiter = state.limiter
    rateLimiter = state.rateLimiter
  }

  /// Counts the tokens of `rate` on `clock`, the run's (a bucket made without a clock reads
  /// the clock of the run that asks it).
  package mutating func bindRate<C: Clock<Duration>>(to clock: C) {
    rateClock = clock is ContinuousClock || clock is ContinuousRunClock ? nil : clock
  }

  /// Asks the throttle; returns its refusal, nil when the attempt may go on.
  ///
  /// `uniform` is a random number in [0, 1) from the run's random source.
  package func admitThrottle(uniform: Double) -> ThrottledError? {
    guard let throttle, let throttlePolicy else { return nil }
    return throttle.request(policy: throttlePolicy, uniform: uniform)
  }

  /// Asks the throttle, drawing from `random`, the run's source.
  ///
  /// One draw for every attempt asked under a shedding stage, so that a seeded source gives
  /// the same jitter whatever the throttle decides. With the system generator, whose draws no one can repeat, the
  /// throttle draws from its own generator, and only when its refusal probability is above 0
  /// (``AdaptiveThrottle``).
  func admitThrottle(drawingFrom random: inout RandomSource) -> ThrottledError? {
    guard AdaptiveThrottle.isSystem(random.base) else {
      return admitThrottle(uniform: Double(random.next() >> 11) * 0x1p-53)
    }
    guard let throttle, let throttlePolicy else { return nil }
    let probability = throttle.countRequest(policy: throttlePolicy)
    guard probability > 0, throttle.uniform() < probability else { return nil }
    return ThrottledError(probability: probability)
  }

  /// Asks the rate for a token; nil when the attempt has one now.
  ///
  /// `maxWait` is what is left of `within` (nil: no deadline): a longer wait is refused.
  package func admitRate(maxWait: Duration?) -> RateAdmission? {
    guard let rateLimiter, let ratePolicy else { return nil }
    switch rateLimiter.reserve(policy: ratePolicy, maxWait: maxWait, on: rateClock) {
    case .now: return nil
    case .after(let nanoseconds): return .wait(.nanoseconds(nanoseconds))
    case .refused(let nanoseconds):
      return .refused(RateLimitedError(wait: .nanoseconds(nanoseconds)))
    }
  }

  /// Gives back the token of a wait that was cancelled.
  package func cancelRateWait() {
    rateLimiter?.cancelReservation(on: rateClock)
  }

  /// Asks the limit for a slot; nil when the attempt holds one.
  package mutating func admitLimit() -> LimitAdmission? {
    guard let limiter, let limitPolicy else { return nil }
    switch limiter.acquire(policy: limitPolicy) {
    case .admitted(let permit):
      self.permit = permit
      return nil
    case .queued(let ticket):
      return .queued(ticket)
    case .refused(let limit):
      return .refused(LimitExceededError(limit: limit))
    }
  }

  /// Waits in line under `ticket` until a slot is free; returns the refusal when the wait
  /// ended first: the task was cancelled, or `deadline` (`within`) passed on `clock`.
  nonisolated(nonsending) package mutating func waitInLine<C: Clock<Duration>>(
    _ ticket: UInt64, until deadline: C.Instant?, on clock: C
  ) async -> LimitExceededError? {
    guard let limiter else { return nil }
    guard let permit = await limiter.wait(for: ticket, until: deadline, on: clock) else {
      return LimitExceededError(limit: limiter.limit ?? 0, waited: true)
    }
    self.permit = permit
    return nil
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

  /// The limit in force, for a refusal's error.
  var limit: Int? { limiter?.limit }

  /// Hands over the slot the attempt just admitted holds: a hedged run keeps one per attempt
  /// in flight.
  mutating func takePermit() -> ConcurrencyLimiter.Permit? {
    defer { permit = nil }
    return permit
  }

  /// Holds `permit`, a slot a wait in line got, for the attempt about to start.
  mutating func adopt(_ permit: ConcurrencyLimiter.Permit) {
    self.permit = permit
  }

  /// Gives back `permit`, a hedged attempt's slot; returns an adaptive limit's new value.
  func release(_ permit: ConcurrencyLimiter.Permit, isMeasured: Bool) -> Int? {
    limiter?.release(permit, isMeasured: isMeasured)
  }

  /// Waits in line under `ticket` (a hedged run's child task); returns the slot, or nil when
  /// the wait ended first: the task was cancelled, or `deadline` (`within`) passed on `clock`.
  func slot<C: Clock<Duration>>(
    for ticket: UInt64, until deadline: C.Instant?, on clock: C
  ) async -> ConcurrencyLimiter.Permit? {
    guard let limiter else { return nil }
    guard let permit = await limiter.wait(for: ticket, until: deadline, on: clock) else {
      return nil
    }
    // The run ended while the slot came: nobody will start an attempt in it.
    if Task.isCancelled {
      limiter.release(permit, isMeasured: false)
      return nil
    }
    return permit
  }
}
