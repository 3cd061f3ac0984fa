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
final class RecentPolicyStates<Value: AnyObject & Sendable>: Sendable {
  /// A policy value and its object.
  final class Entry: Sendable {
    let policy: CompiledPolicy
    let value: Value

    init(policy: CompiledPolicy, value: Value) {
      self.policy = policy
      self.value = value
    }
  }

  /// The slots: the policy values that use a limiter (a throttle) in one process are few.
  static var slotCount: Int { SetOnceSlots.count }

  private let slots = SetOnceSlots()

  init() {}

  /// The object of `policy` when a slot holds it.
  func value(for policy: borrowing CompiledPolicy) -> Value? {
    for index in 0..<Self.slotCount {
      guard let entry = entry(at: index) else { return nil }
      if Self.isSameValue(entry.policy, policy) { return entry.value }
    }
    return nil
  }

  /// Keeps `value` as the object of `policy` in the first empty slot, unless another slot
  /// holds `policy` first; returns the object kept (`value` when no slot is free).
  func keep(_ value: Value, for policy: borrowing CompiledPolicy) -> Value {
    // A value that is not equal to itself (a NaN set through a public property) would never
    // be found again: it takes no slot.
    guard policy == policy else { return value }
    for index in 0..<Self.slotCount {
      if let entry = entry(at: index) {
        if Self.isSameValue(entry.policy, policy) { return entry.value }
        continue
      }
      let made = Entry(policy: copy policy, value: value)
      let (stored, kept) = slots.claim(
        index, for: UnsafeRawPointer(Unmanaged.passRetained(made).toOpaque()))
      if stored { return value }
      // Another value took the slot first: `made` was retained for it, and is not kept.
      Unmanaged.passUnretained(made).release()
      if let kept = kept.map(Self.entry(at:)), Self.isSameValue(kept.policy, policy) {
        return kept.value
      }
    }
    return value
  }

  /// The entry in slot `index`, when it is set.
  private func entry(at index: Int) -> Entry? {
    slots.load(index).map(Self.entry(at:))
  }

  /// The entry at `address`, which a slot holds (retained once, for good).
  private static func entry(at address: UnsafeRawPointer) -> Entry {
    Unmanaged<Entry>.fromOpaque(address).takeUnretainedValue()
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
