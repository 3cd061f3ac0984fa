import RetryPolicy
import RetryPolicySimulation
import RetryPolicyTestSupport
import RetryPolicyTesting
import Testing

/// The promises of issue 9, each on virtual time.
@Suite("Runtime: promises under faults, load and long lives")
struct RuntimePromiseTests {
  @Test("'within' ends the run with the last error when a hook runs past the deadline")
  func hookPastDeadline() async throws {
    let clock = ManualClock()
    let recorder = RetryEventRecorder()
    let environment = RetryEnvironment(
      clock: clock, hooks: ["reconnect": { clock.advance(by: .seconds(20)) }],
      observer: recorder.observer)
    let policy = policy(
      RetryRule(behavior: .immediate(maxCount: 3), hook: "reconnect"), within: .seconds(10))
    var attempts = 0
    await #expect(throws: APIError.serverError(code: 503)) {
      try await policy.run(in: environment) {
        attempts += 1
        throw APIError.serverError(code: 503)
      }
    }
    #expect(attempts == 1)
    #expect(recorder.summaries.map(\.outcome) == [.failed(.deadlineExceeded)])
  }

  @Test("'within' counts the time spent in the operation")
  func operationTimeCounts() async throws {
    let clock = ManualClock()
    let policy = policy(
      RetryRule(behavior: .delayed(maxCount: 5, delay: .seconds(2))), within: .seconds(10))
    var attempts = 0
    await #expect(throws: ConnectionLost()) {
      try await policy.run(in: RetryEnvironment(clock: clock)) {
        attempts += 1
        clock.advance(by: .seconds(9))
        throw ConnectionLost()
      }
    }
    #expect(attempts == 1)
  }

  @Test("the summary counts only time actually waited; a cancelled wait ends in 'gaveUp'")
  func accountingOfCancelledWait() async throws {
    let clock = ManualClock()
    let recorder = RetryEventRecorder()
    let policy = policy(RetryRule(behavior: .delayed(maxCount: 3, delay: .seconds(3600))))
    let run = Task {
      try await policy.run(in: RetryEnvironment(clock: clock, observer: recorder.observer)) {
        throw ConnectionLost()
      }
    }
    await clock.waitForSleepers(count: 1)
    clock.advance(by: .seconds(600))
    run.cancel()
    await #expect(throws: CancellationError.self) { try await run.value }
    #expect(
      recorder.events.map(line) == [
        "start 1", "fail 1 ConnectionLost()", "retry 1 rule 0 after 3600.0",
        "give up 1 cancelled CancellationError()", "finish 1 waited 600.0 failed(cancelled)",
      ])
  }

  @Test("events come in the documented order, waits included in the summary when done")
  func eventOrder() async throws {
    let clock = ImmediateClock()
    let recorder = RetryEventRecorder()
    let policy = policy(RetryRule(behavior: .delayed(maxCount: 1, delay: .seconds(2))))
    await #expect(throws: ConnectionLost()) {
      try await policy.run(in: RetryEnvironment(clock: clock, observer: recorder.observer)) {
        throw ConnectionLost()
      }
    }
    #expect(
      recorder.events.map(line) == [
        "start 1", "fail 1 ConnectionLost()", "retry 1 rule 0 after 2.0", "start 2",
        "fail 2 ConnectionLost()", "give up 2 retries exhausted ConnectionLost()",
        "finish 2 waited 2.0 failed(retries exhausted)",
      ])
  }

  /// An actor whose other work must get a turn while a run on it retries immediately.
  actor Shared {
    var isSet = false

    func set() { isSet = true }

    /// Runs until another job on this actor has set the flag; the first attempt schedules it.
    func runUntilSet(_ policy: CompiledPolicy) async throws -> Int {
      var attempts = 0
      return try await policy.run {
        attempts += 1
        if attempts == 1 { Task { self.set() } }
        if isSet { return attempts }
        throw ConnectionLost()
      }
    }
  }

  @Test("retries without delay yield, so other work on the same actor gets its turn")
  func immediateRetriesYield() async throws {
    let policy = policy(RetryRule(behavior: .immediate(maxCount: 100_000)))
    let attempts = try await Shared().runUntilSet(policy)
    #expect(attempts <= 1 + 2 * RetryRunYield.interval)
  }

  @Test("the operation reads its attempt number")
  func attemptNumbers() async throws {
    let immediate = policy(RetryRule(behavior: .immediate(maxCount: 3)))
    var seen: [Int] = []
    let value = try await immediate.run { attempt in
      seen.append(attempt.number)
      if attempt.number < 3 { throw ConnectionLost() }
      return attempt.number
    }
    #expect(value == 3)
    #expect(seen == [1, 2, 3])
    let clock = ImmediateClock()
    let timed = policy(RetryRule(behavior: .immediate(maxCount: 1)), timeout: .seconds(1))
    let second = try await timed.run(in: RetryEnvironment(clock: clock)) { attempt in
      attempt.number
    }
    #expect(second == 1)
  }

  @Test("a hook receives the error that triggered the retry and the failed attempt's number")
  func hookContext() async throws {
    let log = Log()
    let environment = RetryEnvironment(hooks: [
      "refreshToken": { context in
        log.append("refresh after attempt \(context.attempt): \(context.error)")
      }
    ])
    let policy = policy(
      RetryRule(
        behavior: .immediate(maxCount: 2), errorClasses: ["unauthorized"], hook: "refreshToken"))
    let operation = ScriptedOperation(
      failures: [APIError.unauthorized, APIError.unauthorized], thenReturning: "ok")
    #expect(try await policy.run(in: environment) { try await operation() } == "ok")
    #expect(
      log.entries == [
        "refresh after attempt 1: unauthorized", "refresh after attempt 2: unauthorized",
      ])
  }

  @Test("a run on a clock of its own type measures elapsed time on that clock")
  func genericClock() async throws {
    let clock = SteppingClock()
    let recorder = RetryEventRecorder()
    let policy = policy(
      RetryRule(behavior: .delayed(maxCount: 2, delay: .seconds(1))), within: .seconds(100))
    _ = try? await policy.run(in: RetryEnvironment(clock: clock, observer: recorder.observer)) {
      throw ConnectionLost()
    }
    #expect(recorder.summaries.map(\.elapsed) == [.seconds(2)])
    #expect(recorder.summaries.map(\.totalDelay) == [.seconds(2)])
  }

  @Test("on the continuous clock a 'timeout' fires, and a quick attempt keeps its value")
  func continuousClockTimeout() async throws {
    let policy = policy(RetryRule(behavior: .immediate(maxCount: 0)), timeout: .milliseconds(5))
    await #expect(throws: AttemptTimeoutError(timeout: .milliseconds(5))) {
      try await policy.run { try await waitUntilCancelled() }
    }
    let long = CompiledPolicy(
      rules: [RetryRule(behavior: .immediate(maxCount: 0))], attemptTimeout: .seconds(3600))
    for value in 0..<100 {
      #expect(try await long.run { value } == value)
    }
    let endless = CompiledPolicy(
      rules: [RetryRule(behavior: .immediate(maxCount: 0))], attemptTimeout: .saturatedForever)
    #expect(try await endless.run { 7 } == 7)
  }

  @Test(
    "a rule's schedule never traps nor hangs, whatever the limit and the count",
    arguments: [Int.min, -1, 0, 1, 100, Int.max])
  func scheduleLimits(limit: Int) {
    let rules = [
      RetryRule(behavior: .immediate(maxCount: nil)),
      RetryRule(behavior: .immediate(maxCount: Int.max)),
      RetryRule(behavior: .delayed(maxCount: Int.max, delay: .milliseconds(1))),
      RetryRule(behavior: .exponential(maxCount: Int.max, initial: .seconds(1), multiplier: 2)),
      RetryRule(
        behavior: .linear(maxCount: Int.max, initial: .zero, increment: .zero), jitter: .full),
      RetryRule(
        behavior: .customTimerDelayed(maxCount: Int.max, delays: [.seconds(1), .zero]),
        jitter: .decorrelated, maxDelay: .seconds(5)),
    ]
    for rule in rules {
      let schedule = rule.schedule(limit: limit)
      #expect(schedule.entries.count <= Swift.max(0, Swift.min(limit, 10_000)))
    }
  }
}

extension Duration {
  /// A limit far beyond any Dispatch deadline.
  static let saturatedForever: Duration = .seconds(Int64.max)
}

/// The yield interval of immediate retries, as the runtime documents it.
enum RetryRunYield {
  static let interval = 4
}
