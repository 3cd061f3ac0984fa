import Synchronization

/// Eight slots, each set once and never cleared, read with one atomic load: the lock-free
/// caches of the process-wide limiters (`ProcessWideCountedLimits`, `RecentPolicyStates`)
/// keep their entries in them, each as the address of an entry they own.
///
/// `@unchecked Sendable`: a slot only ever goes from nil to an address, by one
/// compare-and-exchange that publishes the entry (releasing) to every later load (acquiring);
/// the entries themselves are immutable once published.
struct SetOnceSlots: ~Copyable, @unchecked Sendable {
  /// How many slots there are.
  static var count: Int { 8 }

  private let first = Atomic<UnsafeRawPointer?>(nil)
  private let second = Atomic<UnsafeRawPointer?>(nil)
  private let third = Atomic<UnsafeRawPointer?>(nil)
  private let fourth = Atomic<UnsafeRawPointer?>(nil)
  private let fifth = Atomic<UnsafeRawPointer?>(nil)
  private let sixth = Atomic<UnsafeRawPointer?>(nil)
  private let seventh = Atomic<UnsafeRawPointer?>(nil)
  private let eighth = Atomic<UnsafeRawPointer?>(nil)

  init() {}

  /// The address in slot `index` (0 ..< ``count``), or nil while the slot is empty.
  @inline(__always)
  func load(_ index: Int) -> UnsafeRawPointer? {
    switch index {
    case 0: first.load(ordering: .acquiring)
    case 1: second.load(ordering: .acquiring)
    case 2: third.load(ordering: .acquiring)
    case 3: fourth.load(ordering: .acquiring)
    case 4: fifth.load(ordering: .acquiring)
    case 5: sixth.load(ordering: .acquiring)
    case 6: seventh.load(ordering: .acquiring)
    default: eighth.load(ordering: .acquiring)
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
    case 3:
      fourth.compareExchange(expected: nil, desired: address, ordering: .acquiringAndReleasing)
    case 4: fifth.compareExchange(expected: nil, desired: address, ordering: .acquiringAndReleasing)
    case 5: sixth.compareExchange(expected: nil, desired: address, ordering: .acquiringAndReleasing)
    case 6:
      seventh.compareExchange(expected: nil, desired: address, ordering: .acquiringAndReleasing)
    default:
      eighth.compareExchange(expected: nil, desired: address, ordering: .acquiringAndReleasing)
    }
  }
}
