import Foundation

/// One object per compiled policy value for the life of the process, made on first use: the
/// default ``RetryBudget`` and ``CircuitBreaker`` of a policy that is run without one.
///
/// Equal policies (every copy, and the same text compiled twice) share their object. See
/// <doc:ProcessWideState> for why these tables exist and what they cost.
final class ProcessWideTable<Key: Hashable & Sendable, Value: AnyObject & Sendable>:
  @unchecked Sendable
{
  // Sound: `values` is read and written only while `lock` is held.
  private let lock = NSLock()
  private var values: [Key: Value] = [:]

  /// The object of `key` (a policy value), made by `make` the first time it is asked for.
  func value(for key: Key, making make: () -> Value) -> Value {
    lock.lock()
    defer { lock.unlock() }
    if let value = values[key] { return value }
    let value = make()
    values[key] = value
    return value
  }
}
