import Synchronization

extension CompiledPolicy {
  /// The process-wide registry's shedding objects, found without its lock (see
  /// ``RecentPolicyStates``): an entry of a registry keyed by value never changes them.
  private static let processWideGates = RecentPolicyStates<SheddingGate>()

  /// The shedding stages of a run in `environment` of a policy whose only stages before an
  /// attempt are `throttle`, `rate` and `limit` (no `budget` or `breaker`, no `queue`, and
  /// no `within` unless with `rate`, not `throttle` with `rate`), with the process-wide
  /// registry; nil for any other run.
  ///
  /// `run` asks them itself for the first attempt, as it takes the slot of `limit N` alone
  /// (``countedLimiter(in:)``): the objects are found without a lock, and an attempt they
  /// admit is a plain call between its admission and its release. A run they refuse throws
  /// what the driver throws for it; a rate that makes the attempt wait leaves the first
  /// attempt to the driver (``SheddingGate/admitFirst(in:)``). With `within`, the gate only
  /// refuses: a first attempt whose token would come past the deadline (all of `within` is
  /// left before the first attempt); any other goes to the driver, which times the run.
  @usableFromInline
  package func sheddingGate(in environment: borrowing RetryEnvironment) -> SheddingGate? {
    guard deadline == nil || rate != nil, budgetRatio == nil, breaker == nil,
      throttle != nil || rate != nil || limit != nil,
      // With both, the rate may leave an attempt the throttle's draw admitted to the driver,
      // which would draw again (refusing with 1 − (1 − p)² instead of p): the driver asks both.
      throttle == nil || rate == nil
    else { return nil }
    if case .fixed(_, let queue)? = limit, queue > 0 { return nil }
    let registry = environment.registry
    guard registry === RetryStateRegistry.processWide else { return nil }
    if let gate = Self.processWideGates.value(for: self) { return gate }
    let state = registry.state(for: self, clock: environment.clock)
    let gate = SheddingGate(policy: self, state: state)
    return Self.processWideGates.keep(
      gate, for: self, payload: gate.tokensAtHand.map { Int(bitPattern: $0.count) } ?? 0)
  }

  /// The tokens of `rate` handed out ahead, for a run in `environment` of a policy whose only
  /// stage before an attempt is `rate` (no `within`, `throttle`, `limit`, `budget` or
  /// `breaker`), on the continuous clock with the process-wide registry, once its gate is
  /// kept; nil for any other run (a run on a test's clock reads it for every token).
  ///
  /// `run` takes one for the first attempt, as it takes the slot of `limit N` alone
  /// (``countedLimitSlot(in:)``): one atomic step, found without a lock and without retaining
  /// anything, and nothing to give back. When none is left, ``sheddingGate(in:)`` asks the
  /// limiter, which reads the clock and hands out more (see ``RateLimiter``).
  @usableFromInline
  package func rateTokensAtHand(in environment: borrowing RetryEnvironment) -> RateTokensAtHand? {
    guard rate != nil, deadline == nil, throttle == nil, limit == nil, budgetRatio == nil,
      breaker == nil, environment.isContinuousClock,
      environment.registry === RetryStateRegistry.processWide,
      let address = Self.processWideGates.payload(for: self),
      let count = UnsafeMutablePointer<Atomic<Int>>(bitPattern: address)
    else { return nil }
    return RateTokensAtHand(count: count)
  }

  /// Makes a run's first attempt under `gate`, without the driver.
  ///
  /// Returns its value, its failure (the stages' slot given back; the driver decides the
  /// retry), or nil when the driver makes the attempt; throws the stages' refusal.
  @inlinable
  func attemptFirst<Success>(
    through gate: SheddingGate, in environment: borrowing RetryEnvironment,
    isolation: isolated (any Actor)?, _ operation: () async throws -> Success
  ) async throws -> Result<Success, any Error>? {
    switch gate.admitFirst(in: environment) {
    case .admitted(let permit):
      do {
        let value = try await attempt(1, isolation: isolation, operation)
        gate.release(succeeded: permit)
        return .success(value)
      } catch {
        gate.release(permit, failedWith: error)
        return .failure(error)
      }
    case .refused(let refusal):
      throw refusal
    case .driver:
      return nil
    }
  }
}

/// A policy's `throttle`, `rate` and `limit`, asked by `run` for a first attempt without the
/// driver, in the driver's order (``RunStage/beforeAttempt``).
@usableFromInline
package final class SheddingGate: Sendable {
  /// What the stages say to a run's first attempt.
  @usableFromInline
  package enum Admission: Sendable {
    /// It may start; it holds this slot of `limit` (nil without `limit`) until it is given
    /// back (``SheddingGate/release(succeeded:)``, ``SheddingGate/release(_:failedWith:)``).
    case admitted(Slot?)
    /// A stage refused it: the run throws this error, as the driver would.
    case refused(any Error)
    /// The driver decides it: nothing was counted or taken.
    case driver
  }

  /// The slot of `limit` a first attempt holds.
  @usableFromInline
  package struct Slot: Sendable {
    let permit: ConcurrencyLimiter.Permit
  }

  private let throttle: AdaptiveThrottle?
  private let throttlePolicy: ThrottlePolicy?
  private let rate: RateLimiter?
  private let ratePolicy: RatePolicy?
  private let limiter: ConcurrencyLimiter?
  private let limitPolicy: ConcurrencyLimitPolicy?
  /// `within`, which only `rate` asks here.
  private let within: Duration?
  /// The rate's tokens handed out ahead, when `rate` is the only stage asked here (without
  /// `within`).
  let tokensAtHand: RateTokensAtHand?

  init(policy: borrowing CompiledPolicy, state: PolicyState) {
    throttlePolicy = policy.throttle
    ratePolicy = policy.rate
    within = policy.deadline
    limitPolicy = policy.limit
    throttle = policy.throttle == nil ? nil : state.throttle
    rate = policy.rate == nil ? nil : state.rateLimiter
    let isRateAlone =
      policy.throttle == nil && policy.limit == nil && policy.deadline == nil
    tokensAtHand = isRateAlone ? rate?.tokensAtHand : nil
    limiter = policy.limit == nil ? nil : state.limiter
  }

  /// Asks `throttle`, `rate` and `limit`, in that order, for a run's first attempt in
  /// `environment`.
  ///
  /// What each stage counts is what the driver counts: a throttle's request (a refused one
  /// too), a rate's token, a slot. A throttle whose refusal probability is above 0 draws
  /// from the environment's random source, as the driver does (from its own generator when
  /// that is the system's: see ``AdaptiveThrottle``); an attempt the rate makes wait goes to
  /// the driver with nothing counted or taken (the request and the token are given back).
  @usableFromInline
  package func admitFirst(in environment: borrowing RetryEnvironment) -> Admission {
    var counted = false
    if let throttle, let throttlePolicy {
      let probability = throttle.countRequest(policy: throttlePolicy)
      if probability > 0,
        let refusal = throttle.decide(probability, drawingFrom: environment.random)
      {
        return .refused(refusal)
      }
      counted = true
    }
    if let rate, let ratePolicy {
      let runClock: (any Clock<Duration>)? =
        environment.isContinuousClock ? nil : environment.clock
      // With `within`, the gate only refuses; the throttle's request counts, as the driver
      // counts it before the rate refuses.
      if let within,
        let refusal = rate.refusal(policy: ratePolicy, maxWait: within, on: runClock)
      {
        return .refused(refusal)
      }
      if within != nil || !rate.takeAtOnce(policy: ratePolicy, on: runClock) {
        if counted, let throttlePolicy { throttle?.withdrawRequest(policy: throttlePolicy) }
        return .driver
      }
    }
    guard let limiter, let limitPolicy else { return .admitted(nil) }
    switch limiter.acquire(policy: limitPolicy) {
    case .admitted(let permit):
      return .admitted(Slot(permit: permit))
    case .refused(let limit):
      return .refused(LimitExceededError(limit: limit))
    case .queued(let ticket):
      // Not reached: a limit with a line is left to the driver (``CompiledPolicy/sheddingGate(in:)``).
      limiter.leave(ticket)
      return .refused(LimitExceededError(limit: limiter.limit ?? 0))
    }
  }

  /// Gives back what a first attempt that succeeded held, as the driver does: its slot (its
  /// latency measured), and counts the throttle's accept.
  @usableFromInline
  package func release(succeeded slot: Slot?) {
    throttle?.recordAccept()
    guard let slot, let limiter else { return }
    limiter.release(slot.permit, isMeasured: true)
  }

  /// Gives back the slot of a first attempt that failed with `error`, its latency measured
  /// unless the run was cancelled (the driver's rule); the driver, which decides the retry,
  /// counts the throttle's accept of an error no rule matches.
  @usableFromInline
  package func release(_ slot: Slot?, failedWith error: any Error) {
    guard let slot, let limiter else { return }
    limiter.release(slot.permit, isMeasured: !(Task.isCancelled || error is CancellationError))
  }
}
