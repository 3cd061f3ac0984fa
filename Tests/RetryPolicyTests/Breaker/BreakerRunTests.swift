import RetryPolicy
import RetryPolicyTesting
import Testing

/// A policy of one immediate rule on `serverError`, with `breaker`.
private func guarded(
  retries: Int = 0, percent: Int = 50, minimum: Int = 1, open: Duration = .seconds(5),
  name: String? = nil
) -> CompiledPolicy {
  CompiledPolicy(
    name: name,
    rules: [RetryRule(behavior: .immediate(maxCount: retries), errorClasses: ["serverError"])],
    breaker: CircuitBreakerPolicy(
      failurePercent: percent, minimumAttempts: minimum, openDuration: open))
}

private struct NotMatched: Error, Equatable {}

@Suite("Runtime: circuit breaker in runs")
struct RuntimeBreakerTests {
  @Test("cancellation and errors no rule matches count as neither success nor failure")
  func neitherCounts() async throws {
    let clock = ManualClock()
    let breaker = CircuitBreaker(clock: clock)
    let environment = RetryEnvironment(clock: clock, breaker: breaker)
    let policy = guarded(percent: 100, minimum: 1)
    await #expect(throws: NotMatched.self) {
      try await policy.run(in: environment) { throw NotMatched() }
    }
    await #expect(throws: CancellationError.self) {
      try await policy.run(in: environment) { throw CancellationError() }
    }
    #expect(breaker.state == .closed)
    #expect(breaker.counts(for: policy.breaker ?? .init(failurePercent: 1)) == (0, 0))
    // One error a rule matches is a failure, even with no retry left: 1 of 1 opens it.
    await #expect(throws: APIError.serverError(code: 503)) {
      try await policy.run(in: environment) { throw APIError.serverError(code: 503) }
    }
    #expect(breaker.state == .open)
  }

  @Test("an error 'except' leaves to no rule counts as neither")
  func exceptedErrorIsNeither() async throws {
    let clock = ManualClock()
    let breaker = CircuitBreaker(clock: clock)
    let policy = CompiledPolicy(
      rules: [RetryRule(behavior: .immediate(maxCount: 3), excludedClasses: ["NotMatched"])],
      breaker: CircuitBreakerPolicy(failurePercent: 100, minimumAttempts: 1))
    await #expect(throws: NotMatched.self) {
      try await policy.run(in: RetryEnvironment(clock: clock, breaker: breaker)) {
        throw NotMatched()
      }
    }
    #expect(breaker.state == .closed)
  }

  @Test("a refused first attempt throws CircuitOpenError without calling the operation")
  func refusedFirstAttempt() async throws {
    let clock = ManualClock()
    let breaker = CircuitBreaker(clock: clock)
    let environment = RetryEnvironment(clock: clock, breaker: breaker)
    let policy = guarded(minimum: 1, open: .seconds(5))
    _ = try? await policy.run(in: environment) { throw APIError.serverError(code: 503) }
    clock.advance(by: .seconds(2))
    var calls = 0
    await #expect(throws: CircuitOpenError(remaining: .seconds(3))) {
      try await policy.run(in: environment) {
        calls += 1
        return 1
      }
    }
    #expect(calls == 0)
  }

  @Test("a refused later attempt ends the run with its last error")
  func refusedLaterAttempt() async throws {
    let clock = ManualClock()
    let breaker = CircuitBreaker(clock: clock)
    let recorder = RetryEventRecorder()
    let environment = RetryEnvironment(
      clock: clock, observer: recorder.observer, breaker: breaker)
    // Run A fails once and waits 1s to retry; meanwhile run B's failure makes 2 of 2 and
    // opens the circuit, so A's retry is refused. (A run whose own failure opens the
    // circuit ends at once instead: see RuntimeBreakerHoleTests.)
    var policy = guarded(retries: 5, percent: 100, minimum: 2)
    policy.rules[0].behavior = .delayed(maxCount: 5, delay: .seconds(1))
    let failing = ScriptedOperation<Int>(alwaysFailingWith: APIError.serverError(code: 503))
    let first = Task { try await policy.run(in: environment) { try await failing() } }
    await clock.waitForSleepers(count: 1)
    await #expect(throws: APIError.serverError(code: 503)) {
      try await guarded(percent: 100, minimum: 2).run(
        in: RetryEnvironment(clock: clock, breaker: breaker)
      ) {
        throw APIError.serverError(code: 503)
      }
    }
    clock.advance(by: .seconds(1))
    await #expect(throws: APIError.serverError(code: 503)) { try await first.value }
    #expect(failing.attemptCount == 1)
    let refusals = recorder.events.compactMap { event -> CircuitBreakerCause?? in
      if case .attemptRefused(2, _, let cause) = event { return cause }
      return nil
    }
    #expect(refusals == [CircuitBreakerCause(failures: 2, attempts: 2)])
    #expect(recorder.summaries.last?.outcome == .failed(.circuitOpen))
  }

  @Test("events report opened, half-opened and closed, with the counts that opened it")
  func transitionsAreReported() async throws {
    let clock = ManualClock()
    let breaker = CircuitBreaker(clock: clock)
    let recorder = RetryEventRecorder()
    let environment = RetryEnvironment(
      clock: clock, observer: recorder.observer, breaker: breaker)
    let policy = guarded(percent: 50, minimum: 2, open: .seconds(1))
    _ = try? await policy.run(in: environment) { 1 }
    _ = try? await policy.run(in: environment) { throw APIError.serverError(code: 503) }
    clock.advance(by: .seconds(1))
    _ = try? await policy.run(in: environment) { 1 }
    let changes = recorder.events.compactMap { event -> String? in
      switch event {
      case .circuitOpened(let attempt, let cause):
        "opened at \(attempt): \(cause.failures)/\(cause.attempts) \(cause.failureRatio)"
      case .circuitHalfOpened(let attempt): "half-opened at \(attempt)"
      case .circuitClosed(let attempt): "closed at \(attempt)"
      default: nil
      }
    }
    #expect(changes == ["opened at 1: 1/2 0.5", "half-opened at 1", "closed at 1"])
    #expect(breaker.state == .closed)
  }

  @Test("breakers bound to policy names win over the environment's breaker")
  func breakersByName() async throws {
    let clock = ManualClock()
    let named = CircuitBreaker(clock: clock)
    let shared = CircuitBreaker(clock: clock)
    let environment = RetryEnvironment(
      clock: clock, breaker: shared, breakers: ["payments": named])
    _ = try? await guarded(name: "payments").run(in: environment) {
      throw APIError.serverError(code: 503)
    }
    #expect(named.state == .open)
    #expect(shared.state == .closed)
    _ = try? await guarded(name: "search").run(in: environment) {
      throw APIError.serverError(code: 503)
    }
    #expect(shared.state == .open)
  }

  @Test("without a breaker, equal policies share one for the process; others do not")
  func defaultBreakerPerPolicyValue() async throws {
    let clock = ManualClock()
    let environment = RetryEnvironment(clock: clock)
    // A window no other test uses, so that this policy value is this test's alone.
    let policy = CompiledPolicy(
      rules: [RetryRule(behavior: .immediate(maxCount: 0), errorClasses: ["serverError"])],
      breaker: CircuitBreakerPolicy(
        failurePercent: 100, window: .seconds(777), minimumAttempts: 1))
    var other = policy
    other.breaker?.window = .seconds(778)
    _ = try? await policy.run(in: environment) { throw APIError.serverError(code: 503) }
    var calls = 0
    await #expect(throws: CircuitOpenError.self) {
      try await policy.run(in: environment) {
        calls += 1
        return 1
      }
    }
    #expect(try await other.run(in: environment) { 7 } == 7)
    #expect(calls == 0)
  }

  @Test("a timed-out attempt is a failure when a rule matches 'timeout'")
  func timeoutCounts() async throws {
    let clock = ManualClock()
    let breaker = CircuitBreaker(clock: clock)
    let policy = CompiledPolicy(
      rules: [RetryRule(behavior: .immediate(maxCount: 0), errorClasses: ["timeout"])],
      attemptTimeout: .seconds(1),
      breaker: CircuitBreakerPolicy(failurePercent: 100, minimumAttempts: 1))
    let run = Task {
      try await policy.run(in: RetryEnvironment(clock: clock, breaker: breaker)) {
        try await waitUntilCancelled()
        return 1
      }
    }
    await clock.waitForSleepers(count: 1)
    clock.advance(by: .seconds(1))
    await #expect(throws: AttemptTimeoutError.self) { try await run.value }
    #expect(breaker.state == .open)
  }

  @Test("100 concurrent runs of a half-open circuit make a single probe; the rest are refused")
  func singleProbeAmongRuns() async throws {
    let clock = ManualClock()
    let breaker = CircuitBreaker(clock: clock)
    let environment = RetryEnvironment(clock: clock, breaker: breaker)
    let policy = guarded(retries: 3, percent: 100, minimum: 1, open: .seconds(5))
    _ = try? await policy.run(in: environment) { throw APIError.serverError(code: 503) }
    clock.advance(by: .seconds(5))
    let calls = Log()
    let probe = Task {
      try await policy.run(in: environment) {
        calls.append("probe")
        try await clock.sleep(for: .seconds(1))
        return 1
      }
    }
    await clock.waitForSleepers(count: 1)
    let refused = await withTaskGroup(of: Bool.self) { group in
      for _ in 0..<99 {
        group.addTask {
          do {
            _ = try await policy.run(in: environment) {
              calls.append("other")
              return 2
            }
            return false
          } catch {
            return error is CircuitOpenError
          }
        }
      }
      return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
    }
    #expect(refused == 99)
    clock.advance(by: .seconds(1))
    #expect(try await probe.value == 1)
    #expect(calls.entries == ["probe"])
    #expect(breaker.state == .closed)
  }

  @Test("a hedged run asks the breaker too: an isolated one refuses its first attempt")
  func hedgedRunRefused() async throws {
    let breaker = CircuitBreaker()
    breaker.isolate()
    var policy = guarded(retries: 2)
    policy.hedge = HedgePolicy(count: 2, delay: .milliseconds(100))
    let calls = Log()
    await #expect(throws: CircuitOpenError(remaining: nil)) {
      try await policy.runHedged(in: RetryEnvironment(breaker: breaker)) { _ in
        calls.append("attempt")
        return 1
      }
    }
    #expect(calls.entries.isEmpty)
  }

  @Test("a hedged run whose failure opens the circuit starts no other attempt")
  func hedgedRunOpensTheCircuit() async throws {
    let clock = ManualClock()
    let breaker = CircuitBreaker(clock: clock)
    var policy = guarded(retries: 2, percent: 100, minimum: 1)
    policy.hedge = HedgePolicy(count: 2, delay: .seconds(1))
    let calls = Log()
    await #expect(throws: APIError.serverError(code: 503)) {
      try await policy.runHedged(in: RetryEnvironment(clock: clock, breaker: breaker)) {
        _ -> Int in
        calls.append("attempt")
        throw APIError.serverError(code: 503)
      }
    }
    #expect(calls.entries == ["attempt"])
    #expect(breaker.state == .open)
  }

  @Test("a policy without 'breaker' ignores the environment's breaker")
  func noClauseNoBreaker() async throws {
    let breaker = CircuitBreaker()
    breaker.isolate()
    let policy = CompiledPolicy(rules: [RetryRule(behavior: .immediate(maxCount: 0))])
    #expect(try await policy.run(in: RetryEnvironment(breaker: breaker)) { 3 } == 3)
  }
}
