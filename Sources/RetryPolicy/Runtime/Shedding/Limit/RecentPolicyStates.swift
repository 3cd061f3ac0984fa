import Synchronization

/// The first few policy values a process-wide table served, and their objects, read without a
/// lock: what spares a run of a policy with `limit` or `throttle` the table's lock and the
/// hash of the whole policy value.
///
/// Each of its ``slotCount`` slots is set once, by the first policy value that finds it
/// empty, and then never changes; a lookup reads the slots in order, with one atomic load and
/// a comparison of plain fields each (the rules by the address of their storage: a copy of a
/// policy shares it, so the rules need not be compared one by one, and neither policy is
/// copied; ``isSameValue(_:_:)`` when the storage differs). A value that finds every slot taken by
/// others goes to the table, as before. The entries hold nothing the table does not already
/// keep for the life of the process, and are never freed.
final class RecentPolicyStates<Value: AnyObject & Sendable>: @unchecked Sendable {
  // Sound: the slots are atomics, and an entry is written only before it is published
  // (releasing) and never after.

  /// A policy value and its object, in memory of its own that is never freed.
  struct Entry {
    /// What a lookup compares first: plain values, read without a copy of the policy.
    let key: Key
    /// The policy, which keeps its rules' storage alive.
    let policy: CompiledPolicy
    let value: Value
    /// A plain value the object gave when it was kept (``keep(_:for:payload:)``), read
    /// without retaining the object.
    let payload: Int
  }

  /// The plain fields of an entry's policy: the address of its rules' storage, and every
  /// clause but the name, which is compared only when there is one.
  struct Key {
    let rules: UnsafeRawPointer?
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
      rules = policy.rulesAddress
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

  /// The slots: the policy values that use a limiter (a throttle, a rate) in one process are
  /// few.
  static var slotCount: Int { SetOnceSlots.count }

  private let slots = SetOnceSlots()

  init() {}

  /// The object of `policy` when a slot holds it.
  func value(for policy: borrowing CompiledPolicy) -> Value? {
    let rules = policy.rulesAddress
    for index in 0..<Self.slotCount {
      guard let entry = slots.entry(index, as: Entry.self) else { return nil }
      if Self.holds(entry, policy, rules: rules) { return entry.pointee.value }
    }
    return nil
  }

  /// The payload kept with the object of `policy` when a slot holds it: nothing is retained.
  func payload(for policy: borrowing CompiledPolicy) -> Int? {
    let rules = policy.rulesAddress
    for index in 0..<Self.slotCount {
      guard let entry = slots.entry(index, as: Entry.self) else { return nil }
      if Self.holds(entry, policy, rules: rules) { return entry.pointee.payload }
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
    let rules = policy.rulesAddress
    for index in 0..<Self.slotCount {
      if let entry = slots.entry(index, as: Entry.self) {
        if Self.holds(entry, policy, rules: rules) { return entry.pointee.value }
        continue
      }
      let (isOwn, kept) = slots.publish(
        Entry(key: Key(policy), policy: copy policy, value: value, payload: payload), at: index)
      if isOwn { return value }
      if let kept, Self.holds(kept, policy, rules: rules) {
        return kept.pointee.value
      }
    }
    return value
  }

  /// Whether `entry` holds `policy`, whose rules are stored at `rules`: its key's plain
  /// fields first, without copying either policy; the name when there is one, and the rules
  /// one by one only when they are stored elsewhere.
  private static func holds(
    _ entry: UnsafeMutablePointer<Entry>, _ policy: borrowing CompiledPolicy,
    rules: UnsafeRawPointer?
  ) -> Bool {
    let key = entry.pointee.key
    guard key.ruleCount == policy.rules.count, key.limit == policy.limit,
      key.throttle == policy.throttle, key.rate == policy.rate, key.breaker == policy.breaker,
      key.deadline == policy.deadline, key.attemptTimeout == policy.attemptTimeout,
      key.budgetRatio == policy.budgetRatio, key.hedge == policy.hedge,
      key.hasName == (policy.name != nil)
    else { return false }
    guard rules != nil, rules == key.rules else {
      return isSameValue(entry.pointee.policy, policy)
    }
    return !key.hasName || entry.pointee.policy.name == policy.name
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
