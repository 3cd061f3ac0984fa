import RetryPolicy
import RetryPolicyTesting
import Testing

private struct Boom: Error {}

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
}
