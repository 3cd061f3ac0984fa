import RetryPolicy
import RetryPolicyTesting
import Testing

@Suite("Runtime: clauses")
struct RuntimeClauseTests {
  // MARK: timeout

  @Test("'timeout' cancels each attempt at the limit and fails it with class 'timeout'")
  func timeoutCutsOffAttempts() async throws {
    let clock = ManualClock()
    let operation = ScriptedOperation<Void>(alwaysFailingWith: ConnectionLost(), clock: clock)
    let policy = policy(
      RetryRule(behavior: .delayed(maxCount: 2, delay: .seconds(1)), errorClasses: ["timeout"]),
      timeout: .seconds(5))
    let run = Task {
      try await policy.run(in: RetryEnvironment(clock: clock)) {
        _ = try? await operation()  // records the attempt's time
        try await waitUntilCancelled()
      }
    }
    await drive(clock, steps: [5, 1, 5, 1, 5].map { .seconds($0) })
    await #expect(throws: AttemptTimeoutError(timeout: .seconds(5))) { try await run.value }
    #expect(operation.attemptTimes.map(\.inSeconds) == [0, 6, 12])
  }

  @Test("an attempt that ends within its 'timeout' keeps its result")
  func attemptWithinTimeout() async throws {
    let operation = ScriptedOperation(failures: [ConnectionLost()], thenReturning: "fast")
    let policy = policy(RetryRule(behavior: .immediate(maxCount: 1)), timeout: .seconds(3600))
    #expect(try await policy.run { try await operation() } == "fast")
    #expect(operation.attemptCount == 2)
  }

  @Test("a timed-out attempt that ignores cancellation is waited for, and its late value returned")
  func timeoutIgnoredCancellation() async throws {
    let clock = ManualClock()
    let cancelled = Gate()
    let release = Gate()
    let log = Log()
    let policy = policy(RetryRule(behavior: .immediate(maxCount: 0)), timeout: .seconds(5))
    let run = Task {
      try await policy.run(in: RetryEnvironment(clock: clock)) {
        await withTaskCancellationHandler {
          await release.wait()
        } onCancel: {
          cancelled.open()
        }
        log.append("operation returned")
        return "late"
      }
    }
    await drive(clock, steps: [.seconds(5)])
    await cancelled.wait()
    log.append("released")
    release.open()
    #expect(try await run.value == "late")
    #expect(log.entries == ["released", "operation returned"])
  }

  @Test("'timeout' failures are not retried by a rule limited to other classes")
  func timeoutNotMatched() async throws {
    let clock = ManualClock()
    let policy = policy(
      RetryRule(behavior: .immediate(maxCount: 3), errorClasses: ["serverError"]),
      timeout: .seconds(1))
    let run = Task {
      try await policy.run(in: RetryEnvironment(clock: clock)) { try await waitUntilCancelled() }
    }
    await drive(clock, steps: [.seconds(1)])
    await #expect(throws: AttemptTimeoutError(timeout: .seconds(1))) { try await run.value }
  }

  // MARK: cancellation

  @Test(
    "cancelling a run during a one-hour wait throws CancellationError at once, with no further attempt"
  )
  func cancelDuringWait() async throws {
    let clock = ManualClock()
    let operation = ScriptedOperation<Void>(alwaysFailingWith: ConnectionLost(), clock: clock)
    let recorder = RetryEventRecorder()
    let policy = policy(RetryRule(behavior: .delayed(maxCount: 3, delay: .seconds(3600))))
    let run = Task {
      try await policy.run(in: RetryEnvironment(clock: clock, observer: recorder.observer)) {
        try await operation()
      }
    }
    await clock.waitForSleepers(count: 1)
    run.cancel()
    await #expect(throws: CancellationError.self) { try await run.value }
    #expect(operation.attemptCount == 1)
    #expect(clock.now == ManualClock.Instant(offset: .zero))
    #expect(clock.sleeperCount == 0)
    #expect(recorder.summaries.map(\.outcome) == [.failed(.cancelled)])
  }

  @Test("cancelling a run during an attempt under 'timeout' starts no other attempt")
  func cancelDuringTimedAttempt() async throws {
    let clock = ManualClock()
    let log = Log()
    let policy = policy(RetryRule(behavior: .immediate(maxCount: 3)), timeout: .seconds(60))
    let run = Task {
      try await policy.run(in: RetryEnvironment(clock: clock)) {
        log.append("attempt")
        try await waitUntilCancelled()
      }
    }
    await clock.waitForSleepers(count: 1)
    run.cancel()
    await #expect(throws: CancellationError.self) { try await run.value }
    #expect(log.entries == ["attempt"])
  }

  @Test("an error thrown by an attempt in a cancelled task ends the run with CancellationError")
  func failureAfterCancellation() async throws {
    let log = Log()
    let policy = policy(RetryRule(behavior: .immediate(maxCount: 3)))
    let run = Task {
      try await policy.run {
        log.append("attempt")
        withUnsafeCurrentTask { $0?.cancel() }
        throw ConnectionLost()
      }
    }
    await #expect(throws: CancellationError.self) { try await run.value }
    #expect(log.entries == ["attempt"])
  }

  // MARK: after

  @Test("'after' runs the hook before each retry, after the delay")
  func hookOrder() async throws {
    let clock = ImmediateClock()
    let log = Log()
    let environment = RetryEnvironment(
      clock: clock,
      hooks: ["refreshToken": { log.append("hook at \(clock.now.offset.inSeconds)") }])
    let policy = policy(
      RetryRule(behavior: .delayed(maxCount: 3, delay: .seconds(1)), hook: "refreshToken"))
    var attempt = 0
    let value = try await policy.run(in: environment) {
      attempt += 1
      log.append("attempt \(attempt) at \(clock.now.offset.inSeconds)")
      if attempt < 3 { throw APIError.unauthorized }
      return attempt
    }
    #expect(value == 3)
    #expect(
      log.entries == [
        "attempt 1 at 0.0", "hook at 1.0", "attempt 2 at 1.0", "hook at 2.0", "attempt 3 at 2.0",
      ])
  }

  @Test("only the rule that names a hook runs it")
  func hookPerRule() async throws {
    let log = Log()
    let environment = RetryEnvironment(hooks: ["refreshToken": { log.append("refresh") }])
    let policy = policy(
      RetryRule(
        behavior: .immediate(maxCount: 1), errorClasses: ["unauthorized"], hook: "refreshToken"),
      RetryRule(behavior: .immediate(maxCount: 2), errorClasses: ["serverError"]))
    let operation = ScriptedOperation(
      failures: [APIError.serverError(code: 500), APIError.unauthorized], thenReturning: 1)
    _ = try await policy.run(in: environment) { try await operation() }
    #expect(log.entries == ["refresh"])
    #expect(operation.attemptCount == 3)
  }

  @Test("a hook that throws ends the run with its error")
  func throwingHook() async throws {
    struct RefreshFailed: Error, Equatable {}
    let environment = RetryEnvironment(hooks: ["refreshToken": { throw RefreshFailed() }])
    let recorder = RetryEventRecorder()
    var observed = environment
    observed.observer = recorder.observer
    let operation = ScriptedOperation<Void>(alwaysFailingWith: APIError.unauthorized)
    let policy = policy(RetryRule(behavior: .immediate(maxCount: 3), hook: "refreshToken"))
    await #expect(throws: RefreshFailed()) {
      try await policy.run(in: observed) { try await operation() }
    }
    #expect(operation.attemptCount == 1)
    #expect(recorder.summaries.map(\.outcome) == [.failed(.hookFailed)])
  }

  @Test("a hook name with no registered hook throws UnregisteredHookError before any wait")
  func unregisteredHook() async throws {
    let clock = ImmediateClock()
    let operation = ScriptedOperation<Void>(alwaysFailingWith: APIError.unauthorized)
    let policy = policy(
      RetryRule(behavior: .delayed(maxCount: 3, delay: .seconds(5)), hook: "refreshToken"))
    await #expect(throws: UnregisteredHookError(name: "refreshToken")) {
      try await policy.run(in: RetryEnvironment(clock: clock)) { try await operation() }
    }
    #expect(operation.attemptCount == 1)
    #expect(clock.now.offset == .zero)
  }

  // MARK: honoring retry-after

  @Test(
    "'honoring retry-after' uses the carried delay, capped by 'max'; nil keeps the computed one; negative is zero"
  )
  func retryAfter() async throws {
    let clock = ImmediateClock()
    let operation = ScriptedOperation(
      failures: [
        ThrottledError(retryAfter: .seconds(7)), ThrottledError(retryAfter: nil),
        ThrottledError(retryAfter: .seconds(-3)),
      ],
      thenReturning: "ok", clock: clock)
    let policy = policy(
      RetryRule(
        behavior: .exponential(maxCount: 3, initial: .seconds(1), multiplier: 2),
        maxDelay: .seconds(5), honorsRetryAfter: true))
    _ = try await policy.run(in: RetryEnvironment(clock: clock)) { try await operation() }
    #expect(operation.waits.map(\.inSeconds) == [5, 2, 0])
  }

  @Test("without 'honoring retry-after' a carried delay is ignored")
  func retryAfterIgnored() async throws {
    let clock = ImmediateClock()
    let operation = ScriptedOperation<Void>(
      alwaysFailingWith: ThrottledError(retryAfter: .seconds(30)), clock: clock)
    let policy = policy(
      RetryRule(behavior: .exponential(maxCount: 3, initial: .seconds(1), multiplier: 2)))
    _ = try? await policy.run(in: RetryEnvironment(clock: clock)) { try await operation() }
    #expect(operation.waits.map(\.inSeconds) == [1, 2, 4])
  }

  @Test("a carried delay still counts against 'within'")
  func retryAfterWithin() async throws {
    let clock = ImmediateClock()
    let operation = ScriptedOperation<Void>(
      alwaysFailingWith: ThrottledError(retryAfter: .seconds(90)), clock: clock)
    let policy = policy(
      RetryRule(behavior: .immediate(maxCount: 3), honorsRetryAfter: true), within: .seconds(60))
    await #expect(throws: ThrottledError(retryAfter: .seconds(90))) {
      try await policy.run(in: RetryEnvironment(clock: clock)) { try await operation() }
    }
    #expect(operation.attemptCount == 1)
  }
}
