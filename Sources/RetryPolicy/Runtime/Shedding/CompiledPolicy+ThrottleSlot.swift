extension CompiledPolicy {
  /// The process-wide registry's throttles, found without its lock and without retaining
  /// them (see ``ProcessWideThrottles``): an entry of a registry keyed by value never changes
  /// its throttle.
  private static let processWideThrottles = ProcessWideThrottles()

  /// Asks the throttle for the first attempt of a run in `environment` of a policy whose
  /// only stage before an attempt is `throttle xK` (no `within`, `budget`, `breaker`, `limit`
  /// or `rate`), with the process-wide registry: returns the throttle that counts the
  /// attempt's success when it may start; throws its refusal; returns nil, counting nothing,
  /// for any other run.
  ///
  /// `run` asks such a throttle for the first attempt itself, as it takes the slot of
  /// `limit N` alone (``countedLimitSlot(in:)``): one atomic addition counts and judges the
  /// attempt, another counts its success (``ThrottleSlot``). A refused first attempt throws
  /// ``ThrottledError``, which is what the driver throws for it when nothing observes the
  /// run; a failed one goes on in the driver, which counts its accept when no rule matches
  /// its error. The throttle is the one the driver finds
  /// (``RetryEnvironment/sharedState(for:)``).
  @usableFromInline
  package func admitFirstThrottled(
    in environment: borrowing RetryEnvironment
  ) throws -> ThrottleSlot? {
    guard let clause = throttle, var slot = throttleSlot(in: environment) else { return nil }
    try slot.admitFirst(in: environment, clause: clause)
    return slot
  }

  /// The throttle ``admitFirstThrottled(in:)`` asks; nil for any other run.
  package func throttleSlot(in environment: borrowing RetryEnvironment) -> ThrottleSlot? {
    guard deadline == nil, budgetRatio == nil, breaker == nil, limit == nil, rate == nil,
      let clause = throttle,
      ObjectIdentifier(environment.registry) == Self.processWideThrottles.registry
    else { return nil }
    if let slot = Self.processWideThrottles.slot(for: self, clause: clause) { return slot }
    // The clock (an existential to copy) is read only when the registry is asked.
    guard let throttle = environment.registry.state(for: self, clock: environment.clock).throttle
    else { return nil }
    return Self.processWideThrottles.keep(throttle, clause: clause, for: self)
  }
}

/// What a run's first attempt under `throttle xK` alone reads of the process-wide throttle
/// of its policy: the window's counts and the origin of its clock, with the throttle itself
/// not retained (the process-wide registry keeps it for the life of the process).
@usableFromInline
package struct ThrottleSlot {
  let counts: ThrottleCounts
  /// Where the throttle's system clock counts from.
  let origin: Int64
  let throttle: Unmanaged<AdaptiveThrottle>
  /// When the first attempt was asked for (``admitFirst(in:clause:)``), in nanoseconds since
  /// `origin`: its accept is counted at that time.
  var askedAt: Int64 = 0

  /// The slot of `throttle`, which reads the system's clock from `origin`.
  init(_ throttle: AdaptiveThrottle, origin: Int64) {
    counts = throttle.counts
    self.origin = origin
    self.throttle = Unmanaged.passUnretained(throttle)
  }

  /// Counts the first attempt and throws its refusal, drawn from the environment's random
  /// source as the driver draws (``AdaptiveThrottle/decide(_:drawingFrom:)``) when the
  /// refusal probability is above 0.
  @inline(__always)
  mutating func admitFirst(
    in environment: borrowing RetryEnvironment, clause: ThrottlePolicy
  ) throws {
    let now = CircuitBreakerClock.systemNanoseconds(since: origin)
    askedAt = now
    let probability =
      counts.request(now: now, factor: clause.factor)
      ?? throttle.takeUnretainedValue().countRequest(policy: clause)
    guard probability > 0 else { return }
    if let refusal = throttle.takeUnretainedValue().decide(
      probability, drawingFrom: environment.random)
    {
      throw refusal
    }
  }

  /// Counts the accept of a first attempt that succeeded.
  @usableFromInline
  package func recordAccept() {
    // At the request's time, which counts in the current bucket (a later bucket that another
    // run began included): no second reading of the clock.
    if counts.accept(now: askedAt) { return }
    throttle.takeUnretainedValue().recordAccept()
  }
}

/// The first few policy values with `throttle xK` alone that the process-wide registry
/// served, and their throttles, read without a lock and without retaining anything, as
/// ``ProcessWideCountedLimits`` keeps counted limits: each of its slots is set once and then
/// never changes; a lookup compares plain fields, the rules by the address of their storage.
final class ProcessWideThrottles: @unchecked Sendable {
  // Sound: the slots are atomics, and an entry is written only before it is published
  // (releasing) and never after.

  /// A policy value and its throttle's slot, in memory of its own that is never freed.
  struct Entry {
    /// The address of the rules' storage.
    let rules: UnsafeRawPointer?
    let ruleCount: Int
    let hasName: Bool
    let attemptTimeout: Duration?
    let hedge: HedgePolicy?
    let clause: ThrottlePolicy
    let slot: ThrottleSlot
    /// The policy, which keeps its rules' storage alive.
    let policy: CompiledPolicy
    /// The throttle, kept alive.
    let throttle: AdaptiveThrottle
  }

  private let slots = SetOnceSlots()
  /// The process-wide registry, whose throttles these are: compared without reading its
  /// static property (and its lazy initialization's check) at every run.
  let registry = ObjectIdentifier(RetryStateRegistry.processWide)

  init() {}

  /// Whether `policy`, with `throttle` `clause` alone, is the policy value of `entry`.
  private static func holds(
    _ entry: UnsafeMutablePointer<Entry>, _ policy: borrowing CompiledPolicy,
    rules: UnsafeRawPointer?, clause: ThrottlePolicy
  ) -> Bool {
    let isSameRules = rules != nil && rules == entry.pointee.rules
    guard clause == entry.pointee.clause, policy.rules.count == entry.pointee.ruleCount,
      entry.pointee.hasName == (policy.name != nil),
      policy.attemptTimeout == entry.pointee.attemptTimeout, policy.hedge == entry.pointee.hedge
    else { return false }
    if entry.pointee.hasName, entry.pointee.policy.name != policy.name { return false }
    if isSameRules { return true }
    return RecentPolicyStates<AdaptiveThrottle>.isSameValue(entry.pointee.policy, policy)
  }

  /// The slot of `policy`, whose only stage is `throttle` `clause`, when an entry holds it.
  func slot(for policy: borrowing CompiledPolicy, clause: ThrottlePolicy) -> ThrottleSlot? {
    let rules = policy.rulesAddress
    for index in 0..<SetOnceSlots.count {
      guard let entry = slots.entry(index, as: Entry.self) else { return nil }
      if Self.holds(entry, policy, rules: rules, clause: clause) { return entry.pointee.slot }
    }
    return nil
  }

  /// Keeps `throttle` as the throttle of `policy` in the first empty slot, unless another
  /// slot holds `policy` first; returns the slot of the throttle kept (of `throttle` when no
  /// slot is free), or nil when `throttle` does not read the system's clock.
  func keep(
    _ throttle: AdaptiveThrottle, clause: ThrottlePolicy, for policy: borrowing CompiledPolicy
  ) -> ThrottleSlot? {
    guard let origin = throttle.systemOrigin else { return nil }
    let made = ThrottleSlot(throttle, origin: origin)
    // A value that is not equal to itself (a NaN set through a public property) would never
    // be found again: it takes no slot.
    guard policy == policy else { return made }
    let rules = policy.rulesAddress
    for index in 0..<SetOnceSlots.count {
      if let entry = slots.entry(index, as: Entry.self) {
        if Self.holds(entry, policy, rules: rules, clause: clause) { return entry.pointee.slot }
        continue
      }
      let (isOwn, kept) = slots.publish(
        Entry(
          rules: rules, ruleCount: policy.rules.count, hasName: policy.name != nil,
          attemptTimeout: policy.attemptTimeout, hedge: policy.hedge, clause: clause, slot: made,
          policy: copy policy, throttle: throttle), at: index)
      if isOwn { return made }
      if let kept, Self.holds(kept, policy, rules: rules, clause: clause) {
        return kept.pointee.slot
      }
    }
    return made
  }

}
