import RetryPolicy
import RetryPolicyTesting
import Testing

/// A policy of one immediate rule on `serverError` with `breaker 100% min 1 for 1s`.
private func guarded(retries: Int = 0, timeout: Duration? = nil) -> CompiledPolicy {
  var policy = CompiledPolicy(
    rules: [RetryRule(behavior: .immediate(maxCount: retries), errorClasses: ["serverError"])],
    breaker: CircuitBreakerPolicy(
      failurePercent: 100, minimumAttempts: 1, openDuration: .seconds(1)))
  policy.attemptTimeout = timeout
  return policy
}

private struct NotMatched: Error, Equatable {}

/// How a probe's run ends, for the sentence "a probe is released however its run ends".
enum ProbeEnding: String, CaseIterable, Sendable {
  case cancellation, unmatchedError, cancelledTask
}

/// Contract §12, the sentences that no other suite tests at the level of a run.
@Suite("Contract §12: the circuit breaker, sentence by sentence")
struct BreakerContractTests {
  @Test(
    "a probe is released however its run ends, observed or not",
    arguments: ProbeEnding.allCases, [false, true])
  func probeReleased(ending: ProbeEnding, isObserved: Bool) async throws {
    let clock = ManualClock()
    let breaker = CircuitBreaker(clock: clock)
    let recorder = RetryEventRecorder()
    let environment = RetryEnvironment(
      clock: clock, observer: isObserved ? recorder.observer : nil, breaker: breaker)
    let policy = guarded()
    _ = try? await policy.run(in: environment) { () async throws -> Int in
      throw APIError.serverError(code: 503)
    }
    clock.advance(by: .seconds(1))
    switch ending {
    case .cancellation:
      await #expect(throws: CancellationError.self) {
        try await policy.run(in: environment) { () async throws -> Int in
          throw CancellationError()
        }
      }
    case .unmatchedError:
      await #expect(throws: NotMatched.self) {
        try await policy.run(in: environment) { () async throws -> Int in throw NotMatched() }
      }
    case .cancelledTask:
      let probe = Task {
        try await policy.run(in: environment) { () async throws -> Int in
          try await clock.sleep(for: .seconds(100))
          return 1
        }
      }
      // The probe is under way, asleep on the manual clock.
      await clock.waitForSleepers(count: 1)
      probe.cancel()
      _ = try? await probe.value
    }
    // The probe's permit went back: the next run is the probe, and its success closes.
    #expect(try await policy.run(in: environment) { 7 } == 7)
    #expect(breaker.state == .closed)
  }

  @Test(
    "a refusal thrown inside the operation is never retried, even by a rule naming its class",
    arguments: [
      ("circuitOpen", CircuitOpenError(remaining: nil) as any Error),
      ("limitExceeded", LimitExceededError(limit: 4)),
      ("throttled", RetryPolicy.ThrottledError(probability: 0.5)),
      ("rateLimited", RateLimitedError(wait: .seconds(1))),
    ])
  func refusalsNeverRetried(name: String, refusal: any Error) async throws {
    for text in ["retry 3 on \(name)", "retry 3", "retry 3 on any"] {
      let outer = try compile(policy: text)
      let recorder = RetryEventRecorder()
      let calls = Log()
      let environment = RetryEnvironment(clock: ManualClock(), observer: recorder.observer)
      var thrown: (any Error)?
      do {
        _ = try await outer.run(in: environment) { () async throws -> Int in
          calls.append("attempt")
          throw refusal
        }
      } catch {
        thrown = error
      }
      #expect(thrown.map { "\(type(of: $0))" } == "\(type(of: refusal))")
      #expect(calls.entries == ["attempt"], "\(text)")
      #expect(recorder.summaries.map(\.outcome) == [.failed(.errorNotMatched)], "\(text)")
    }
  }

  @Test("a run refused by an inner run's open circuit is not retried by the outer run")
  func innerCircuitOpenNotRetried() async throws {
    let breaker = CircuitBreaker()
    breaker.isolate()
    let inner = guarded()
    let outer = try compile(policy: "retry 3 on circuitOpen")
    let calls = Log()
    await #expect(throws: CircuitOpenError(remaining: nil)) {
      try await outer.run(in: RetryEnvironment(clock: ManualClock())) {
        calls.append("outer")
        return try await inner.run(in: RetryEnvironment(breaker: breaker)) { 1 }
      }
    }
    #expect(calls.entries == ["outer"])
  }

  @Test("a hedged attempt cut off by the policy's timeout is a failure for the breaker")
  func hedgedTimeoutsCount() async throws {
    let clock = ManualClock()
    let breaker = CircuitBreaker(clock: clock)
    var policy = guarded(timeout: .milliseconds(20))
    policy.hedge = HedgePolicy(count: 1, delay: .seconds(1))
    let environment = RetryEnvironment(clock: clock, breaker: breaker)
    let run = Task {
      try await policy.runHedged(in: environment) { _ in
        try await waitUntilCancelled()
        return 1
      }
    }
    // The attempt's timer and the hedge timer.
    await clock.waitForSleepers(count: 2)
    clock.advance(by: .milliseconds(20))
    await #expect(throws: AttemptTimeoutError.self) { try await run.value }
    #expect(breaker.state == .open)
  }

  @Test(
    "only the policy's own 'timeout' counts as a failure: an inner run's timeout is an error like any other",
    arguments: [false, true])
  func innerTimeoutIsAnError(outerRetriesTimeout: Bool) async throws {
    let clock = ManualClock()
    let breaker = CircuitBreaker(clock: clock)
    // The outer policy matches `serverError` (and `timeout` in the second case); it has no
    // `timeout` of its own.
    let outer = CompiledPolicy(
      rules: [
        RetryRule(
          behavior: .immediate(maxCount: 0),
          errorClasses: outerRetriesTimeout ? ["serverError", "timeout"] : ["serverError"])
      ],
      breaker: CircuitBreakerPolicy(
        failurePercent: 100, minimumAttempts: 1, openDuration: .seconds(1)))
    var inner = CompiledPolicy(
      rules: [RetryRule(behavior: .immediate(maxCount: 0), errorClasses: ["serverError"])])
    inner.attemptTimeout = .milliseconds(20)
    let environment = RetryEnvironment(clock: clock, breaker: breaker)
    let innerEnvironment = RetryEnvironment(clock: clock)
    let run = Task {
      try await outer.run(in: environment) {
        try await inner.run(in: innerEnvironment) { () async throws -> Int in
          try await waitUntilCancelled()
          return 1
        }
      }
    }
    await clock.waitForSleepers()
    clock.advance(by: .milliseconds(20))
    await #expect(throws: AttemptTimeoutError.self) { try await run.value }
    // Unmatched by the outer rules, the inner run's timeout counts as neither; matched, it is
    // a failure as any matched error is.
    #expect(breaker.state == (outerRetriesTimeout ? .open : .closed))
  }

  @Test("a breaker shared by name in 'breakers' and one for all in 'breaker' both count")
  func sharedBreakers() async throws {
    let clock = ManualClock()
    var named = guarded()
    named.name = "payments"
    let byName = CircuitBreaker()
    let forAll = CircuitBreaker()
    let environment = RetryEnvironment(
      clock: clock, breaker: forAll, breakers: ["payments": byName])
    _ = try? await named.run(in: environment) { () async throws -> Int in
      throw APIError.serverError(code: 503)
    }
    _ = try? await guarded().run(in: environment) { () async throws -> Int in
      throw APIError.serverError(code: 503)
    }
    #expect(byName.state == .open)
    #expect(forAll.state == .open)
    // Both breakers were made without a clock: they read the manual clock of the runs.
    clock.advance(by: .seconds(1))
    #expect(try await named.run(in: environment) { 1 } == 1)
    #expect(try await guarded().run(in: environment) { 2 } == 2)
    #expect(byName.state == .closed)
    #expect(forAll.state == .closed)
  }
}
