import RetryPolicy
import RetryPolicyTesting
import Testing

private struct Boom: Error {}

/// The state the process-wide registry keeps for `policy`.
private func processWide(_ policy: CompiledPolicy) -> PolicyState {
  RetryStateRegistry.processWide.state(for: policy, clock: ContinuousClock())
}

/// The refusals a run reported, by attempt.
private func shed(_ recorder: RetryEventRecorder) -> [(attempt: Int, reason: RetryStopReason)] {
  recorder.events.compactMap { event in
    guard case .attemptShed(let attempt, let reason) = event else { return nil }
    return (attempt, reason)
  }
}

/// The attempts a run started.
private func started(_ recorder: RetryEventRecorder) -> [Int] {
  recorder.events.compactMap { event in
    guard case .attemptStarted(let attempt) = event else { return nil }
    return attempt
  }
}

@Suite("Hedging: each attempt asks 'throttle', 'rate' and 'limit'")
struct HedgeSheddingTests {
  @Test("a hedge 'limit' refuses is reported, spends no budget token, and the first attempt wins")
  func limitRefusesHedge() async throws {
    let policy = try compile(
      policyFile: "policy hedgeLimit = retry 2 hedge 2 after 100ms budget 10% limit 1"
    ).policies[0]
    let clock = ManualClock()
    let recorder = RetryEventRecorder()
    let budget = RetryBudget()
    let environment = RetryEnvironment(
      clock: clock, observer: recorder.observer, budget: budget)
    let run = Task {
      try await policy.runHedged(in: environment) { attempt in
        try await clock.sleep(for: .seconds(1))
        return attempt.number
      }
    }
    await clock.waitForSleepers(count: 2)  // attempt 1 and the hedge timer
    let tokens = budget.tokens
    clock.advance(by: .milliseconds(100))
    await clock.waitForSleepers(count: 1)
    // The hedge found the only slot taken: refused, reported, no token spent.
    #expect(budget.tokens == tokens)
    clock.advance(by: .milliseconds(900))
    #expect(try await run.value == 1)
    #expect(started(recorder) == [1])
    let refusals = shed(recorder)
    #expect(refusals.count == 1)
    #expect(refusals.first?.attempt == 2)
    #expect(refusals.first?.reason == .limitExceeded)
    #expect(processWide(policy).limiter?.inFlight == 0)
  }

  @Test("a hedged run whose first attempt the throttle refuses throws ThrottledError")
  func throttleRefusesFirstAttempt() async throws {
    let policy = try compile(
      policyFile: "policy hedgeThrottle = retry 0 on Boom hedge 1 after 1s throttle x1"
    ).policies[0]
    // The same state as any run of the policy: failures make the throttle refuse.
    for _ in 0..<50 {
      _ = try? await policy.run(in: RetryEnvironment(clock: ManualClock())) {
        () async throws -> Int in throw Boom()
      }
    }
    let recorder = RetryEventRecorder()
    let environment = RetryEnvironment(
      clock: ManualClock(), random: SeededRandomNumberGenerator(seed: 3),
      observer: recorder.observer)
    var refused = 0
    for _ in 0..<20 {
      do {
        _ = try await policy.runHedged(in: environment) { _ in throw Boom() }
      } catch is RetryPolicy.ThrottledError {
        refused += 1
      } catch {}
    }
    #expect(refused > 10)
    #expect(shed(recorder).allSatisfy { $0.attempt == 1 && $0.reason == .throttled })
    #expect(shed(recorder).count == refused)
  }

  @Test("a hedge waits for its token of 'rate' and starts when it comes")
  func hedgeWaitsForItsToken() async throws {
    let policy = try compile(
      policyFile: "policy hedgeRate = retry 2 hedge 1 after 100ms rate 1/s burst 1"
    ).policies[0]
    let clock = ManualClock()
    let recorder = RetryEventRecorder()
    let environment = RetryEnvironment(clock: clock, observer: recorder.observer)
    let startedAt = StartLog()
    let run = Task {
      try await policy.runHedged(in: environment) { attempt in
        startedAt.record(attempt.number, at: clock.now)
        if attempt.number == 1 { try await clock.sleep(for: .seconds(5)) }
        return attempt.number
      }
    }
    await clock.waitForSleepers(count: 2)  // attempt 1 and the hedge timer
    clock.advance(by: .milliseconds(100))
    // The hedge waits 900 ms for the next token.
    await clock.waitForSleepers(count: 2)
    #expect(started(recorder) == [1])
    clock.advance(by: .milliseconds(900))
    #expect(try await run.value == 2)
    #expect(startedAt.offsets == [1: .zero, 2: .seconds(1)])
    #expect(shed(recorder).isEmpty)
  }

  @Test("a hedge still waiting for its token when the run ends gives it back")
  func waitingHedgeGivesItsTokenBack() async throws {
    let policy = try compile(
      policyFile: "policy hedgeRateBack = retry 2 hedge 1 after 100ms rate 1/s burst 1"
    ).policies[0]
    let clock = ManualClock()
    let environment = RetryEnvironment(clock: clock)
    let run = Task {
      try await policy.runHedged(in: environment) { attempt in
        try await clock.sleep(for: .milliseconds(500))
        return attempt.number
      }
    }
    await clock.waitForSleepers(count: 2)
    clock.advance(by: .milliseconds(100))
    await clock.waitForSleepers(count: 2)  // attempt 1 and the hedge's wait for its token
    clock.advance(by: .milliseconds(400))
    #expect(try await run.value == 1)
    // At 500 ms: the token the hedge reserved (due at 1 s) is back, so the next comes at 1 s.
    let rate = try #require(processWide(policy).rateLimiter)
    let clause = try #require(policy.rate)
    #expect(rate.tokens(for: clause) == 0)
    clock.advance(by: .milliseconds(500))
    #expect(rate.tokens(for: clause) == 1)
  }
}

/// When each attempt of a hedged run started, on the manual clock.
private final class StartLog: Sendable {
  private let starts = Locked<[Int: Duration]>([:])

  func record(_ attempt: Int, at instant: ManualClock.Instant) {
    starts.withLock { $0[attempt] = instant.offset }
  }

  var offsets: [Int: Duration] { starts.withLock { $0 } }
}
