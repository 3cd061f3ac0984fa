import Synchronization

/// The first few policy values a process-wide table served, and their objects, read without a
/// lock: what spares a run of a policy with `limit` or `throttle` the table's lock and the
/// hash of the whole policy value.
///
/// Each of its ``slotCount`` slots is set once, by the first policy value that finds it
/// empty, and then never changes; a lookup reads the slots in order, with one atomic load and
/// one comparison each (``isSameValue(_:_:)``: a copy of a policy shares its rules' storage,
/// so the rules need not be compared one by one). A value that finds every slot taken by
/// others goes to the table, as before. The entries hold nothing the table does not already
/// keep for the life of the process, and are never freed.
final class RecentPolicyStates<Value: AnyObject & Sendable>: @unchecked Sendable {
  // Sound: the slots are atomics, and an entry is written only before it is published
  // (releasing) and never after.

  /// A policy value and its object, in memory of its own that is never freed: a lookup reads
  /// its ``PolicyStateKey`` in place, retaining nothing but the object it returns.
  struct Entry {
    /// What a lookup compares: plain values, copied without a retain.
    let key: PolicyStateKey
    /// The policy, which keeps its rules' storage alive.
    let policy: CompiledPolicy
    /// The object, kept alive.
    let value: Value
    /// A plain value the object gave when it was kept (``keep(_:for:payload:)``), read
    /// without retaining it.
    let payload: Int

    init(policy: CompiledPolicy, value: Value, payload: Int) {
      self.key = PolicyStateKey(policy)
      self.policy = policy
      self.value = value
      self.payload = payload
    }
  }

  /// Whether `policy`, whose key is `key`, is the policy value of `entry`
  /// (``isSameValue(_:_:)``): the plain properties first, then the name, and the rules one
  /// by one only when they are not in the same storage.
  @inline(__always)
  private static func holds(
    _ entry: UnsafeMutablePointer<Entry>, _ policy: borrowing CompiledPolicy, key: PolicyStateKey
  ) -> Bool {
    let kept = entry.pointee.key
    guard kept.rules != key.rules || kept.rules == 0 else {
      guard kept == key else { return false }
      return !key.hasName || entry.pointee.policy.name == policy.name
    }
    // Values in different slots mostly differ in a clause: compared first, so that a
    // mismatch copies nothing.
    guard kept.rate == key.rate, kept.throttle == key.throttle, kept.limit == key.limit,
      kept.deadline == key.deadline, kept.ruleCount == key.ruleCount
    else { return false }
    return isSameValue(entry.pointee.policy, policy)
  }

  /// The slots: the policy values that use a limiter (a throttle) in one process are few.
  static var slotCount: Int { SetOnceSlots.count }

  private let slots = SetOnceSlots()

  init() {}

  /// The object of `policy` when a slot holds it.
  func value(for policy: borrowing CompiledPolicy) -> Value? {
    let key = PolicyStateKey(policy)
    for index in 0..<Self.slotCount {
      guard let entry = entry(at: index) else { return nil }
      if Self.holds(entry, policy, key: key) { return entry.pointee.value }
    }
    return nil
  }

  /// The payload kept with the object of `policy` when a slot holds it: nothing is retained.
  func payload(for policy: borrowing CompiledPolicy) -> Int? {
    let key = PolicyStateKey(policy)
    for index in 0..<Self.slotCount {
      guard let entry = entry(at: index) else { return nil }
      if Self.holds(entry, policy, key: key) { return entry.pointee.payload }
    }
    return nil
  }

  /// Keeps `value` as the object of `policy` in the first empty slot, with `payload` (a plain
  /// value that the object keeps valid), unless another slot holds `policy` first; returns
  /// the object kept (`value` when no slot is free).
  func keep(_ value: Value, for policy: borrowing CompiledPolicy, payload: Int = 0) -> Value {
    // A value that is not equal to itself (a NaN set through a public property) would never
    // be found again: it takes no slot.
    guard policy == policy else { return value }
    let key = PolicyStateKey(policy)
    for index in 0..<Self.slotCount {
      if let entry = entry(at: index) {
        if Self.holds(entry, policy, key: key) { return entry.pointee.value }
        continue
      }
      let made = UnsafeMutablePointer<Entry>.allocate(capacity: 1)
      made.initialize(to: Entry(policy: copy policy, value: value, payload: payload))
      let (stored, kept) = slots.claim(index, for: UnsafeRawPointer(made))
      if stored { return value }
      // Another value took the slot first: `made` was never seen by another task.
      made.deinitialize(count: 1)
      made.deallocate()
      if let kept = kept.map(Self.entry(at:)), Self.holds(kept, policy, key: key) {
        return kept.pointee.value
      }
    }
    return value
  }

  /// The entry in slot `index`, when it is set.
  private func entry(at index: Int) -> UnsafeMutablePointer<Entry>? {
    slots.load(index).map(Self.entry(at:))
  }

  /// The entry at `address`, which a slot holds.
  private static func entry(at address: UnsafeRawPointer) -> UnsafeMutablePointer<Entry> {
    UnsafeMutablePointer(mutating: address.assumingMemoryBound(to: Entry.self))
  }

  /// Whether two policy values are equal (`==`), with the rules compared by their storage
  /// first: the same storage holds the same rules.
  ///
  /// `RecentPolicyStatesTests` checks that this names every stored property of
  /// ``CompiledPolicy``: a property added there must be added here.
  static func isSameValue(_ kept: borrowing CompiledPolicy, _ policy: borrowing CompiledPolicy)
    -> Bool
  {
    let keptRules = kept.rules.withUnsafeBufferPointer { $0.baseAddress }
    let rules = policy.rules.withUnsafeBufferPointer { $0.baseAddress }
    guard keptRules != nil, keptRules == rules, kept.rules.count == policy.rules.count else {
      // Values in different slots mostly differ in a clause: compared first, so that a
      // mismatch copies no rule.
      guard kept.limit == policy.limit, kept.throttle == policy.throttle, kept.rate == policy.rate,
        kept.breaker == policy.breaker, kept.rules.count == policy.rules.count
      else { return false }
      return kept == policy
    }
    return kept.name == policy.name && kept.deadline == policy.deadline
      && kept.attemptTimeout == policy.attemptTimeout && kept.budgetRatio == policy.budgetRatio
      && kept.hedge == policy.hedge && kept.breaker == policy.breaker
      && kept.limit == policy.limit && kept.throttle == policy.throttle
      && kept.rate == policy.rate
  }
}

/// The plain properties of a policy value: all but its name and its rules, which are
/// compared by the address of their storage.
struct PolicyStateKey: Equatable {
  /// The address of the storage of the policy's rules (0: none).
  let rules: Int
  let ruleCount: Int
  let hasName: Bool
  let deadline: Duration?
  let attemptTimeout: Duration?
  let budgetRatio: Double?
  let hedge: HedgePolicy?
  let breaker: CircuitBreakerPolicy?
  let limit: ConcurrencyLimitPolicy?
  let throttle: ThrottlePolicy?
  let rate: RatePolicy?

  init(_ policy: borrowing CompiledPolicy) {
    rules = policy.rules.withUnsafeBufferPointer { Int(bitPattern: $0.baseAddress) }
    ruleCount = policy.rules.count
    hasName = policy.name != nil
    deadline = policy.deadline
    attemptTimeout = policy.attemptTimeout
    budgetRatio = policy.budgetRatio
    hedge = policy.hedge
    breaker = policy.breaker
    limit = policy.limit
    throttle = policy.throttle
    rate = policy.rate
  }
}
