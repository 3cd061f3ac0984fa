import RetryPolicy
import RetryPolicySimulation
import RetryPolicyTesting
import Testing

/// What the attempts of a hedged run did, on the virtual clock.
private final class AttemptLog: Sendable {
  private let state = Locked<[String]>([])

  func record(_ entry: String) { state.withLock { $0.append(entry) } }
  var entries: [String] { state.withLock { $0 } }
}

/// An attempt that takes `duration` on `clock`, recording its start and how it ended.
private func timedAttempt(
  _ attempt: RetryAttempt, takes duration: Duration, on clock: ManualClock, log: AttemptLog
) async throws {
  log.record("start \(attempt.number) at \(clock.now.offset)")
  do {
    try await clock.sleep(for: duration)
  } catch {
    log.record("cancelled \(attempt.number)")
    throw error
  }
}

@Suite("Runtime: hedging")
struct RuntimeHedgeTests {
  @Test("the first success wins, the other attempts are cancelled, and nothing runs after")
  func firstSuccessCancelsOthers() async throws {
    let clock = ManualClock()
    let log = AttemptLog()
    let policy = try compile(policy: "retry 2 hedge 2 after 100ms")
    let run = Task {
      try await policy.runHedged(in: RetryEnvironment(clock: clock)) { attempt in
        let slow = attempt.number == 1
        try await timedAttempt(
          attempt, takes: .milliseconds(slow ? 1000 : 50), on: clock, log: log)
        return attempt.number
      }
    }
    await clock.waitForSleepers(count: 2)  // attempt 1 and the hedge timer
    clock.advance(by: .milliseconds(100))
    await clock.waitForSleepers(count: 3)  // attempts 1 and 2, the next timer
    clock.advance(by: .milliseconds(50))
    #expect(try await run.value == 2)
    #expect(log.entries == ["start 1 at 0.0 seconds", "start 2 at 0.1 seconds", "cancelled 1"])
    #expect(clock.sleeperCount == 0)
  }

  @Test("a failure a rule retries starts the next attempt at once")
  func retriedFailureStartsNextAtOnce() async throws {
    let clock = ManualClock()
    let log = AttemptLog()
    let policy = try compile(policy: "retry 2 on serverError hedge 2 after 1s")
    let value = try await policy.runHedged(in: RetryEnvironment(clock: clock)) { attempt in
      log.record("start \(attempt.number) at \(clock.now.offset)")
      if attempt.number == 1 { throw APIError.serverError(code: 503) }
      return "second"
    }
    #expect(value == "second")
    #expect(log.entries == ["start 1 at 0.0 seconds", "start 2 at 0.0 seconds"])
  }

  @Test("when every attempt fails, the last error is thrown after N + 1 attempts")
  func allFailThrowsLastError() async throws {
    let counter = Locked(0)
    let policy = try compile(policy: "retry 5 hedge 2 after 100ms")
    await #expect(throws: APIError.serverError(code: 3)) {
      try await policy.runHedged(in: RetryEnvironment(clock: ManualClock())) { attempt in
        counter.withLock { $0 += 1 }
        throw APIError.serverError(code: attempt.number)
      }
    }
    #expect(counter.withLock { $0 } == 3)
  }

  @Test("a failure no rule retries is thrown at once and cancels the others")
  func fatalFailureCancelsOthers() async throws {
    let clock = ManualClock()
    let log = AttemptLog()
    let policy = try compile(policy: "retry 2 on serverError hedge 2 after 100ms")
    let run = Task {
      try await policy.runHedged(in: RetryEnvironment(clock: clock)) { attempt in
        if attempt.number == 2 { throw APIError.notFound }
        try await timedAttempt(attempt, takes: .seconds(10), on: clock, log: log)
      }
    }
    await clock.waitForSleepers(count: 2)
    clock.advance(by: .milliseconds(100))
    await #expect(throws: APIError.notFound) { try await run.value }
    #expect(log.entries == ["start 1 at 0.0 seconds", "cancelled 1"])
    #expect(clock.sleeperCount == 0)
  }

  @Test("cancelling the caller cancels every attempt")
  func callerCancellationCancelsAll() async throws {
    let clock = ManualClock()
    let log = AttemptLog()
    let policy = try compile(policy: "retry 3 hedge 3 after 100ms")
    let run = Task {
      try await policy.runHedged(in: RetryEnvironment(clock: clock)) { attempt in
        try await timedAttempt(attempt, takes: .seconds(10), on: clock, log: log)
      }
    }
    await clock.waitForSleepers(count: 2)
    clock.advance(by: .milliseconds(100))
    await clock.waitForSleepers(count: 3)
    run.cancel()
    await #expect(throws: CancellationError.self) { try await run.value }
    #expect(
      Set(log.entries.filter { $0.hasPrefix("cancelled") }) == ["cancelled 1", "cancelled 2"])
    #expect(clock.sleeperCount == 0)
  }

  @Test("every extra attempt draws a token from the budget, and none starts without one")
  func budgetCountsHedgedAttempts() async throws {
    let budget = RetryBudget()
    let environment = RetryEnvironment(clock: ManualClock(), budget: budget)
    let policy = try compile(policy: "retry 5 hedge 3 after 100ms budget 10%")
    let counter = Locked(0)
    for _ in 0..<4 {
      await #expect(throws: APIError.self) {
        try await policy.runHedged(in: environment) { _ in
          counter.withLock { $0 += 1 }
          throw APIError.serverError(code: 500)
        }
      }
    }
    // 10 tokens, and a deposit of 0.1 a run: 3 extra attempts in each of the first three
    // runs, one in the fourth (1.4 tokens left before it).
    #expect(counter.withLock { $0 } == 4 * 3 + 2)
    #expect(budget.tokens < 1)
  }

  @Test("no attempt starts past 'within'")
  func withinStopsHedging() async throws {
    let clock = ManualClock()
    let log = AttemptLog()
    let policy = try compile(policy: "retry 5 hedge 5 after 100ms within 250ms")
    let run = Task {
      try await policy.runHedged(in: RetryEnvironment(clock: clock)) { attempt in
        try? await timedAttempt(attempt, takes: .seconds(1), on: clock, log: log)
        throw APIError.serverError(code: attempt.number)
      }
    }
    for sleepers in [2, 3, 4] {
      await clock.waitForSleepers(count: sleepers)
      clock.advance(by: .milliseconds(100))
    }
    await clock.waitForSleepers(count: 3)  // three attempts; the last timer fired past 250ms
    clock.advance(by: .seconds(1))
    await #expect(throws: APIError.self) { try await run.value }
    #expect(log.entries.filter { $0.hasPrefix("start") }.count == 3)
  }

  @Test("'timeout' cuts off a hedged attempt, and a rule on 'timeout' starts the next at once")
  func timeoutCombinesWithHedge() async throws {
    let clock = ManualClock()
    let log = AttemptLog()
    let policy = try compile(policy: "retry 2 on timeout hedge 1 after 1s timeout 500ms")
    let run = Task {
      try await policy.runHedged(in: RetryEnvironment(clock: clock)) { attempt in
        let takes: Duration = attempt.number == 1 ? .seconds(10) : .milliseconds(10)
        try await timedAttempt(attempt, takes: takes, on: clock, log: log)
        return attempt.number
      }
    }
    await clock.waitForSleepers(count: 3)  // attempt 1, its timeout, the hedge timer
    clock.advance(by: .milliseconds(500))
    await clock.waitForSleepers(count: 3)  // attempt 2, its timeout, the old hedge timer
    clock.advance(by: .milliseconds(10))
    #expect(try await run.value == 2)
    #expect(
      log.entries == ["start 1 at 0.0 seconds", "cancelled 1", "start 2 at 0.5 seconds"])
  }

  @Test("without 'hedge', runHedged runs attempts one after another, as run does")
  func withoutHedgeIsSequential() async throws {
    let counter = Locked(0)
    let policy = try compile(policy: "retry 2")
    let value = try await policy.runHedged(in: RetryEnvironment(clock: ManualClock())) {
      attempt in
      counter.withLock { $0 += 1 }
      if attempt.number < 3 { throw APIError.serverError(code: 500) }
      return attempt.number
    }
    #expect(value == 3)
    #expect(counter.withLock { $0 } == 3)
  }
  @Test("run does not race a hedged policy's attempts, and its first event says so")
  func runReportsHedgeNotApplied() async throws {
    let clock = ManualClock()
    let events = Log()
    let calls = Locked(0)
    var environment = RetryEnvironment(clock: clock)
    environment.observer = { events.append(line($0)) }
    let policy = try compile(policy: "retry 2 on serverError hedge 2 after 50ms")
    let run = Task { [environment] in
      try await policy.run(in: environment) {
        let call = calls.withLock {
          $0 += 1; return $0
        }
        if call == 1 {
          try await clock.sleep(for: .seconds(1))
          throw APIError.serverError(code: 503)
        }
        return call
      }
    }
    await clock.waitForSleepers(count: 1)  // attempt 1 only: no hedge timer
    clock.advance(by: .milliseconds(50))
    #expect(clock.sleeperCount == 1)
    #expect(calls.withLock { $0 } == 1)
    clock.advance(by: .milliseconds(950))
    #expect(try await run.value == 2)
    #expect(events.entries.first == "hedge not applied 2")
    #expect(events.entries.dropFirst().first == "start 1")
    #expect(events.entries.filter { $0.hasPrefix("hedge") }.count == 1)
    let text = RetryEvent.hedgeNotApplied(HedgePolicy(count: 2, delay: .milliseconds(50)))
      .description
    #expect(
      text == "hedge 2 after 50ms not applied: the operation is not @Sendable, "
        + "so attempts run one after another (runHedged races them)")
  }

  @Test("a policy without 'hedge' reports no hedge event")
  func runWithoutHedgeReportsNothing() async throws {
    let events = Log()
    var environment = RetryEnvironment(clock: ManualClock())
    environment.observer = { events.append(line($0)) }
    let policy = try compile(policy: "retry 2")
    _ = try await policy.run(in: environment) { 1 }
    #expect(events.entries == ["start 1", "finish 1 waited 0.0 succeeded"])
  }

  @Test("runHedged takes an operation without its attempt, and races it")
  func runHedgedWithoutAttempt() async throws {
    let clock = ManualClock()
    let calls = Locked(0)
    let policy = try compile(policy: "retry 2 hedge 2 after 100ms")
    let run = Task {
      try await policy.runHedged(in: RetryEnvironment(clock: clock)) {
        let call = calls.withLock {
          $0 += 1; return $0
        }
        try await clock.sleep(for: .milliseconds(call == 1 ? 1000 : 50))
        return call
      }
    }
    await clock.waitForSleepers(count: 2)  // attempt 1 and the hedge timer
    clock.advance(by: .milliseconds(100))
    await clock.waitForSleepers(count: 3)  // attempts 1 and 2, the next timer
    clock.advance(by: .milliseconds(50))
    #expect(try await run.value == 2)
    #expect(clock.sleeperCount == 0)
  }
}
