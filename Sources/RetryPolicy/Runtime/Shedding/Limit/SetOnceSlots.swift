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
