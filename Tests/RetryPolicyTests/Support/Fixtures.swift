import RetryPolicy
import RetryPolicySimulation
import RetryPolicyTesting

/// Errors shaped like a typical client's.
enum APIError: Error, Equatable {
  case serverError(code: Int)
  case unauthorized
  case notFound
}

/// An enum that customizes its description: public reflection shows the case name of a case
/// with a payload, and only the type name of a case without one.
enum StorageError: Error, CustomStringConvertible {
  case diskFull
  case corrupted(path: String)

  var description: String { "storage failed" }
}

struct ConnectionLost: Error, Equatable {}

/// A remote call's failure, for tests that need one error and nothing more.
enum RPCError: Error {
  case unavailable
}

/// A class error and a subclass, for matching by superclass name.
class BaseServiceError: Error, @unchecked Sendable {}
final class QuotaError: BaseServiceError, @unchecked Sendable {}

/// A case named like the built-in class `timeout`.
enum GatewayError: Error {
  case timeout
  case badGateway
}

/// Values larger than the 16 bytes the case-name cache keys by.
enum LargePayloadError: Error {
  case overloaded(first: Int, second: Int, third: Int)
  case empty
}

/// Non-ASCII type and case names.
enum Ünïcode: Error {
  case café
}

struct Envelope<Payload: Sendable>: Error {
  var payload: Payload
}

/// An error carrying a server's Retry-After.
struct ThrottledError: RetryAfterProviding, Equatable {
  var retryAfter: Duration?
}

/// A rule with the given count and behavior; everything else optional, as in `RetryRule`.
func policy(
  _ rules: RetryRule..., within: Duration? = nil, timeout: Duration? = nil,
  budget: Double? = nil
) -> CompiledPolicy {
  CompiledPolicy(rules: rules, deadline: within, attemptTimeout: timeout, budgetRatio: budget)
}

/// A thread-safe log of strings, for checking the order of attempts and hooks.
final class Log: Sendable {
  private let lines = Locked<[String]>([])

  func append(_ line: String) {
    lines.withLock { $0.append(line) }
  }

  var entries: [String] {
    lines.withLock { $0 }
  }
}

extension Duration {
  /// Seconds as a `Double`, for readable expectations.
  var inSeconds: Double { self / .seconds(1) }
}

/// A door an operation waits at, ignoring cancellation, until a test opens it.
final class Gate: Sendable {
  private struct State {
    var isOpen = false
    var waiters: [CheckedContinuation<Void, Never>] = []
  }

  private let state = Locked(State())

  /// Waits until the gate opens; cancellation does not end the wait.
  func wait() async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      let isOpen = state.withLock { state in
        if !state.isOpen { state.waiters.append(continuation) }
        return state.isOpen
      }
      if isOpen { continuation.resume() }
    }
  }

  /// Opens the gate for every waiter, present and future.
  func open() {
    let waiters = state.withLock { state in
      state.isOpen = true
      defer { state.waiters = [] }
      return state.waiters
    }
    for waiter in waiters { waiter.resume() }
  }
}

/// Waits, with no timer at all, until the task is cancelled, then throws `CancellationError`.
func waitUntilCancelled() async throws {
  let waiter = CancellationWaiter()
  await withTaskCancellationHandler {
    await withCheckedContinuation { continuation in waiter.park(continuation) }
  } onCancel: {
    waiter.cancel()
  }
  throw CancellationError()
}

/// A continuation parked until cancellation, resumed exactly once from either side.
private final class CancellationWaiter: Sendable {
  private struct State {
    var continuation: CheckedContinuation<Void, Never>?
    var isCancelled = false
  }
  private let state = Locked(State())

  func park(_ continuation: CheckedContinuation<Void, Never>) {
    let resumeNow = state.withLock { state in
      if state.isCancelled { return true }
      state.continuation = continuation
      return false
    }
    if resumeNow { continuation.resume() }
  }

  func cancel() {
    let continuation = state.withLock { state in
      state.isCancelled = true
      defer { state.continuation = nil }
      return state.continuation
    }
    continuation?.resume()
  }
}

/// Moves `clock` forward by each step in turn, each once a task sleeps on it.
func drive(_ clock: ManualClock, steps: [Duration]) async {
  for step in steps {
    await clock.waitForSleepers(count: 1)
    clock.advance(by: step)
  }
}

/// An event as a short line, for comparing event sequences.
func line(_ event: RetryEvent) -> String {
  switch event {
  case .attemptStarted(let attempt):
    "start \(attempt)"
  case .attemptFailed(let attempt, let error):
    "fail \(attempt) \(error)"
  case .retryScheduled(let attempt, let rule, let delay):
    "retry \(attempt) rule \(rule) after \(delay.inSeconds)"
  case .gaveUp(let attempt, let reason, let error):
    "give up \(attempt) \(reason) \(error)"
  case .finished(let summary):
    "finish \(summary.attempts) waited \(summary.totalDelay.inSeconds) \(summary.outcome)"
  case .attemptRefused(let attempt, let remaining, _):
    "refused \(attempt) open \(remaining.map { "\($0.inSeconds)" } ?? "held")"
  case .circuitOpened(let attempt, let cause):
    "opened \(attempt) \(cause.failures)/\(cause.attempts)"
  case .circuitHalfOpened(let attempt):
    "half-opened \(attempt)"
  case .circuitClosed(let attempt):
    "closed \(attempt)"
  case .attemptShed(let attempt, let reason):
    "shed \(attempt) \(reason)"
  case .limitChanged(let attempt, let limit):
    "limit \(attempt) \(limit)"
  case .hedgeNotApplied(let hedge):
    "hedge not applied \(hedge.count)"
  }
}
