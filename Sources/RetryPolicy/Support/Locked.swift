import Foundation

/// A value behind a lock: the store's snapshot, the circuit breakers' state machines and
/// groups, the test-support types and the tool's simulation.
///
/// It uses `NSLock` (a pthread mutex) rather than `Synchronization.Mutex`: on Linux,
/// ThreadSanitizer does not see `Mutex`'s locking and reports a "Swift access race" on the
/// state it protects whenever two tasks contend for it, while it understands pthread mutexes.
/// With this lock, `swift test --sanitize=thread` stays free of false reports.
package final class Locked<Value: Sendable>: @unchecked Sendable {
  // Sound: `value` is read and written only inside `withLock`, while `lock` is held.
  private let lock = NSLock()
  private var value: Value

  /// Creates the lock around `value`.
  package init(_ value: Value) {
    self.value = value
  }

  /// Runs `body` with the value, the lock held.
  package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
    lock.lock()
    defer { lock.unlock() }
    return try body(&value)
  }
}
