import RetryPolicy
import RetryPolicyTesting
import Testing

@Suite("Runtime: run")
struct RuntimeRunTests {
  @Test(
    "'retry 5 on serverError backoff 1s x1.5' makes 6 attempts and waits 1, 1.5, 2.25, 3.375, 5.0625 s"
  )
  func workedExample() async throws {
    let clock = ImmediateClock()
    let operation = ScriptedOperation<Int>(
      alwaysFailingWith: APIError.serverError(code: 503), clock: clock)
    let policy = policy(
      RetryRule(
        behavior: .exponential(maxCount: 5, initial: .seconds(1), multiplier: 1.5),
        errorClasses: ["serverError"]))
    await #expect(throws: APIError.serverError(code: 503)) {
      try await policy.run(in: RetryEnvironment(clock: clock)) { try await operation() }
    }
    #expect(operation.attemptCount == 6)
    #expect(operation.waits.map(\.inSeconds) == [1, 1.5, 2.25, 3.375, 5.0625])
  }

  @Test(
    "each delay clause spaces the retries as the contract says",
    arguments: [
      (RepeatBehavior.immediate(maxCount: 3), [0.0, 0, 0]),
      (.delayed(maxCount: 3, delay: .milliseconds(250)), [0.25, 0.25, 0.25]),
      (.exponential(maxCount: 4, initial: .seconds(1), multiplier: 2), [1, 2, 4, 8]),
      (.linear(maxCount: 3, initial: .seconds(1), increment: .milliseconds(500)), [1, 1.5, 2]),
      (.customTimerDelayed(maxCount: 4, delays: [.seconds(1), .seconds(5)]), [1, 5, 5, 5]),
    ])
  func delayClauses(behavior: RepeatBehavior, waits: [Double]) async throws {
    let clock = ImmediateClock()
    let operation = ScriptedOperation<Void>(alwaysFailingWith: ConnectionLost(), clock: clock)
    await #expect(throws: ConnectionLost()) {
      try await policy(RetryRule(behavior: behavior)).run(in: RetryEnvironment(clock: clock)) {
        try await operation()
      }
    }
    #expect(operation.waits.map(\.inSeconds) == waits)
  }

  @Test("every attempt calls the operation afresh and the first success is returned")
  func freshCalls() async throws {
    let operation = ScriptedOperation(
      failures: [ConnectionLost(), ConnectionLost()], thenReturning: 42)
    let value = try await policy(RetryRule(behavior: .immediate(maxCount: 5))).run {
      try await operation()
    }
    #expect(value == 42)
    #expect(operation.attemptCount == 3)
  }

  @Test("a first attempt that succeeds is the only attempt")
  func firstSuccess() async throws {
    var calls = 0
    let value = try await policy(RetryRule(behavior: .immediate(maxCount: 5))).run {
      calls += 1
      return "done"
    }
    #expect(value == "done")
    #expect(calls == 1)
  }

  @Test("an error no rule matches is thrown at once and unchanged")
  func unmatchedError() async throws {
    let operation = ScriptedOperation<Void>(alwaysFailingWith: APIError.notFound)
    let policy = policy(RetryRule(behavior: .immediate(maxCount: 3), errorClasses: ["serverError"]))
    await #expect(throws: APIError.notFound) { try await policy.run { try await operation() } }
    #expect(operation.attemptCount == 1)
  }

  @Test("'except' leaves its classes unretried and retries the rest")
  func exceptClause() async throws {
    let rule = RetryRule(behavior: .immediate(maxCount: 3), excludedClasses: ["notFound"])
    let notFound = ScriptedOperation<Void>(alwaysFailingWith: APIError.notFound)
    await #expect(throws: APIError.notFound) { try await policy(rule).run { try await notFound() } }
    #expect(notFound.attemptCount == 1)

    let serverError = ScriptedOperation<Void>(alwaysFailingWith: APIError.serverError(code: 500))
    await #expect(throws: APIError.serverError(code: 500)) {
      try await policy(rule).run { try await serverError() }
    }
    #expect(serverError.attemptCount == 4)
  }

  @Test("an error excluded by one rule goes on to the next rule that matches it")
  func exceptFallsThrough() async throws {
    let operation = ScriptedOperation<Void>(alwaysFailingWith: APIError.notFound)
    let policy = policy(
      RetryRule(behavior: .immediate(maxCount: 5), excludedClasses: ["notFound"]),
      RetryRule(behavior: .immediate(maxCount: 1), errorClasses: ["notFound"]))
    await #expect(throws: APIError.notFound) { try await policy.run { try await operation() } }
    #expect(operation.attemptCount == 2)
  }

  @Test("each rule counts its own retries")
  func rulesCountTheirOwn() async throws {
    let clock = ImmediateClock()
    let policy = policy(
      RetryRule(behavior: .immediate(maxCount: 1), errorClasses: ["unauthorized"]),
      RetryRule(
        behavior: .delayed(maxCount: 2, delay: .seconds(1)), errorClasses: ["serverError"]))
    let recovers = ScriptedOperation(
      failures: [
        APIError.serverError(code: 502), APIError.unauthorized, APIError.serverError(code: 503),
      ],
      thenReturning: "ok", clock: clock)
    let value = try await policy.run(in: RetryEnvironment(clock: clock)) { try await recovers() }
    #expect(value == "ok")
    #expect(recovers.attemptCount == 4)
    #expect(recovers.waits.map(\.inSeconds) == [1, 0, 1])

    let secondUnauthorized = ScriptedOperation(
      failures: [APIError.unauthorized, APIError.serverError(code: 500), APIError.unauthorized],
      thenReturning: "never")
    await #expect(throws: APIError.unauthorized) {
      try await policy.run(in: RetryEnvironment(clock: ImmediateClock())) {
        try await secondUnauthorized()
      }
    }
    #expect(secondUnauthorized.attemptCount == 3)
  }

  @Test("runs of one policy do not share retry counts")
  func runsAreIndependent() async throws {
    let policy = policy(RetryRule(behavior: .immediate(maxCount: 2)))
    for _ in 0..<3 {
      let operation = ScriptedOperation<Void>(alwaysFailingWith: ConnectionLost())
      await #expect(throws: ConnectionLost()) { try await policy.run { try await operation() } }
      #expect(operation.attemptCount == 3)
    }
  }

  @Test("'retry 0' never retries")
  func retryZero() async throws {
    let operation = ScriptedOperation<Void>(alwaysFailingWith: ConnectionLost())
    await #expect(throws: ConnectionLost()) {
      try await policy(RetryRule(behavior: .immediate(maxCount: 0))).run { try await operation() }
    }
    #expect(operation.attemptCount == 1)
  }

  @Test("a CancellationError from the operation is never retried, even by 'on any'")
  func cancellationErrorNotRetried() async throws {
    let operation = ScriptedOperation<Void>(alwaysFailingWith: CancellationError())
    let policy = policy(RetryRule(behavior: .immediate(maxCount: 3), errorClasses: ["any"]))
    await #expect(throws: CancellationError.self) { try await policy.run { try await operation() } }
    #expect(operation.attemptCount == 1)
  }

  @Test("'within' starts no retry whose delay would end past the deadline")
  func withinDeadline() async throws {
    let clock = ImmediateClock()
    let operation = ScriptedOperation<Void>(alwaysFailingWith: ConnectionLost(), clock: clock)
    let policy = policy(
      RetryRule(behavior: .delayed(maxCount: nil, delay: .seconds(1))), within: .seconds(3))
    let recorder = RetryEventRecorder()
    await #expect(throws: ConnectionLost()) {
      try await policy.run(in: RetryEnvironment(clock: clock, observer: recorder.observer)) {
        try await operation()
      }
    }
    #expect(operation.attemptTimes.map(\.inSeconds) == [0, 1, 2, 3])
    #expect(recorder.summaries.last?.outcome == .failed(.deadlineExceeded))
  }

  @Test("jitter with a seeded generator stays in bounds and repeats exactly")
  func seededJitter() async throws {
    let rule = RetryRule(
      behavior: .exponential(maxCount: 5, initial: .seconds(1), multiplier: 1.5),
      jitter: .proportional(fraction: 0.1))
    func waits(seed: UInt64) async -> [Duration] {
      let clock = ImmediateClock()
      let operation = ScriptedOperation<Void>(alwaysFailingWith: ConnectionLost(), clock: clock)
      let environment = RetryEnvironment(
        clock: clock, random: SeededRandomNumberGenerator(seed: seed))
      _ = try? await policy(rule).run(in: environment) { try await operation() }
      return operation.waits
    }
    let first = await waits(seed: 7)
    #expect(first == (await waits(seed: 7)))
    #expect(first != (await waits(seed: 8)))
    #expect(first.count == 5)
    for (index, wait) in first.enumerated() {
      #expect(rule.delayBounds(beforeRetry: index + 1).contains(wait))
    }
  }

  @Test("a run on a test's clock waits until that clock's instants, wherever the clock was")
  func waitsOnTheEnvironmentsClock() async throws {
    let clock = ManualClock()
    clock.advance(by: .seconds(100))
    let environment = RetryEnvironment(clock: clock)
    // The environment's clock moves on after the environment was made.
    clock.advance(by: .seconds(20))
    let policy = try compile(policy: "retry 2 backoff 2s")
    let run = Task {
      var calls = 0
      return try await policy.run(in: environment) {
        calls += 1
        if calls < 3 { throw ConnectionLost() }
        return calls
      }
    }
    await clock.waitForSleepers(count: 1)
    #expect(clock.nextDeadline == ManualClock.Instant(offset: .seconds(122)))
    clock.advance(by: .seconds(2))
    await clock.waitForSleepers(count: 1)
    #expect(clock.nextDeadline == ManualClock.Instant(offset: .seconds(126)))
    clock.advance(by: .seconds(4))
    #expect(try await run.value == 3)
  }

  @Test("an operation isolated to an actor runs on it, with and without 'timeout'")
  func actorIsolation() async throws {
    actor Counter {
      var calls = 0
      var history: [Int] = []

      func attempt(policy: CompiledPolicy, failures: Int) async throws -> Int {
        // The continuous clock: the one-hour timeout never fires, and is cancelled at once.
        try await policy.run(in: RetryEnvironment()) {
          calls += 1
          history.append(calls)
          if calls <= failures { throw ConnectionLost() }
          return calls
        }
      }
    }
    let counter = Counter()
    let plain = policy(RetryRule(behavior: .immediate(maxCount: 3)))
    #expect(try await counter.attempt(policy: plain, failures: 2) == 3)
    let timed = policy(RetryRule(behavior: .immediate(maxCount: 3)), timeout: .seconds(3600))
    #expect(try await counter.attempt(policy: timed, failures: 5) == 6)
    #expect(await counter.history == [1, 2, 3, 4, 5, 6])
  }
}
