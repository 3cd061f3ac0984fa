import Dispatch
import Foundation
import Synchronization

// Waits that free their memory when they end, however they end.
//
// On Linux, a cancelled `Task.sleep` (and so `ContinuousClock.sleep`) resumes its task at
// once but keeps its timer, about 0.7 KB, until the deadline it was given: a run cancelled
// during `delay 1h`, or a hedge timer cut short by a winning attempt, held that memory for an
// hour. On the continuous and suspending clocks every wait of the runtime (a retry's delay, a
// Retry-After wait, a hedge timer, a `timeout` timer) is therefore a one-shot Dispatch timer
// that cancellation cancels and releases at once. Other clocks keep their own `sleep`:
// `ManualClock` frees a cancelled sleeper at once.

/// Sleeps `duration` on `clock`, freeing its timer as soon as the wait ends.
///
/// On the continuous and suspending clocks the wait is a Dispatch timer that cancellation
/// cancels and frees at once; throws `CancellationError` when cancelled.
nonisolated(nonsending) func sleepFreeingOnCancel<C: Clock<Duration>>(
  for duration: Duration, on clock: C
) async throws {
  guard isSystemClock(C.self) else {
    try await clock.sleep(for: duration)
    return
  }
  try await sleepOnTimer(for: duration)
}

/// Whether `C` is the continuous or the suspending clock: types compared, not a cast of the
/// clock (a cast of another clock type, a class such as a test's clock, costs a dynamic cast
/// on every wait).
@inlinable
@inline(__always)
func isSystemClock<C: Clock<Duration>>(_: C.Type) -> Bool {
  let type = ObjectIdentifier(C.self)
  return type == ObjectIdentifier(ContinuousClock.self)
    || type == ObjectIdentifier(SuspendingClock.self)
}

/// Sleeps `duration` on a one-shot Dispatch timer, freed when it fires or is cancelled.
@usableFromInline
nonisolated(nonsending) func sleepOnTimer(for duration: Duration) async throws {
  let timer = CancellableTimer(census: SystemTimerCensus.current)
  try await withTaskCancellationHandler {
    try await withUnsafeThrowingContinuation { continuation in
      timer.start(after: duration, continuation)
    }
  } onCancel: {
    timer.cancel()
  }
}

/// Sleeps until `deadline` on `clock`, as ``sleepFreeingOnCancel(for:on:)`` does: on the
/// system clocks for the time left until the deadline, measured now.
@inlinable
nonisolated(nonsending) func sleepFreeingOnCancel<C: Clock<Duration>>(
  until deadline: C.Instant, on clock: C
) async throws {
  guard isSystemClock(C.self) else {
    try await clock.sleep(until: deadline, tolerance: nil)
    return
  }
  try await sleepOnTimer(for: clock.now.duration(to: deadline))
}

/// Counts the system timers armed by the waits of a task and its child tasks, and those not
/// yet freed: how tests see that a wait frees its timer when it ends.
///
///     let census = SystemTimerCensus()
///     try await SystemTimerCensus.$current.withValue(census) { try await policy.run { … } }
///     census.live  // 0 once every wait has ended
package final class SystemTimerCensus: Sendable {
  /// The census the current task's waits report to, if any.
  @TaskLocal package static var current: SystemTimerCensus?

  private let counts = Mutex((armed: 0, live: 0))

  /// Creates an empty census.
  package init() {}

  /// The timers armed so far.
  package var armed: Int { counts.withLock { $0.armed } }
  /// The timers armed and not yet freed.
  package var live: Int { counts.withLock { $0.live } }

  fileprivate func timerArmed() {
    counts.withLock {
      $0.armed += 1; $0.live += 1
    }
  }
  fileprivate func timerFreed() { counts.withLock { $0.live -= 1 } }
}

/// A one-shot Dispatch timer that resumes a continuation when it fires, or, cancelled,
/// throws `CancellationError` and releases the timer at once.
private final class CancellableTimer: @unchecked Sendable {
  // Sound: `source`, `continuation` and `isCancelled` are read and written only while `lock`
  // is held; `census` is immutable. The continuation is taken out under the lock by whichever
  // of `fire` and `cancel` comes first, so it is resumed exactly once (hence unsafe, not
  // checked: the check's extra allocation is per wait).
  private let lock = NSLock()
  private var source: (any DispatchSourceTimer)?
  private var continuation: UnsafeContinuation<Void, any Error>?
  private var isCancelled = false
  private let census: SystemTimerCensus?

  init(census: SystemTimerCensus?) {
    self.census = census
    census?.timerArmed()
  }

  deinit {
    census?.timerFreed()
  }

  /// Starts the timer; resumes `continuation` at once when already cancelled.
  func start(after duration: Duration, _ continuation: UnsafeContinuation<Void, any Error>) {
    lock.lock()
    if isCancelled {
      lock.unlock()
      continuation.resume(throwing: CancellationError())
      return
    }
    let timer = DispatchSource.makeTimerSource(queue: .global())
    timer.schedule(deadline: Self.interval(duration).map { .now() + $0 } ?? .distantFuture)
    timer.setEventHandler { [self] in fire() }
    self.source = timer
    self.continuation = continuation
    lock.unlock()
    timer.resume()
  }

  /// Cancels the timer and throws `CancellationError` in the sleeping task.
  func cancel() {
    lock.lock()
    isCancelled = true
    let (timer, continuation) = (source, self.continuation)
    source = nil
    self.continuation = nil
    lock.unlock()
    timer?.cancel()
    continuation?.resume(throwing: CancellationError())
  }

  private func fire() {
    lock.lock()
    let (timer, continuation) = (source, self.continuation)
    source = nil
    self.continuation = nil
    lock.unlock()
    timer?.cancel()
    continuation?.resume()
  }

  /// `duration` as a Dispatch interval in nanoseconds, at least 0; nil for a century or
  /// more, which is as good as never.
  private static func interval(_ duration: Duration) -> DispatchTimeInterval? {
    let (seconds, attoseconds) = duration.exactComponents
    guard seconds >= 0, attoseconds >= 0 else { return .nanoseconds(0) }
    guard seconds < 100 * 365 * 86_400 else { return nil }
    return .nanoseconds(Int(seconds * 1_000_000_000 + attoseconds / 1_000_000_000))
  }
}
