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
  let cell: PolicyCell
  let store: PolicyStore

  init(name: String, cell: PolicyCell, store: PolicyStore) {
    self.name = name
    self.cell = cell
    self.store = store
  }

  /// The current policy of the name (the last one, when a reload removed it).
  @inline(__always)
  public var policy: CompiledPolicy {
    cell.entry.policy
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
    in environment: RetryEnvironment = RetryEnvironment(),
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
/// Every entry ever published stays alive as long as the cell: a reader loads the
/// reference without retaining it first, so no entry it may be reading is ever freed. A
/// name gets a new entry only when a reload changes its policy or its state, so the cell
/// grows by one small object per change of that policy.
final class PolicyCell: Sendable {
  private let current: Atomic<Unmanaged<StoreEntry>>
  private let removed = Atomic<Bool>(false)
  /// Every entry published, which keeps them alive.
  private let published: Locked<[StoreEntry]>

  /// A cell whose current entry is `first`.
  init(_ first: StoreEntry) {
    published = Locked([first])
    current = Atomic(Unmanaged.passUnretained(first))
  }

  /// The entry last published.
  @inline(__always)
  var entry: StoreEntry {
    current.load(ordering: .acquiring).takeUnretainedValue()
  }

  /// Whether the name was removed by the last reload.
  var isRemoved: Bool {
    removed.load(ordering: .acquiring)
  }

  /// Makes `entry` the current one.
  func publish(_ entry: StoreEntry) {
    published.withLock { $0.append(entry) }
    current.store(Unmanaged.passUnretained(entry), ordering: .releasing)
    removed.store(false, ordering: .releasing)
  }

  /// Marks the name removed by a reload.
  func markRemoved() {
    removed.store(true, ordering: .releasing)
  }
}

extension PolicyState {
  /// Whether both hold the same objects.
  func isSame(as other: PolicyState) -> Bool {
    budget === other.budget && breaker === other.breaker && limiter === other.limiter
      && throttle === other.throttle && rateLimiter === other.rateLimiter
  }
}
