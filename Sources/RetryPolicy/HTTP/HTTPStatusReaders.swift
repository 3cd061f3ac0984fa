import Foundation
import Synchronization

/// Whether each error type conforms to ``HTTPStatusProviding``, found once per type, so that
/// matching a status form or `transient` reads the status with a cast to the error's own type
/// rather than a conformance lookup (`as? any HTTPStatusProviding`) on every failed attempt.
///
/// The entries live in a fixed table that only grows: a reader loads the count (acquiring)
/// and scans that many entries, without a lock; a writer fills the next entry under `lock`,
/// then publishes it by storing the count (releasing). Once ``capacity`` types are known,
/// further types are cast as before, uncached.
final class HTTPStatusReaders: @unchecked Sendable {
  // Sound: an entry is written once, under `lock`, before the count that covers it is stored
  // with release ordering; readers read only entries below a count loaded with acquiring
  // ordering, and entries are never changed or removed while the instance lives.
  static let shared = HTTPStatusReaders()

  /// The most error types kept.
  static let capacity = 64

  /// One error type and, when it conforms, its type as an `HTTPStatusProviding` type.
  private struct Entry {
    var type: ObjectIdentifier
    var reader: (any HTTPStatusProviding.Type)?
  }

  private let lock = NSLock()
  private let count = Atomic<Int>(0)
  private let entries: UnsafeMutablePointer<Entry>

  init() {
    entries = UnsafeMutablePointer<Entry>.allocate(capacity: Self.capacity)
  }

  deinit {
    entries.deinitialize(count: count.load(ordering: .acquiring))
    entries.deallocate()
  }

  /// The status of `error` when its type conforms to ``HTTPStatusProviding``, or nil;
  /// `type` identifies the error's dynamic type (`type(of: error)`, which the caller has).
  @inline(__always)
  func statusCode(of error: any Error, type: ObjectIdentifier) -> Int? {
    let known = count.load(ordering: .acquiring)
    var index = 0
    while index < known {
      let entry = entries[index]
      if entry.type == type {
        guard let reader = entry.reader else { return nil }
        return reader.statusCode(ofInstance: error)
      }
      index += 1
    }
    let provider = error as? any HTTPStatusProviding
    remember(type, reader: provider.map { Swift.type(of: $0) })
    return provider?.statusCode
  }

  /// Adds the type's entry unless it is known or the table is full.
  private func remember(_ id: ObjectIdentifier, reader: (any HTTPStatusProviding.Type)?) {
    lock.lock()
    defer { lock.unlock() }
    let known = count.load(ordering: .relaxed)
    guard known < Self.capacity else { return }
    for index in 0..<known where entries[index].type == id { return }
    (entries + known).initialize(to: Entry(type: id, reader: reader))
    count.store(known + 1, ordering: .releasing)
  }
}

extension HTTPStatusProviding {
  /// The status of `error`, an instance of this type or of a subclass (the caller knows).
  @inline(__always)
  static func statusCode(ofInstance error: any Error) -> Int? {
    statusCode(opening: error)
  }

  /// Opens the error: when its type is this type, as it is for every struct or enum and for
  /// a class instance thrown as its own class, the value is read as this type directly
  /// (a cast would build `Optional<Self>`'s metadata on every call); otherwise it is cast.
  private static func statusCode<E: Error>(opening error: E) -> Int? {
    guard E.self == Self.self else { return statusCode(casting: error) }
    // Sound: `E` and `Self` are the same type, so this reinterprets a value as its own type.
    return unsafeBitCast(error, to: Self.self).statusCode
  }

  /// The status of `error` by a cast to this type; apart, so that the direct path above does
  /// not pay for the cast's `Optional<Self>`.
  @inline(never)
  private static func statusCode<E: Error>(casting error: E) -> Int? {
    (error as? Self)?.statusCode
  }
}
