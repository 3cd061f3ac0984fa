import Synchronization

/// The counted limiters of a registry keyed by name (a host's, a `PolicyStore`'s), read
/// without its lock: what spares a run of a named policy whose only shared state is `limit N`
/// without `queue` the registry's lock and the hash of its name.
///
/// An entry holds a name, N and the limiter the registry's entry of that name had when it
/// had no other clause than `limit N`. It is current until the registry changes that entry
/// (another clause, another limiter, the name removed, see ``revalidate(_:)``), and is then
/// never current again. The registry's lock orders every write; a lookup reads the slots
/// with one atomic load each and takes an entry only while it is current. Entries are freed
/// with the registry, which every run that read one keeps alive (its environment holds it),
/// so a run's slot needs no retain; at most ``maximumEntries`` are ever made, after which
/// runs ask the registry.
final class NamedCountedLimits: @unchecked Sendable {
  // Sound: the slots and `isCurrent` are atomics; `made` and the rest of an entry are written
  // only with the registry's lock held, an entry before it is published (releasing).

  /// A name's limiter, in memory of its own, freed with the registry.
  struct Entry: ~Copyable {
    let name: String
    let limiter: ConcurrencyLimiter
    /// The slot, which does not retain the limiter.
    let slot: Slot
    /// False once the registry's entry of the name changed.
    let isCurrent = Atomic<Bool>(true)
  }

  /// The plain fields of a slot.
  struct Slot {
    let limit: Int
    let count: UnsafeMutablePointer<Atomic<Int>>
    let limiter: Unmanaged<ConcurrencyLimiter>
  }

  static var slotCount: Int { 4 }
  /// The most entries made for one registry: a name whose clauses change back and forth
  /// does not grow it past this.
  static var maximumEntries: Int { 32 }

  private let first = Atomic<UnsafeMutablePointer<Entry>?>(nil)
  private let second = Atomic<UnsafeMutablePointer<Entry>?>(nil)
  private let third = Atomic<UnsafeMutablePointer<Entry>?>(nil)
  private let fourth = Atomic<UnsafeMutablePointer<Entry>?>(nil)
  /// Every entry made, freed in `deinit`; written with the registry's lock held.
  private var made: [UnsafeMutablePointer<Entry>] = []

  init() {}

  deinit {
    for entry in made {
      entry.deinitialize(count: 1)
      entry.deallocate()
    }
  }

  /// The slot of a policy named `name` with `limit N` (N = `limit`) as its only shared state,
  /// when a current entry holds it.
  func slot(named name: String, limit: Int) -> CountedLimitSlot? {
    for index in 0..<Self.slotCount {
      guard let entry = load(index) else { return nil }
      let slot = entry.pointee.slot
      guard slot.limit == limit, entry.pointee.isCurrent.load(ordering: .acquiring),
        entry.pointee.name == name
      else { continue }
      return CountedLimitSlot(count: slot.count, limit: limit, limiter: slot.limiter, owner: nil)
    }
    return nil
  }

  /// Called with the registry's lock held: keeps `limiter`, which counts N = `limit`, as the
  /// limiter of `name`, whose registry entry has no other clause than `limit N` now, in an
  /// empty slot or one whose entry is no longer current.
  func keep(_ limiter: ConcurrencyLimiter, limit: Int, named name: String) {
    guard made.count < Self.maximumEntries else { return }
    var free: Int?
    for index in 0..<Self.slotCount {
      guard let entry = load(index) else {
        free = free ?? index
        break
      }
      guard entry.pointee.isCurrent.load(ordering: .relaxed) else {
        free = free ?? index
        continue
      }
      if entry.pointee.name == name { return }
    }
    guard let free else { return }
    let entry = UnsafeMutablePointer<Entry>.allocate(capacity: 1)
    entry.initialize(
      to: Entry(
        name: name, limiter: limiter,
        slot: Slot(limit: limit, count: limiter.counted, limiter: .passUnretained(limiter))))
    made.append(entry)
    store(entry, at: free)
  }

  /// Called with the registry's lock held, after it changed its entries: every entry for
  /// which `isCurrent(name, limit, limiter)` is false is no longer current.
  func revalidate(_ isCurrent: (String, Int, ConcurrencyLimiter) -> Bool) {
    for index in 0..<Self.slotCount {
      guard let entry = load(index) else { return }
      guard entry.pointee.isCurrent.load(ordering: .relaxed) else { continue }
      if !isCurrent(entry.pointee.name, entry.pointee.slot.limit, entry.pointee.limiter) {
        entry.pointee.isCurrent.store(false, ordering: .releasing)
      }
    }
  }

  private func load(_ index: Int) -> UnsafeMutablePointer<Entry>? {
    switch index {
    case 0: first.load(ordering: .acquiring)
    case 1: second.load(ordering: .acquiring)
    case 2: third.load(ordering: .acquiring)
    default: fourth.load(ordering: .acquiring)
    }
  }

  private func store(_ entry: UnsafeMutablePointer<Entry>, at index: Int) {
    switch index {
    case 0: first.store(entry, ordering: .releasing)
    case 1: second.store(entry, ordering: .releasing)
    case 2: third.store(entry, ordering: .releasing)
    default: fourth.store(entry, ordering: .releasing)
    }
  }
}
