import Synchronization

/// The slot a run takes for its first attempt under `limit adaptive`, as `run` takes it
/// without the driver (see ``CompiledPolicy/adaptiveLimitSlot(in:)``), with the process-wide
/// registry's limiter, which lives as long as the process.
///
/// It holds what taking and giving back the slot reads, so that neither retains an object:
/// the limiter's count and its control word (the limit in force and the timing stride), each
/// on cache lines of its own, and the limiter, not retained, for what is rare: a timed
/// attempt's clock readings and sample, and a refusal's error.
@usableFromInline
package struct AdaptiveLimitSlot: @unchecked Sendable {
  // Sound: the count and the control word are atomics that live as long as the limiter, and
  // the limiter lives as long as the process.

  /// The attempts holding a slot, and the attempts that asked (``ConcurrencyLimiter``).
  @usableFromInline let count: UnsafeMutablePointer<Atomic<Int>>
  /// The limit in force and the timing stride's mask.
  @usableFromInline let control: UnsafeMutablePointer<Atomic<Int>>
  /// The limiter, not retained.
  @usableFromInline let limiter: Unmanaged<ConcurrencyLimiter>

  /// A slot of `limiter`, which keeps `limit adaptive` and which the process keeps alive.
  init(of limiter: ConcurrencyLimiter) {
    count = limiter.counted
    control = limiter.control
    self.limiter = Unmanaged.passUnretained(limiter)
  }

  /// Takes the slot: one atomic addition when one is free; returns the attempt's start on the
  /// limiter's clock when it is timed, ``ConcurrencyLimiter/untimed`` otherwise; throws
  /// the limiter's ``LimitExceededError`` when no slot is free.
  @inlinable
  package func acquire() throws -> Int64 {
    let word = control.pointee.load(ordering: .relaxed)
    let before = count.pointee.wrappingAdd(ConcurrencyLimiter.adaptiveAsk, ordering: .acquiring)
      .oldValue
    if before & ConcurrencyLimiter.lowBits < word & ConcurrencyLimiter.lowBits {
      guard ConcurrencyLimiter.isTimed(before, word) else {
        return ConcurrencyLimiter.untimed
      }
      return limiter.takeUnretainedValue().timedStart()
    }
    return try acquireAfterOverflow(word)
  }

  /// The end of ``acquire()`` when the addition found every slot taken: asks again, and
  /// throws the refusal, boxed once by the limiter for the limit in force, when every slot
  /// is still taken.
  @usableFromInline
  func acquireAfterOverflow(_ word: Int) throws -> Int64 {
    let limit = word & ConcurrencyLimiter.lowBits
    if ConcurrencyLimiter.retakeAdaptive(count, limit: limit) {
      // Timed: a slot freed just now is rare.
      return limiter.takeUnretainedValue().timedStart()
    }
    throw limiter.takeUnretainedValue().adaptiveRefusal(limit: limit)
  }

  /// Gives back the slot of an attempt that started at `start` (what ``acquire()`` returned);
  /// a timed attempt's latency counts when `isMeasured` (it was not cancelled).
  @inlinable
  package func release(started start: Int64, isMeasured: Bool) {
    let before = count.pointee.wrappingSubtract(1, ordering: .releasing).oldValue
    guard start != ConcurrencyLimiter.untimed, isMeasured else { return }
    limiter.takeUnretainedValue().record(
      start: start, inFlight: before & ConcurrencyLimiter.lowBits)
  }
}

/// The first few policy values with `limit adaptive` alone that the process-wide registry
/// served, and their slots, read without a lock and without retaining anything, as
/// ``ProcessWideCountedLimits`` keeps those of `limit N`: a lookup compares the plain fields
/// of each entry (the rules by the address of their storage; equal rules in other storage one
/// by one), and a value that finds every slot taken by others goes to the registry.
final class ProcessWideAdaptiveLimits: @unchecked Sendable {
  // Sound: the slots are atomics, and an entry is written only before it is published
  // (releasing) and never after.

  /// A policy value and its slot, in memory of its own that is never freed.
  struct Entry {
    let key: Key
    /// The policy, which keeps its rules' storage alive.
    let policy: CompiledPolicy
    /// The limiter, kept alive.
    let limiter: ConcurrencyLimiter
  }

  /// The plain fields of an entry: its policy's, and its limiter's slot.
  struct Key {
    let rules: UnsafeRawPointer?
    let ruleCount: Int
    let hasName: Bool
    let attemptTimeout: Duration?
    let hedge: HedgePolicy?
    let minimum: Int
    let maximum: Int
    let slot: AdaptiveLimitSlot
  }

  private let slots = SetOnceSlots()

  init() {}

  /// Whether `policy`, whose only stage before an attempt is `limit adaptive min minimum max
  /// maximum`, is the policy value of `entry`.
  private static func holds(
    _ entry: UnsafeMutablePointer<Entry>, _ policy: borrowing CompiledPolicy,
    rules: UnsafeRawPointer?, minimum: Int, maximum: Int
  ) -> Bool {
    let key = entry.pointee.key
    guard minimum == key.minimum, maximum == key.maximum,
      policy.rules.count == key.ruleCount, key.hasName == (policy.name != nil),
      policy.attemptTimeout == key.attemptTimeout, policy.hedge == key.hedge
    else { return false }
    if key.hasName, entry.pointee.policy.name != policy.name { return false }
    if rules != nil, rules == key.rules { return true }
    return RecentPolicyStates<ConcurrencyLimiter>.isSameValue(entry.pointee.policy, policy)
  }

  /// The slot of `policy` when an entry holds it.
  func slot(for policy: borrowing CompiledPolicy, minimum: Int, maximum: Int)
    -> AdaptiveLimitSlot?
  {
    let rules = policy.rulesAddress
    for index in 0..<SetOnceSlots.count {
      guard let entry = slots.entry(index, as: Entry.self) else { return nil }
      if Self.holds(entry, policy, rules: rules, minimum: minimum, maximum: maximum) {
        return entry.pointee.key.slot
      }
    }
    return nil
  }

  /// Keeps `limiter` as the limiter of `policy` in the first empty slot, unless another slot
  /// holds `policy` first; returns the slot of the limiter kept (`limiter` when no slot is
  /// free).
  func keep(
    _ limiter: ConcurrencyLimiter, for policy: borrowing CompiledPolicy, minimum: Int,
    maximum: Int
  ) -> AdaptiveLimitSlot {
    guard policy == policy else { return AdaptiveLimitSlot(of: limiter) }
    let rules = policy.rulesAddress
    for index in 0..<SetOnceSlots.count {
      if let entry = slots.entry(index, as: Entry.self) {
        if Self.holds(entry, policy, rules: rules, minimum: minimum, maximum: maximum) {
          return entry.pointee.key.slot
        }
        continue
      }
      let key = Key(
        rules: rules, ruleCount: policy.rules.count, hasName: policy.name != nil,
        attemptTimeout: policy.attemptTimeout, hedge: policy.hedge, minimum: minimum,
        maximum: maximum, slot: AdaptiveLimitSlot(of: limiter))
      let (isOwn, kept) = slots.publish(
        Entry(key: key, policy: copy policy, limiter: limiter), at: index)
      if isOwn { return key.slot }
      if let kept, Self.holds(kept, policy, rules: rules, minimum: minimum, maximum: maximum) {
        return kept.pointee.key.slot
      }
    }
    return AdaptiveLimitSlot(of: limiter)
  }

}

extension CompiledPolicy {
  /// The process-wide registry's adaptive limits, found without its lock and without
  /// retaining them (see ``ProcessWideAdaptiveLimits``): an entry of a registry keyed by
  /// value never changes its limiter.
  private static let processWideAdaptiveLimits = ProcessWideAdaptiveLimits()

  /// The slot of the first attempt of a run in `environment` of a policy whose only stage
  /// before an attempt is `limit adaptive` (no `within`, `budget`, `breaker`, `throttle` or
  /// `rate`), with the process-wide registry; nil for any other run.
  ///
  /// `run` takes such a policy's first slot itself, as it does for `limit N`
  /// (``countedLimitSlot(in:)``): one atomic addition on the limiter's count, one
  /// subtraction to give it back, and for the attempts the limiter times (every one while
  /// they are few, one in up to 64 past 512 in 100 ms) two readings of its clock and the
  /// controller's sample under its lock. A refused one throws ``LimitExceededError``, which
  /// is what the driver throws for it when nothing observes the run; a change of the limit
  /// is reported only by runs an observer sees, which go to the driver.
  @usableFromInline
  package func adaptiveLimitSlot(in environment: borrowing RetryEnvironment) -> AdaptiveLimitSlot? {
    guard deadline == nil, budgetRatio == nil, breaker == nil, throttle == nil, rate == nil,
      case .adaptive(let minimum, let maximum)? = limit
    else { return nil }
    // Compared in place: the registry is not retained.
    guard environment.registry === RetryStateRegistry.processWide else { return nil }
    let limits = Self.processWideAdaptiveLimits
    if let slot = limits.slot(for: self, minimum: minimum, maximum: maximum) { return slot }
    // The clock (an existential to copy) is read only when the registry is asked.
    guard let limiter = environment.registry.state(for: self, clock: environment.clock).limiter,
      limiter.isAdaptive(for: .adaptive(minimum: minimum, maximum: maximum))
    else { return nil }
    return limits.keep(limiter, for: self, minimum: minimum, maximum: maximum)
  }
}
