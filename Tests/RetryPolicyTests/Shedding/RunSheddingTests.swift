import RetryPolicy
import RetryPolicyTesting
import Testing

private struct Boom: Error {}

/// The limiter the process-wide registry keeps for `policy`, as the driver finds it.
private func processWideLimiter(_ policy: CompiledPolicy) -> ConcurrencyLimiter? {
  RetryStateRegistry.processWide.state(for: policy, clock: ContinuousClock()).limiter
}

@Suite("Runtime: runs under 'limit' and 'throttle'")
struct RunSheddingTests {
  @Test("a first attempt past 'limit' throws LimitExceededError; the slot comes back after")
  func limitRefusesFirstAttempt() async throws {
    let policy = try compile(policyFile: "policy limitOne = retry 2 on Boom limit 1")
      .policies[0]
    let clock = ManualClock()
    let environment = RetryEnvironment(clock: clock)
    let holder = Task {
      try await policy.run(in: environment) {
        try await clock.sleep(for: .seconds(1))
        return 1
      }
    }
    await clock.waitForSleepers(count: 1)
    await #expect(throws: LimitExceededError(limit: 1)) {
      try await policy.run(in: environment) { 2 }
    }
    clock.advance(by: .seconds(1))
    #expect(try await holder.value == 1)
    #expect(try await policy.run(in: environment) { 3 } == 3)
  }

  @Test("a refused retry ends the run with its last error, and the event says why")
  func refusedRetryThrowsLastError() async throws {
    let policy = try compile(policyFile: "policy limitTwo = retry 2 on Boom limit 1").policies[0]
    let clock = ManualClock()
    let recorder = RetryEventRecorder()
    let environment = RetryEnvironment(clock: clock, observer: recorder.observer)
    let holder = Task {
      try await policy.run(in: RetryEnvironment(clock: clock)) {
        try await clock.sleep(for: .seconds(1))
        return 1
      }
    }
    await clock.waitForSleepers(count: 1)
    // The first attempt of this run is refused at once.
    await #expect(throws: LimitExceededError(limit: 1)) {
      try await policy.run(in: environment) { throw Boom() }
    }
    #expect(recorder.events.contains { "\($0)".contains("limit exceeded") })
    clock.advance(by: .seconds(1))
    _ = try await holder.value
  }

  @Test("'throttle' refuses locally once the service accepts too few")
  func throttleRefuses() async throws {
    let policy = try compile(policyFile: "policy throttled = retry 0 on Boom throttle x1")
      .policies[0]
    var refused = 0
    for _ in 0..<200 {
      do {
        _ = try await policy.run { () async throws -> Int in throw Boom() }
      } catch is RetryPolicy.ThrottledError {
        refused += 1
      } catch {}
    }
    #expect(refused > 100)
  }

  @Test("a first attempt that fails gives its slot back before its retry takes one")
  func failedFirstAttemptReleasesSlot() async throws {
    let policy = try compile(policyFile: "policy limitRetry = retry 1 on Boom limit 1")
      .policies[0]
    var calls = 0
    let value = try await policy.run(in: RetryEnvironment(clock: ManualClock())) {
      calls += 1
      if calls == 1 { throw Boom() }
      return calls
    }
    // Had the first attempt kept its slot, the retry would have been refused with Boom.
    #expect(value == 2)
    #expect(processWideLimiter(policy)?.inFlight == 0)
  }

  @Test("'limit N' without 'queue' admits N attempts at once, refuses the next, frees on return")
  func countedLimitAdmitsUpToN() async throws {
    let policy = try compile(policyFile: "policy limitThree = retry 0 limit 3").policies[0]
    let clock = ManualClock()
    let environment = RetryEnvironment(clock: clock)
    var holders: [Task<Int, any Error>] = []
    for index in 0..<3 {
      holders.append(
        Task {
          try await policy.run(in: environment) {
            try await clock.sleep(for: .seconds(1))
            return index
          }
        })
    }
    await clock.waitForSleepers(count: 3)
    let limiter = try #require(processWideLimiter(policy))
    #expect(policy.countedLimiter(in: environment) === limiter)
    #expect(limiter.inFlight == 3)
    #expect(limiter.limit == 3)
    // Both forms of `run` refuse the fourth, without calling the operation.
    await #expect(throws: LimitExceededError(limit: 3)) {
      try await policy.run(in: environment) { () async throws -> Int in
        Issue.record("the operation was called")
        return 0
      }
    }
    await #expect(throws: LimitExceededError(limit: 3)) {
      try await policy.run { () async throws -> Int in
        Issue.record("the operation was called")
        return 0
      }
    }
    clock.advance(by: .seconds(1))
    for holder in holders { _ = try await holder.value }
    #expect(limiter.inFlight == 0)
    #expect(try await policy.run(in: environment) { 4 } == 4)
  }

  @Test("equal policy values share one limiter, past the few kept without a lock too")
  func equalValuesShareLimiter() throws {
    let environment = RetryEnvironment()
    // More values than the lock-free slots hold (16): the later ones come from the table.
    let count = 20
    var first: [ConcurrencyLimiter] = []
    for index in 0..<count {
      let policy = try compile(policy: "retry \(index) on sharedLimitBoom limit 7")
      first.append(try #require(policy.countedLimiter(in: environment)))
    }
    for index in 0..<count {
      // The same text compiled again: an equal value, not a copy.
      let again = try compile(policy: "retry \(index) on sharedLimitBoom limit 7")
      #expect(again.countedLimiter(in: environment) === first[index])
      #expect(processWideLimiter(again) === first[index])
    }
    #expect(Set(first.map(ObjectIdentifier.init)).count == count)
  }
}
