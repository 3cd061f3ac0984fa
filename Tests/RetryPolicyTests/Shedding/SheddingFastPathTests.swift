import RetryPolicy
import RetryPolicyTesting
import Testing

private struct Boom: Error {}

/// The state the process-wide registry keeps for `policy`, as `run` and the driver find it.
private func processWide(_ policy: CompiledPolicy) -> PolicyState {
  RetryStateRegistry.processWide.state(for: policy, clock: ContinuousClock())
}

/// The delay of the retry after a failed first attempt of `policy` on a manual clock with
/// random numbers from `seed`: read from the run's sleep (`isObserved` false: `run` makes
/// the first attempt itself) or from the event the driver reports.
private func firstRetryDelay(
  _ policy: CompiledPolicy, seed: UInt64, isObserved: Bool
) async throws -> Duration {
  let clock = ManualClock()
  let recorder = RetryEventRecorder()
  let environment = RetryEnvironment(
    clock: clock, random: SeededRandomNumberGenerator(seed: seed),
    observer: isObserved ? recorder.observer : nil)
  let run = Task {
    var calls = 0
    return try await policy.run(in: environment) {
      calls += 1
      if calls == 1 { throw Boom() }
      return calls
    }
  }
  await clock.waitForSleepers(count: 1)
  let deadline = try #require(clock.nextDeadline)
  let delay = clock.now.duration(to: deadline)
  clock.advance(by: delay)
  #expect(try await run.value == 2)
  if isObserved { #expect(recorder.scheduledDelays == [delay]) }
  return delay
}

@Suite("Shedding: a run's first attempt asks its stages without the driver")
struct SheddingFastPathTests {
  @Test("a full 'limit adaptive' refuses a first attempt without calling it; the slot comes back")
  func adaptiveLimitRefusesFirstAttempt() async throws {
    let policy = try compile(policyFile: "policy fastAdaptive = retry 0 limit adaptive max 1")
      .policies[0]
    let clock = ManualClock()
    let environment = RetryEnvironment(clock: clock)
    #expect(policy.sheddingGate(in: environment) != nil)
    let holder = Task {
      try await policy.run(in: environment) {
        try await clock.sleep(for: .seconds(1))
        return 1
      }
    }
    await clock.waitForSleepers(count: 1)
    let limiter = try #require(processWide(policy).limiter)
    #expect(limiter.inFlight == 1)
    await #expect(throws: LimitExceededError(limit: 1)) {
      try await policy.run(in: environment) { () async throws -> Int in
        Issue.record("the operation was called")
        return 0
      }
    }
    clock.advance(by: .seconds(1))
    #expect(try await holder.value == 1)
    #expect(limiter.inFlight == 0)
    #expect(try await policy.run { 2 } == 2)
    #expect(limiter.inFlight == 0)
  }

  @Test("a retry's jitter is the same whether 'run' or the driver made the first attempt")
  func jitterMatchesTheDriver() async throws {
    for clause in ["throttle x2", "limit adaptive", "rate 1000/s", "limit 5"] {
      let policy = try compile(
        policyFile: "policy fastJitter = retry 1 on Boom backoff 1s jitter 50% \(clause)"
      ).policies[0]
      for seed: UInt64 in [1, 2, 3] {
        let unobserved = try await firstRetryDelay(policy, seed: seed, isObserved: false)
        let observed = try await firstRetryDelay(policy, seed: seed, isObserved: true)
        #expect(unobserved == observed, "\(clause), seed \(seed)")
      }
    }
  }

  @Test("a first attempt that must wait for its token goes to the driver; nothing counts twice")
  func rateWaitGoesToTheDriver() async throws {
    let policy = try compile(
      policyFile: "policy fastRate = retry 0 rate 1/m burst 1 throttle x2"
    ).policies[0]
    let clock = ManualClock()
    let environment = RetryEnvironment(clock: clock)
    #expect(try await policy.run(in: environment) { 1 } == 1)
    let rate = try #require(processWide(policy).rateLimiter)
    let clause = try #require(policy.rate)
    #expect(rate.tokens(for: clause) == 0)
    let waiting = Task { try await policy.run(in: environment) { 2 } }
    await clock.waitForSleepers(count: 1)
    // The driver waits for the token that comes after a minute.
    #expect(clock.now.duration(to: try #require(clock.nextDeadline)) == .seconds(60))
    clock.advance(by: .seconds(60))
    #expect(try await waiting.value == 2)
    #expect(rate.tokens(for: clause) == 0)
    let throttle = try #require(processWide(policy).throttle)
    let counts = throttle.counts(for: try #require(policy.throttle))
    #expect(counts.requests == 2)
    #expect(counts.accepts == 2)
  }

  @Test("a throttle that refuses almost every attempt refuses first attempts as the driver does")
  func throttleRefusesFirstAttempts() async throws {
    let policy = try compile(policyFile: "policy fastThrottle = retry 0 on Boom throttle x1")
      .policies[0]
    let environment = RetryEnvironment(
      clock: ManualClock(), random: SeededRandomNumberGenerator(seed: 9))
    var refused = 0
    var called = 0
    for _ in 0..<300 {
      do {
        _ = try await policy.run(in: environment) { () async throws -> Int in
          called += 1
          throw Boom()
        }
      } catch let error as RetryPolicy.ThrottledError {
        #expect(error.probability > 0)
        refused += 1
      } catch {}
    }
    let counts = try #require(processWide(policy).throttle).counts(
      for: try #require(policy.throttle))
    // Every attempt asked counts once: the refused ones and the ones called.
    #expect(counts.requests == 300)
    #expect(refused + called == 300)
    #expect(refused > 200)
  }
}
