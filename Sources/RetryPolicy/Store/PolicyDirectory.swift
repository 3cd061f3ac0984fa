import Synchronization

/// Every name a store has had and the cell of its current policy, searched without the store's
/// lock: what `store["payments"]` reads, through the cell's slot, never retaining the cell.
///
/// A store's cells never go away (a removed name keeps its cell, marked removed, and a handle
/// follows it when it comes back), so the directory only grows: a reload that brings a new name
/// appends it. Each name and its cell are written, then published by a releasing store (of the
/// count, and of its slot in the index), so a reader that sees either sees the name whole.
///
/// A file of a few names (``linearSearchLimit`` or fewer) is searched in order, comparing the
/// short names; a larger one through an open-addressed index of the names' hashes, half empty
/// at most. When the storage is full, the writer copies it into storage twice the size and
/// publishes that. The old storage stays allocated until the directory goes away, since a reader
/// may still be searching it: at most as much again as the current storage.
final class PolicyDirectory: @unchecked Sendable {
  // Sound: a reader only loads `current` and what a releasing store published; `retired` and
  // every write happen with `writer`'s lock held; the storage a reader may hold is freed only in
  // `deinit`, when no reader holds the directory.

  /// The storage readers search.
  private let current: Atomic<UnsafeMutablePointer<Storage>>
  /// The addresses of storage replaced by a larger one, freed with the directory; taken to
  /// append.
  private let writer: Locked<[Int]>

  /// Files of at most this many names are searched in order.
  static let linearSearchLimit = 8

  /// The names and cells of one capacity.
  struct Storage: ~Copyable {
    /// How many names fit (a power of two).
    let capacity: Int
    /// The names published, in the order they came.
    let count: Atomic<Int>
    let names: UnsafeMutablePointer<String>
    let cells: UnsafeMutablePointer<PolicyCell>
    /// Each cell's slot, read without retaining the cell (which `cells` keeps alive).
    let slots: UnsafeMutablePointer<UnsafeMutablePointer<PolicyCell.Slot>>
    /// `2 × capacity` slots by hash: the position of a name plus one, or 0 for an empty slot.
    let index: UnsafeMutablePointer<Atomic<Int>>

    init(capacity: Int) {
      self.capacity = capacity
      count = Atomic(0)
      names = .allocate(capacity: capacity)
      cells = .allocate(capacity: capacity)
      slots = .allocate(capacity: capacity)
      index = .allocate(capacity: 2 * capacity)
      for slot in 0..<(2 * capacity) {
        (index + slot).initialize(to: Atomic(0))
      }
    }

    /// The position of `name`, or nil.
    @inline(__always)
    func position(of name: String) -> Int? {
      let published = count.load(ordering: .acquiring)
      if published <= PolicyDirectory.linearSearchLimit {
        for position in 0..<published where names[position] == name {
          return position
        }
        return nil
      }
      let mask = 2 * capacity - 1
      var slot = name.hashValue & mask
      while true {
        let entry = index[slot].load(ordering: .acquiring)
        guard entry != 0 else { return nil }
        if names[entry - 1] == name { return entry - 1 }
        slot = (slot + 1) & mask
      }
    }

    /// Appends a name: the caller holds the writer's lock and has checked that it fits.
    func append(_ name: String, _ cell: PolicyCell) {
      let position = count.load(ordering: .relaxed)
      (names + position).initialize(to: name)
      (cells + position).initialize(to: cell)
      (slots + position).initialize(to: cell.slot)
      let mask = 2 * capacity - 1
      var slot = name.hashValue & mask
      while index[slot].load(ordering: .relaxed) != 0 {
        slot = (slot + 1) & mask
      }
      index[slot].store(position + 1, ordering: .releasing)
      count.store(position + 1, ordering: .releasing)
    }

    /// Frees the names, the cells' references and the index.
    func free() {
      let published = count.load(ordering: .relaxed)
      names.deinitialize(count: published)
      names.deallocate()
      cells.deinitialize(count: published)
      cells.deallocate()
      slots.deinitialize(count: published)
      slots.deallocate()
      index.deinitialize(count: 2 * capacity)
      index.deallocate()
    }
  }

  /// An empty directory.
  init() {
    let storage = UnsafeMutablePointer<Storage>.allocate(capacity: 1)
    storage.initialize(to: Storage(capacity: 8))
    current = Atomic(storage)
    writer = Locked([])
  }

  deinit {
    let addresses = writer.withLock { $0 } + [Int(bitPattern: current.load(ordering: .acquiring))]
    for address in addresses {
      guard let storage = UnsafeMutablePointer<Storage>(bitPattern: address) else { continue }
      storage.pointee.free()
      storage.deinitialize(count: 1)
      storage.deallocate()
    }
  }

  /// The cell of `name`, or nil when the store never had that name.
  @inline(__always)
  func cell(named name: String) -> PolicyCell? {
    let storage = current.load(ordering: .acquiring)
    guard let position = storage.pointee.position(of: name) else { return nil }
    return storage.pointee.cells[position]
  }

  /// The current policy of `name`, or nil when the store does not have that name now: what
  /// `store["payments"]` reads.
  ///
  /// Read through the cell's slot, so that the cell is never retained: the search, two
  /// atomic loads and the copy of the policy.
  @inline(__always)
  func policy(named name: String) -> CompiledPolicy? {
    let storage = current.load(ordering: .acquiring)
    guard let position = storage.pointee.position(of: name) else { return nil }
    let slot = storage.pointee.slots[position]
    guard !slot.pointee.removed.load(ordering: .acquiring) else { return nil }
    return slot.pointee.current.load(ordering: .acquiring).pointee.policy
  }

  /// Adds a name the directory does not have yet, with its cell.
  func append(_ name: String, _ cell: PolicyCell) {
    writer.withLock { retired in
      var storage = current.load(ordering: .relaxed)
      let count = storage.pointee.count.load(ordering: .relaxed)
      if count == storage.pointee.capacity {
        let larger = UnsafeMutablePointer<Storage>.allocate(capacity: 1)
        larger.initialize(to: Storage(capacity: 2 * storage.pointee.capacity))
        for position in 0..<count {
          larger.pointee.append(storage.pointee.names[position], storage.pointee.cells[position])
        }
        current.store(larger, ordering: .releasing)
        retired.append(Int(bitPattern: storage))
        storage = larger
      }
      storage.pointee.append(name, cell)
    }
  }
}
