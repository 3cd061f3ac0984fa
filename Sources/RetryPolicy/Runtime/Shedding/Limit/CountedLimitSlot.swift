import Synchronization

/// The slot a run takes for its first attempt under `limit N` without `queue`, as `run` takes
/// it without the driver (see ``CompiledPolicy/countedLimitSlot(in:)``).
///
/// It holds what taking and giving back the slot reads, so that neither retains an object:
/// the limiter's count (alone on its cache lines), N, and the limiter, retained in `owner`
/// only when it is not the process-wide registry's, whose limiters live as long as the
/// process.
@usableFromInline
package struct CountedLimitSlot {
  /// The attempts holding a slot of the limiter.
  @usableFromInline let count: UnsafeMutablePointer<Atomic<Int>>
  /// N.
  @usableFromInline let limit: Int
  /// The limiter, not retained.
  @usableFromInline let limiter: Unmanaged<ConcurrencyLimiter>
  /// The limiter, retained until the slot is given back, when it may be freed before.
  @usableFromInline let owner: ConcurrencyLimiter?

  /// A slot of `limiter`, configured for N = `limit`, which `owner` keeps alive (nil: the
  /// process keeps it).
  init(of limiter: ConcurrencyLimiter, limit: Int, owner: ConcurrencyLimiter?) {
    self.init(
      count: limiter.counted, limit: limit, limiter: Unmanaged.passUnretained(limiter),
      owner: owner)
  }

  init(
    count: UnsafeMutablePointer<Atomic<Int>>, limit: Int, limiter: Unmanaged<ConcurrencyLimiter>,
    owner: ConcurrencyLimiter?
  ) {
    self.count = count
    self.limit = limit
    self.limiter = limiter
    self.owner = owner
  }

  /// Takes the slot: one atomic addition when one is free; throws the limiter's
  /// ``LimitExceededError`` when none is.
  @inlinable
  package func acquire() throws {
    if count.pointee.wrappingAdd(1, ordering: .acquiring).oldValue < limit { return }
    try acquireAfterOverflow()
  }

  /// The end of ``acquire()`` when the addition found every slot taken: asks again (see
  /// ``ConcurrencyLimiter/takeCounted(_:limit:)``), and throws the refusal, boxed once by the
  /// limiter, when every slot is still taken.
  @usableFromInline
  func acquireAfterOverflow() throws {
    if ConcurrencyLimiter.retakeCounted(count, limit: limit) { return }
    throw limiter.takeUnretainedValue().countedRefusal
  }

  /// Gives back the slot ``acquire()`` took.
  @inlinable
  package func release() {
    count.pointee.wrappingSubtract(1, ordering: .releasing)
    withExtendedLifetime(owner) {}
  }
}

/// The first few policy values with `limit N` and no `queue` that the process-wide registry
/// served, and their limiters, read without a lock and without retaining anything: what
/// spares a run of such a policy the registry's lock and the hash of its whole value.
///
/// Each of its ``slotCount`` slots is set once, by the first policy value that finds it
/// empty, and then never changes; an entry lives as long as the process, as the registry's
/// own entries keyed by value do. A lookup reads the slots in order, with one atomic load and
/// a comparison of plain fields each: the rules by the address of their storage (a copy of a
/// policy shares it, and the entry keeps it alive, so no other policy can have it), the
/// name only when there is one. Equal rules in other storage are compared one by one
/// (``RecentPolicyStates/isSameValue(_:_:)``). A value that finds every slot taken by others
/// goes to the registry, as before.
final class ProcessWideCountedLimits: @unchecked Sendable {
  // Sound: the slots are atomics, and an entry is written only before it is published
  // (releasing) and never after.

  /// A policy value and its limiter, in memory of its own that is never freed.
  struct Entry {
    /// What a lookup reads: plain values, read without a copy of the entry.
    let key: Key
    /// The policy, which keeps its rules' storage alive.
    let policy: CompiledPolicy
    /// The limiter, kept alive.
    let limiter: ConcurrencyLimiter
  }

  /// The plain fields of an entry: its policy's, and its limiter's slot.
  struct Key {
    /// The address of the rules' storage.
    let rules: UnsafeRawPointer?
    let ruleCount: Int
    let hasName: Bool
    let attemptTimeout: Duration?
    let hedge: HedgePolicy?
    /// N, which the limiter counts.
    let limit: Int
    let count: UnsafeMutablePointer<Atomic<Int>>
    let limiter: Unmanaged<ConcurrencyLimiter>

    /// The slot, which does not retain the limiter.
    var slot: CountedLimitSlot {
      CountedLimitSlot(count: count, limit: limit, limiter: limiter, owner: nil)
    }
  }

  /// Whether `policy`, with `limit N` and no `queue`, is the policy value of `entry`.
  ///
  /// `policy` has no `within`, `budget`, `breaker`, `throttle` or `rate` (see
  /// ``CompiledPolicy/countedLimitSlot(in:)``), which the entry's policy shares.
  private static func holds(
    _ entry: UnsafeMutablePointer<Entry>, _ policy: borrowing CompiledPolicy,
    rules: UnsafeRawPointer?, limit: Int
  ) -> Bool {
    let key = entry.pointee.key
    guard limit == key.limit, policy.rules.count == key.ruleCount,
      key.hasName == (policy.name != nil), policy.attemptTimeout == key.attemptTimeout,
      policy.hedge == key.hedge
    else { return false }
    if key.hasName, entry.pointee.policy.name != policy.name { return false }
    if rules != nil, rules == key.rules { return true }
    return RecentPolicyStates<ConcurrencyLimiter>.isSameValue(entry.pointee.policy, policy)
  }

  /// The slots: the policy values that use a limiter in one process are few.
  static var slotCount: Int { SetOnceSlots.count }

  private let slots = SetOnceSlots()

  init() {}

  /// The slot of `policy`, whose `limit` clause is `limit N` without `queue`, when an entry
  /// holds it.
  func slot(for policy: borrowing CompiledPolicy, limit: Int) -> CountedLimitSlot? {
    let rules = policy.rulesAddress
    for index in 0..<Self.slotCount {
      guard let entry = slots.entry(index, as: Entry.self) else { return nil }
      if Self.holds(entry, policy, rules: rules, limit: limit) { return entry.pointee.key.slot }
    }
    return nil
  }

  /// Keeps `limiter`, which counts N = `limit`, as the limiter of `policy` in the first empty
  /// slot, unless another slot holds `policy` first; returns the limiter kept (`limiter`
  /// when no slot is free).
  func keep(
    _ limiter: ConcurrencyLimiter, limit: Int, for policy: borrowing CompiledPolicy
  ) -> ConcurrencyLimiter {
    // A value that is not equal to itself (a NaN set through a public property) would never
    // be found again: it takes no slot.
    guard policy == policy else { return limiter }
    let rules = policy.rulesAddress
    for index in 0..<Self.slotCount {
      if let entry = slots.entry(index, as: Entry.self) {
        if Self.holds(entry, policy, rules: rules, limit: limit) { return entry.pointee.limiter }
        continue
      }
      let key = Key(
        rules: rules, ruleCount: policy.rules.count, hasName: policy.name != nil,
        attemptTimeout: policy.attemptTimeout, hedge: policy.hedge, limit: limit,
        count: limiter.counted, limiter: Unmanaged.passUnretained(limiter))
      let (isOwn, kept) = slots.publish(
        Entry(key: key, policy: copy policy, limiter: limiter), at: index)
      if isOwn { return limiter }
      if let kept, Self.holds(kept, policy, rules: rules, limit: limit) {
        return kept.pointee.limiter
      }
    }
    return limiter
  }

}
