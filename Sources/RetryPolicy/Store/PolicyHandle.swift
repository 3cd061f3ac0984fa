import Synchronization

/// A policy of a ``PolicyStore`` resolved once by name, that follows the store's reloads.
///
/// A service that runs the same policy on every call resolves it once and keeps the handle:
///
///     let payments = try store.handle("payments")
///     // on every call:
///     let receipt = try await payments.run { try await api.charge(order) }
///
/// Reading ``policy`` is one atomic load (no lock, no look-up); it gives the policy of the
/// last reload applied. When a reload removes the name, ``policy`` keeps the last version,
/// ``isRemoved`` is true and ``run(in:_:)`` throws, until a reload brings the name back.
///
/// A handle is a reference: copies share it, and passing one costs one retain.
public final class PolicyHandle: Sendable {
  /// The policy's name.
  public let name: String
  @usableFromInline let cell: PolicyCell
  let store: PolicyStore

  init(name: String, cell: PolicyCell, store: PolicyStore) {
    self.name = name
    self.cell = cell
    self.store = store
  }

  /// The current policy of the name (the last one, when a reload removed it).
  @inlinable
  public var policy: CompiledPolicy {
    cell.policy
  }

  /// Whether the last reload applied removed the name from the file.
  public var isRemoved: Bool {
    cell.isRemoved
  }

  /// Runs `operation` under the current policy, as ``PolicyStore/run(_:in:_:)`` does.
  ///
  /// Throws ``PolicyStoreError/unknownPolicy(_:suggestion:)`` before calling the operation
  /// when a reload removed the name.
  public func run<Success>(
    in environment: RetryEnvironment = .standard,
    _ operation: () async throws -> Success
  ) async throws -> Success {
    guard !cell.isRemoved else {
      throw PolicyStoreError.unknownPolicy(
        name, suggestion: Suggestion.nearest(to: name, in: store.names))
    }
    return try await store.run(cell.entry, in: environment, operation)
  }
}

/// The current entry of one name of a store, published by each reload that changes it and
/// read with one atomic load.
///
/// Every version ever published stays allocated as long as the cell: a reader loads the
/// pointer and copies the policy out without retaining anything first, so no version it may
/// be reading is ever freed. A name gets a new version only when a reload changes its policy
/// or its state, so the cell grows by one small allocation per change of that policy.
@usableFromInline
final class PolicyCell: @unchecked Sendable {
  // Sound: `slot`'s fields are atomic, and the slot is freed only in `deinit`, when neither a
  // reader nor the store's directory (which keeps every cell) holds the cell; a version's
  // memory is written once, before it is published with a releasing store, and freed only in
  // `deinit`; `published` is read and written only while its lock is held.
  /// The current version and the removed flag, at an address that never moves while the cell
  /// lives: the store's directory reads them there without retaining the cell.
  @usableFromInline let slot: UnsafeMutablePointer<Slot>
  /// The address of every version published, freed with the cell.
  private let published: Locked<[Int]>

  /// What a reader of the cell loads: its current version, and whether it is removed.
  @usableFromInline
  struct Slot: ~Copyable {
    @usableFromInline let current: Atomic<UnsafeMutablePointer<Version>>
    let removed: Atomic<Bool>
  }

  /// A policy and its entry, as one reload published them.
  @usableFromInline
  struct Version {
    @usableFromInline let policy: CompiledPolicy
    let entry: StoreEntry
  }

  /// A cell whose current entry is `first`.
  init(_ first: StoreEntry) {
    let version = Self.allocate(first)
    published = Locked([Int(bitPattern: version)])
    slot = .allocate(capacity: 1)
    slot.initialize(to: Slot(current: Atomic(version), removed: Atomic(false)))
  }

  deinit {
    published.withLock { versions in
      for address in versions {
        guard let version = UnsafeMutablePointer<Version>(bitPattern: address) else { continue }
        version.deinitialize(count: 1)
        version.deallocate()
      }
    }
    slot.deinitialize(count: 1)
    slot.deallocate()
  }

  private static func allocate(_ entry: StoreEntry) -> UnsafeMutablePointer<Version> {
    let version = UnsafeMutablePointer<Version>.allocate(capacity: 1)
    version.initialize(to: Version(policy: entry.policy, entry: entry))
    return version
  }

  /// The policy last published.
  @inlinable
  var policy: CompiledPolicy {
    slot.pointee.current.load(ordering: .acquiring).pointee.policy
  }

  /// The entry last published.
  var entry: StoreEntry {
    slot.pointee.current.load(ordering: .acquiring).pointee.entry
  }

  /// Whether the name was removed by the last reload.
  var isRemoved: Bool {
    slot.pointee.removed.load(ordering: .acquiring)
  }

  /// Makes `entry` the current one.
  func publish(_ entry: StoreEntry) {
    let version = Self.allocate(entry)
    published.withLock { $0.append(Int(bitPattern: version)) }
    slot.pointee.current.store(version, ordering: .releasing)
    slot.pointee.removed.store(false, ordering: .releasing)
  }

  /// Marks the name removed by a reload.
  func markRemoved() {
    slot.pointee.removed.store(true, ordering: .releasing)
  }
}

extension PolicyState {
  /// Whether both hold the same objects.
  func isSame(as other: PolicyState) -> Bool {
    budget === other.budget && breaker === other.breaker && limiter === other.limiter
      && throttle === other.throttle && rateLimiter === other.rateLimiter
  }
}
