import Synchronization

/// Four slots, each set once and never cleared, read with one atomic load: the lock-free
/// caches of the process-wide limiters (`ProcessWideCountedLimits`, `RecentPolicyStates`)
/// keep their entries in them, each as the address of an entry they own.
///
/// `@unchecked Sendable`: a slot only ever goes from nil to an address, by one
/// compare-and-exchange that publishes the entry (releasing) to every later load (acquiring);
/// the entries themselves are immutable once published.
struct SetOnceSlots: ~Copyable, @unchecked Sendable {
  /// How many slots there are.
  static var count: Int { 4 }

  private let first = Atomic<UnsafeRawPointer?>(nil)
  private let second = Atomic<UnsafeRawPointer?>(nil)
  private let third = Atomic<UnsafeRawPointer?>(nil)
  private let fourth = Atomic<UnsafeRawPointer?>(nil)

  init() {}

  /// The address in slot `index` (0 ..< ``count``), or nil while the slot is empty.
  @inline(__always)
  func load(_ index: Int) -> UnsafeRawPointer? {
    switch index {
    case 0: first.load(ordering: .acquiring)
    case 1: second.load(ordering: .acquiring)
    case 2: third.load(ordering: .acquiring)
    default: fourth.load(ordering: .acquiring)
    }
  }

  /// Stores `address` in slot `index` if it is empty; returns whether it did, and the slot's
  /// address before.
  func claim(
    _ index: Int, for address: UnsafeRawPointer
  ) -> (exchanged: Bool, original: UnsafeRawPointer?) {
    switch index {
    case 0: first.compareExchange(expected: nil, desired: address, ordering: .acquiringAndReleasing)
    case 1:
      second.compareExchange(expected: nil, desired: address, ordering: .acquiringAndReleasing)
    case 2: third.compareExchange(expected: nil, desired: address, ordering: .acquiringAndReleasing)
    default:
      fourth.compareExchange(expected: nil, desired: address, ordering: .acquiringAndReleasing)
    }
  }
}
