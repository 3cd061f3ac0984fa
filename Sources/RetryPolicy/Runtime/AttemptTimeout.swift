import Dispatch
import Foundation

// Attempts under `timeout`: the operation runs in a child task beside a timer; when the timer
// fires first, the operation is cancelled and awaited to its end. Two promises:
//
// - A late success is a success: a value the operation returns after the timer fired, before
//   the run moved on, is the run's value, never discarded to run the operation again.
// - Nothing outlives the attempt: on the system clocks the timer is a Dispatch timer that
//   cancellation frees at once (a cancelled `Task.sleep` on Linux is held until its deadline,
//   about 0.7 KB an attempt for as long as the limit); other clocks sleep with their own
//   `sleep`, and `ManualClock` frees a cancelled sleeper at once.

/// The caller's operation, carried into the child task that runs one attempt under `timeout`.
///
/// Unchecked, because the operation need not be `Sendable`. It is sound: the operation is
/// never called concurrently with itself or with its caller. The caller is suspended awaiting
/// the attempt, and the attempt's child task is awaited to its end, even after a timeout,
/// before the run goes on; an actor-isolated operation still runs on its actor.
struct UncheckedOperation<Success>: @unchecked Sendable {
  let call: () async throws -> Success
}

/// A result handed from the attempt's child task to the awaiting caller, exactly once.
struct UncheckedValue<Value>: @unchecked Sendable {
  let value: Value
}

private enum AttemptEvent<Success>: Sendable {
  case completed(Result<UncheckedValue<Success>, any Error>)
  case timerFired
  case timerStopped
}

/// Runs one attempt of `operation`, cut off after `limit` on `clock`.
nonisolated(nonsending) func timingOut<C: Clock<Duration>, Success>(
  on clock: C, limit: Duration, _ operation: () async throws -> Success
) async throws -> Success {
  let body: nonisolated(nonsending) (@escaping () async throws -> Success) async throws -> Success =
    { escapable in
      try await runAttempt(UncheckedOperation(call: escapable), limit: limit, clock: clock)
    }
  return try await withoutActuallyEscaping(operation, do: body)
}

/// Runs the operation in a child task beside a timer; when the timer fires first, cancels the
/// operation and waits for it to return: its value is returned, its error becomes
/// ``AttemptTimeoutError``.
private func runAttempt<C: Clock<Duration>, Success>(
  _ operation: UncheckedOperation<Success>, limit: Duration, clock: C
) async throws -> Success {
  let result = await withTaskGroup(of: AttemptEvent<Success>.self) { group in
    group.addTask {
      do {
        return .completed(.success(UncheckedValue(value: try await operation.call())))
      } catch {
        return .completed(.failure(error))
      }
    }
    group.addTask {
      do {
        try await sleepFreeingOnCancel(for: limit, on: clock)
        return .timerFired
      } catch {
        return .timerStopped
      }
    }
    var hasTimedOut = false
    while let event = await group.next() {
      switch event {
      case .completed(.success(let value)):
        group.cancelAll()
        return Result<UncheckedValue<Success>, any Error>.success(value)
      case .completed(.failure(let error)):
        group.cancelAll()
        return .failure(hasTimedOut ? AttemptTimeoutError(cutOffAt: limit) : error)
      case .timerFired:
        hasTimedOut = true
        group.cancelAll()
      case .timerStopped:
        continue
      }
    }
    return .failure(hasTimedOut ? AttemptTimeoutError(cutOffAt: limit) : CancellationError())
  }
  return try result.get().value
}
