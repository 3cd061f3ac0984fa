import RetryPolicy
import RetryPolicySimulation
/// An operation that follows a script: it fails with the given errors, one an attempt, then
/// succeeds (or keeps failing), and records when each attempt was made.
///
///     let clock = ImmediateClock()
///     let operation = ScriptedOperation(
///       failures: [APIError.serverError, APIError.serverError], thenReturning: "ok", clock: clock)
///     let value = try await policy.run(in: RetryEnvironment(clock: clock)) { try await operation() }
///     // value == "ok", operation.attemptCount == 3
public final class ScriptedOperation<Success: Sendable>: Sendable {
  private struct State {
    var attemptTimes: [Duration] = []
  }

  private let failures: [any Error]
  private let outcome: Result<Success, any Error>
  private let elapsed: @Sendable () -> Duration
  private let state = Locked(State())

  /// Creates an operation that throws `failures` in order, one an attempt, then returns
  /// `value` on every later attempt.
  ///
  /// - Parameters:
  ///   - failures: The errors the first attempts throw, in order.
  ///   - value: What every attempt after them returns.
  ///   - clock: The clock attempt times are read on, counted from this call.
  public init(
    failures: [any Error], thenReturning value: Success,
    clock: some Clock<Duration> = ContinuousClock()
  ) {
    self.failures = failures
    self.outcome = .success(value)
    self.elapsed = Self.makeStopwatch(clock)
  }

  /// Creates an operation that throws `error` on every attempt.
  ///
  /// - Parameter clock: The clock attempt times are read on, counted from this call.
  public init(alwaysFailingWith error: any Error, clock: some Clock<Duration> = ContinuousClock()) {
    self.failures = []
    self.outcome = .failure(error)
    self.elapsed = Self.makeStopwatch(clock)
  }

  /// Makes the next attempt: records its time, then throws or returns as scripted.
  public func callAsFunction() async throws -> Success {
    let time = elapsed()
    let index = state.withLock { state in
      state.attemptTimes.append(time)
      return state.attemptTimes.count - 1
    }
    if index < failures.count { throw failures[index] }
    return try outcome.get()
  }

  /// The attempts made so far.
  public var attemptCount: Int {
    state.withLock { $0.attemptTimes.count }
  }

  /// When each attempt was made, as the time since the operation was created.
  public var attemptTimes: [Duration] {
    state.withLock { $0.attemptTimes }
  }

  /// The time between each attempt and the next: the waits a retry policy chose.
  public var waits: [Duration] {
    let times = attemptTimes
    return zip(times.dropFirst(), times).map { $0 - $1 }
  }

  private static func makeStopwatch<C: Clock<Duration>>(_ clock: C) -> @Sendable () -> Duration {
    let start = clock.now
    return { start.duration(to: clock.now) }
  }
}

extension ScriptedOperation where Success == Void {
  /// Creates an operation that throws `failures` in order, one an attempt, then succeeds.
  ///
  /// - Parameters:
  ///   - failures: The errors the first attempts throw, in order.
  ///   - clock: The clock attempt times are read on, counted from this call.
  public convenience init(failures: [any Error], clock: some Clock<Duration> = ContinuousClock()) {
    self.init(failures: failures, thenReturning: (), clock: clock)
  }
}
