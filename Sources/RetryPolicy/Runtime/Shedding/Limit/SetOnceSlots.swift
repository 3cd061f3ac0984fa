import Synchronization

/// Sixteen slots, each set once and never cleared, read with one atomic load: the lock-free
/// caches of the process-wide limiters (`ProcessWideCountedLimits`, `RecentPolicyStates`)
/// keep their entries in them, each as the address of an entry they own.
///
/// `@unchecked Sendable`: a slot only ever goes from nil to an address, by one
/// compare-and-exchange that publishes the entry (releasing) to every later load (acquiring);
/// the entries themselves are immutable once published.
struct SetOnceSlots: ~Copyable, @unchecked Sendable {
  /// How many slots there are: enough for the policy values with shedding stages that one
  /// process runs most (a benchmark of every stage's admission and refusal runs eight).
  static var count: Int { 16 }

  /// The slots, in memory of their own (an atomic must not move).
  private let slots: UnsafeMutablePointer<Atomic<UnsafeRawPointer?>>

  init() {
    slots = .allocate(capacity: Self.count)
    for index in 0..<Self.count {
      (slots + index).initialize(to: Atomic<UnsafeRawPointer?>(nil))
    }
  }

  deinit {
    slots.deinitialize(count: Self.count)
    slots.deallocate()
  }

  /// The address in slot `index` (0 ..< ``count``), or nil while the slot is empty.
  @inline(__always)
  func load(_ index: Int) -> UnsafeRawPointer? {
    slots[index].load(ordering: .acquiring)
  }

  /// Stores `address` in slot `index` if it is empty; returns whether it did, and the slot's
  /// address before.
  func claim(
    _ index: Int, for address: UnsafeRawPointer
  ) -> (exchanged: Bool, original: UnsafeRawPointer?) {
    slots[index].compareExchange(expected: nil, desired: address, ordering: .acquiringAndReleasing)
  }
}

extension SetOnceSlots {
  /// The entry of type `Entry` whose address slot `index` holds, or nil while it is empty.
  @inline(__always)
  func entry<Entry>(_ index: Int, as type: Entry.Type) -> UnsafeMutablePointer<Entry>? {
    load(index).map { UnsafeMutablePointer(mutating: $0.assumingMemoryBound(to: Entry.self)) }
  }

  /// Publishes `entry` in slot `index` when the slot is empty.
  ///
  /// The entry is kept in memory of its own that is never freed. Returns whether it was
  /// published, and the entry the slot holds (nil only if the slot stayed empty, which a
  /// failed claim never leaves). An entry that lost the slot to another task's was never seen
  /// by another task, and is freed.
  func publish<Entry>(
    _ entry: consuming Entry, at index: Int
  ) -> (isOwn: Bool, entry: UnsafeMutablePointer<Entry>?) {
    let made = UnsafeMutablePointer<Entry>.allocate(capacity: 1)
    made.initialize(to: entry)
    let (stored, original) = claim(index, for: UnsafeRawPointer(made))
    if stored { return (true, made) }
    made.deinitialize(count: 1)
    made.deallocate()
    return (
      false, original.map { UnsafeMutablePointer(mutating: $0.assumingMemoryBound(to: Entry.self)) }
    )
  }
}

extension CompiledPolicy {
  /// The address of the storage of the policy's rules, which the lock-free tables of the
  /// process-wide state compare first: a copy of a policy shares it.
  var rulesAddress: UnsafeRawPointer? {
    rules.withUnsafeBufferPointer { UnsafeRawPointer($0.baseAddress) }
  }
}
