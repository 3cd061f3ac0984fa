import Foundation
import Synchronization

/// Whether each error type conforms to ``HTTPStatusProviding``, found once per type, so that
/// matching a status form or `transient` reads the status with a cast to the error's own type
/// rather than a conformance lookup (`as? any HTTPStatusProviding`) on every failed attempt.
///
/// The entries form a chain that only grows: each entry is immutable but for its link to the
/// next, an `AtomicLazyReference` that is set once. A reader follows the links without a
/// lock; a writer appends its entry where the chain ends, with the link's one
/// compare-and-exchange, and stops when it meets its type on the way (another writer came
/// first). Once ``capacity`` types are known, further types are cast as before, uncached.
/// Safe code throughout: entries are class instances that the chain retains, and the atomic
/// link is the only thing written after an entry is published.
final class HTTPStatusReaders: Sendable {
  static let shared = HTTPStatusReaders()

  /// The most error types kept.
  static let capacity = 64

  /// One error type and, when it conforms, its type as an `HTTPStatusProviding` type; and
  /// the entry after it, once there is one.
  private final class Entry: Sendable {
    let type: ObjectIdentifier
    let reader: (any HTTPStatusProviding.Type)?
    let next = AtomicLazyReference<Entry>()

    init(type: ObjectIdentifier, reader: (any HTTPStatusProviding.Type)?) {
      self.type = type
      self.reader = reader
    }
  }

  /// The start of the chain: an entry of no error type, whose `next` is the first type's.
  private let head = Entry(type: ObjectIdentifier(HTTPStatusReaders.self), reader: nil)

  init() {}

  /// The number of error types known, at most ``capacity``.
  var count: Int {
    var count = 0
    var entry = head.next.load()
    while let current = entry {
      count += 1
      entry = current.next.load()
    }
    return count
  }

  /// The status of `error` when its type conforms to ``HTTPStatusProviding``, or nil;
  /// `type` identifies the error's dynamic type (`type(of: error)`, which the caller has).
  @inline(__always)
  func statusCode(of error: any Error, type: ObjectIdentifier) -> Int? {
    var entry = head.next.load()
    while let current = entry {
      if current.type == type {
        guard let reader = current.reader else { return nil }
        return reader.statusCode(ofInstance: error)
      }
      entry = current.next.load()
    }
    let provider = error as? any HTTPStatusProviding
    remember(type, reader: provider.map { Swift.type(of: $0) })
    return provider?.statusCode
  }

  /// Appends the type's entry unless it is known or the chain is full.
  private func remember(_ type: ObjectIdentifier, reader: (any HTTPStatusProviding.Type)?) {
    let entry = Entry(type: type, reader: reader)
    var last = head
    for _ in 0..<Self.capacity {
      // Stores `entry` when `last` ends the chain; otherwise reads the entry after it.
      let next = last.next.storeIfNil(entry)
      if next === entry || next.type == type { return }
      last = next
    }
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
