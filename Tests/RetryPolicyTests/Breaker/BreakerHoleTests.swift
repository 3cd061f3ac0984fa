import Foundation
import RetryPolicy
import RetryPolicyTesting
import Testing

/// A policy of one rule on `serverError`, with `breaker`.
private func guarded(
  retries: Int = 0, delay: Duration = .zero, percent: Int = 100, minimum: Int = 1,
  open: Duration = .seconds(1), timeout: Duration? = nil, budget: Double? = nil,
  hedge: HedgePolicy? = nil
) -> CompiledPolicy {
  let behavior: RepeatBehavior =
    delay == .zero ? .immediate(maxCount: retries) : .delayed(maxCount: retries, delay: delay)
  var policy = CompiledPolicy(
    rules: [RetryRule(behavior: behavior, errorClasses: ["serverError"])],
    breaker: CircuitBreakerPolicy(
      failurePercent: percent, minimumAttempts: minimum, openDuration: open))
  policy.attemptTimeout = timeout
  policy.budgetRatio = budget
  policy.hedge = hedge
  return policy
}

/// Opens `breaker`'s circuit by one failed run of `policy` (minimum 1, 100%), then lets its
/// open time pass: the next attempt is the probe.
private func halfOpen(
  _ policy: CompiledPolicy, in environment: RetryEnvironment, clock: ManualClock
) async {
  _ = try? await policy.run(in: environment) { () async throws -> Int in
    throw APIError.serverError(code: 503)
  }
  clock.advance(by: .seconds(1))
}

@Suite("Runtime: the breaker's holes closed")
struct RuntimeBreakerHoleTests {
  @Test("a sequence broken out of after its first element releases the probe and closes")
  func abandonedSequenceReleasesProbe() async throws {
    let clock = ManualClock()
    let breaker = CircuitBreaker(clock: clock)
    let environment = RetryEnvironment(clock: clock, breaker: breaker)
    let policy = guarded()
    await halfOpen(policy, in: environment, clock: clock)
    #expect(breaker.state == .halfOpen)
    let feed = policy.retrying(in: environment) {
      AsyncStream<Int> { continuation in continuation.yield(1) }
    }
    for try await _ in feed { break }
    // The element was a success for the breaker: the probe closed the circuit.
    #expect(breaker.state == .closed)
    #expect(try await policy.run(in: environment) { 7 } == 7)
  }

  @Test("a sequence dropped before it delivers releases the probe")
  func droppedSequenceReleasesProbe() async throws {
    let clock = ManualClock()
    let breaker = CircuitBreaker(clock: clock)
    let environment = RetryEnvironment(clock: clock, breaker: breaker)
    let policy = guarded()
    await halfOpen(policy, in: environment, clock: clock)
    let feed = policy.retrying(in: environment) {
      AsyncThrowingStream<Int, any Error> { continuation in continuation.finish() }
    }
    // A subscription that ends with no element finishes the run: the probe is released.
    for try await _ in feed {}
    #expect(try await policy.run(in: environment) { 7 } == 7)
    #expect(breaker.state == .closed)
  }

  @Test("a cancelled sequence releases the probe")
  func cancelledSequenceReleasesProbe() async throws {
    let clock = ManualClock()
    let breaker = CircuitBreaker(clock: clock)
    let environment = RetryEnvironment(clock: clock, breaker: breaker)
    let policy = guarded()
    await halfOpen(policy, in: environment, clock: clock)
    let subscribed = AsyncStream<Void>.makeStream()
    let feed = policy.retrying(in: environment) {
      subscribed.continuation.yield()
      return AsyncStream<Int> { _ in }
    }
    let task = Task {
      for try await _ in feed {}
    }
    // The subscription is made once the probe is taken; then the iterating task is cancelled.
    for await _ in subscribed.stream { break }
    task.cancel()
    _ = await task.result
    #expect(try await policy.run(in: environment) { 7 } == 7)
    #expect(breaker.state == .closed)
  }

  @Test("a run whose own failure opens the circuit ends at once, with no backoff wait")
  func openingFailureEndsAtOnce() async throws {
    // retry 5 backoff 1s breaker 50% min 2 for 5s, always failing: two calls, one wait.
    let clock = ImmediateClock()
    let breaker = CircuitBreaker(clock: clock)
    let recorder = RetryEventRecorder()
    let environment = RetryEnvironment(clock: clock, observer: recorder.observer, breaker: breaker)
    let policy = guarded(
      retries: 5, delay: .seconds(1), percent: 50, minimum: 2, open: .seconds(5))
    let failing = ScriptedOperation<Int>(alwaysFailingWith: APIError.serverError(code: 503))
    await #expect(throws: APIError.serverError(code: 503)) {
      try await policy.run(in: environment) { try await failing() }
    }
    #expect(failing.attemptCount == 2)
    #expect(clock.now.offset == .seconds(1))
    #expect(recorder.scheduledDelays == [.seconds(1)])
    #expect(recorder.summaries.last?.outcome == .failed(.circuitOpen))
    #expect(recorder.summaries.last?.totalDelay == .seconds(1))
  }

  @Test("a breaker made without a clock reads the environment's manual clock")
  func unclockedBreakerReadsEnvironmentClock() async throws {
    let clock = ManualClock()
    let breaker = CircuitBreaker()
    let environment = RetryEnvironment(clock: clock, breaker: breaker)
    let policy = guarded()
    await halfOpen(policy, in: environment, clock: clock)
    #expect(breaker.state == .halfOpen)
    #expect(try await policy.run(in: environment) { 7 } == 7)
    #expect(breaker.state == .closed)
  }

  @Test("a process-wide breaker on a manual clock never refuses runs on the real clock")
  func processWideBreakersAreKeptByClock() async throws {
    // A text no other test uses: its process-wide breaker is this test's alone.
    let policy = try compile(policy: "retry 0 on serverError breaker 100% over 13s min 1 for 1h")
    let clock = ManualClock()
    _ = try? await policy.run(in: RetryEnvironment(clock: clock)) { () async throws -> Int in
      throw APIError.serverError(code: 503)
    }
    await #expect(throws: CircuitOpenError.self) {
      try await policy.run(in: RetryEnvironment(clock: clock)) { 1 }
    }
    // The real clock's breaker is another one, closed.
    #expect(try await policy.run { 2 } == 2)
    clock.advance(by: .seconds(3600))
    #expect(try await policy.run(in: RetryEnvironment(clock: clock)) { 3 } == 3)
  }

  @Test("a store's breaker reads the clock of the environment that runs it")
  func storeBreakerReadsEnvironmentClock() async throws {
    let folder = FileManager.default.temporaryDirectory
      .appendingPathComponent("breaker-clock-\(UInt64.random(in: 0 ... .max))")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let file = folder.appendingPathComponent("policies.retry")
    try "policy payments = retry 0 on serverError breaker 100% min 1 for 1s\n"
      .write(to: file, atomically: true, encoding: .utf8)
    let store = try PolicyStore(path: file.path)
    let clock = ManualClock()
    let environment = RetryEnvironment(clock: clock)
    _ = try? await store.run("payments", in: environment) { () async throws -> Int in
      throw APIError.serverError(code: 503)
    }
    #expect(store.breaker(named: "payments")?.state == .open)
    clock.advance(by: .seconds(1))
    #expect(store.breaker(named: "payments")?.state == .halfOpen)
    #expect(try await store.run("payments", in: environment) { 7 } == 7)
    #expect(store.breaker(named: "payments")?.state == .closed)
  }

  @Test("attempts cut off by the policy's timeout are failures though no rule retries timeout")
  func timeoutsCount() async throws {
    // retry 1 on serverError timeout 20ms breaker 50% min 2
    let clock = ManualClock()
    let breaker = CircuitBreaker(clock: clock)
    let environment = RetryEnvironment(clock: clock, breaker: breaker)
    let policy = guarded(retries: 1, percent: 50, minimum: 2, timeout: .milliseconds(20))
    for _ in 0..<2 {
      let run = Task {
        try await policy.run(in: environment) { () async throws -> Int in
          try await waitUntilCancelled()
          return 1
        }
      }
      await clock.waitForSleepers(count: 1)
      clock.advance(by: .milliseconds(20))
      await #expect(throws: AttemptTimeoutError.self) { try await run.value }
    }
    #expect(breaker.state == .open)
  }

  @Test("a refused first attempt neither earns nor spends budget tokens")
  func refusedFirstAttemptLeavesBudget() async throws {
    let breaker = CircuitBreaker()
    let budget = RetryBudget()
    breaker.isolate()
    let environment = RetryEnvironment(budget: budget, breaker: breaker)
    let before = budget.tokens
    for policy in [
      guarded(retries: 2, budget: 0.1),
      guarded(retries: 2, budget: 0.1, hedge: HedgePolicy(count: 1, delay: .milliseconds(5))),
    ] {
      await #expect(throws: CircuitOpenError.self) {
        try await policy.runHedged(in: environment) { _ in 1 }
      }
    }
    #expect(budget.tokens == before)
  }

  @Test("a hedge the breaker refuses spends no budget token")
  func refusedHedgeSpendsNoToken() async throws {
    let clock = ManualClock()
    let breaker = CircuitBreaker(clock: clock)
    let budget = RetryBudget()
    let environment = RetryEnvironment(clock: clock, budget: budget, breaker: breaker)
    let policy = guarded(
      retries: 2, minimum: 100, budget: 0.1,
      hedge: HedgePolicy(count: 1, delay: .milliseconds(50)))
    let release = AsyncStream<Void>.makeStream()
    let run = Task {
      try await policy.runHedged(in: environment) { _ in
        for await _ in release.stream { break }
        return 1
      }
    }
    // The first attempt runs and the hedge timer waits; the circuit is held open meanwhile.
    await clock.waitForSleepers(count: 1)
    let afterFirst = budget.tokens
    breaker.isolate()
    clock.advance(by: .milliseconds(50))
    // Let the timer's refusal happen before the first attempt returns.
    for _ in 0..<50 { await Task.yield() }
    release.continuation.yield()
    release.continuation.finish()
    #expect(try await run.value == 1)
    #expect(budget.tokens == afterFirst)
  }

  @Test("a refused first attempt reads 'refused', never 'attempt 0 failed'")
  func refusedFirstAttemptWords() async throws {
    let breaker = CircuitBreaker()
    breaker.isolate()
    let recorder = RetryEventRecorder()
    let environment = RetryEnvironment(observer: recorder.observer, breaker: breaker)
    await #expect(throws: CircuitOpenError.self) {
      try await guarded().run(in: environment) { 1 }
    }
    let lines = recorder.events.map(\.description)
    #expect(!lines.contains { $0.contains("attempt 0") })
    #expect(lines.contains("refused before attempt 1; gave up: circuit open"))
  }

  @Test("durations in messages print at most millisecond precision")
  func millisecondMessages() {
    #expect(
      CircuitOpenError(remaining: .nanoseconds(1_948_000_001)).description
        == "circuit open for 1.948s more")
    #expect(
      RetryEvent.attemptRefused(attempt: 2, remaining: .nanoseconds(2_999_600_000), cause: nil)
        .description == "attempt 2 refused: circuit open for 3s more")
    #expect(
      RetryEvent.retryScheduled(attempt: 1, rule: 0, delay: .nanoseconds(1_034_567_890))
        .description == "attempt 1 failed; rule 1 retries after 1.035s")
    #expect(
      CircuitOpenError(remaining: .nanoseconds(10)).description == "circuit open for 1ms more")
  }
}
