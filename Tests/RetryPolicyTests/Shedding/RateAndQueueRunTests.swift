import Foundation
import RetryPolicy
import RetryPolicyTesting
import Testing

private struct Boom: Error {}

/// Waits (yielding, a bounded number of times) until `condition` holds.
private func eventually(_ condition: () -> Bool) async {
  for _ in 0..<10_000 where !condition() { await Task.yield() }
}

@Suite("Runtime: runs that wait for a token of 'rate' or in the line of 'limit N queue M'")
struct RateAndQueueRunTests {
  @Test("rate 2/s burst 3 within 1s: three start at once, two wait 0.5s and 1s, one refused")
  func rateWorkedExample() async throws {
    let policy = try compile(policyFile: "policy rateWorked = retry 0 rate 2/s burst 3 within 1s")
      .policies[0]
    let clock = ManualClock()
    let metrics = RetryMetrics()
    let recorder = RetryEventRecorder()
    let environment = RetryEnvironment(clock: clock, observer: recorder.observer, metrics: metrics)
    let start = clock.now
    for index in 1...3 {
      #expect(try await policy.run(in: environment) { index } == index)
    }
    let fourth = Task { try await policy.run(in: environment) { start.duration(to: clock.now) } }
    await clock.waitForSleepers(count: 1)
    let fifth = Task { try await policy.run(in: environment) { start.duration(to: clock.now) } }
    await clock.waitForSleepers(count: 2)
    // The sixth token would come after 1.5s, past `within`: refused at once, no token taken.
    await #expect(throws: RateLimitedError(wait: .milliseconds(1500))) {
      try await policy.run(in: environment) { Duration.zero }
    }
    clock.advance(by: .milliseconds(500))
    #expect(try await fourth.value == .milliseconds(500))
    clock.advance(by: .milliseconds(500))
    #expect(try await fifth.value == .seconds(1))
    #expect(recorder.events.contains { "\($0)".contains("rate limited") })
    let shed = recorder.events.filter {
      if case .attemptShed(1, .rateLimited) = $0 { true } else { false }
    }
    #expect(shed.count == 1)
    // The waits count as delays.
    #expect(
      recorder.summaries.map(\.totalDelay).sorted().suffix(2) == [.milliseconds(500), .seconds(1)])
    #expect(
      metrics.openMetricsText().contains(
        "retry_policy_refusals_total{policy=\"rateWorked\",by=\"rate\"} 1\n"))
  }

  @Test("a retry whose token would come past 'within' ends the run with its last error")
  func rateRefusesRetry() async throws {
    let policy = try compile(policyFile: "policy rateRetry = retry 2 on Boom rate 1/m within 30s")
      .policies[0]
    let clock = ManualClock()
    let recorder = RetryEventRecorder()
    let environment = RetryEnvironment(clock: clock, observer: recorder.observer)
    var calls = 0
    await #expect(throws: Boom.self) {
      try await policy.run(in: environment) { () async throws -> Int in
        calls += 1
        throw Boom()
      }
    }
    #expect(calls == 1)
    #expect(recorder.summaries.first?.outcome == .failed(.rateLimited))
  }

  @Test("a wait for a token is cancelled with its task and gives the token back")
  func rateWaitCancelled() async throws {
    let policy = try compile(policyFile: "policy rateCancel = retry 0 rate 1/s").policies[0]
    let clock = ManualClock()
    let environment = RetryEnvironment(clock: clock)
    let start = clock.now
    #expect(try await policy.run(in: environment) { 1 } == 1)
    let calls = Order()
    let waiting = Task { try await policy.run(in: environment) { calls.append(1) } }
    await clock.waitForSleepers(count: 1)
    #expect(clock.nextDeadline == start.advanced(by: .seconds(1)))
    waiting.cancel()
    await #expect(throws: CancellationError.self) { try await waiting.value }
    #expect(calls.values.isEmpty)
    // The cancelled wait's token came back: the next attempt waits 1s, not 2s.
    let next = Task { try await policy.run(in: environment) { start.duration(to: clock.now) } }
    await clock.waitForSleepers(count: 1)
    #expect(clock.nextDeadline == start.advanced(by: .seconds(1)))
    clock.advance(by: .seconds(1))
    #expect(try await next.value == .seconds(1))
  }

  @Test("limit 1 queue 1: a second attempt waits for the slot, a third is refused at once")
  func queueWaits() async throws {
    let policy = try compile(policyFile: "policy queueWaits = retry 0 limit 1 queue 1")
      .policies[0]
    let limiter = try #require(
      RetryStateRegistry.processWide.state(for: policy, clock: ContinuousClock()).limiter)
    let clock = ManualClock()
    let environment = RetryEnvironment(clock: clock)
    let start = clock.now
    let holder = Task {
      try await policy.run(in: environment) {
        try await clock.sleep(for: .seconds(2))
        return start.duration(to: clock.now)
      }
    }
    await clock.waitForSleepers(count: 1)
    let waiter = Task { try await policy.run(in: environment) { start.duration(to: clock.now) } }
    await eventually { limiter.waiting == 1 }
    #expect(limiter.waiting == 1)
    await #expect(throws: LimitExceededError(limit: 1)) {
      try await policy.run(in: environment) { Duration.zero }
    }
    clock.advance(by: .seconds(2))
    #expect(try await holder.value == .seconds(2))
    // The waiter started when the slot came free.
    #expect(try await waiter.value == .seconds(2))
    #expect(limiter.inFlight == 0 && limiter.waiting == 0)
  }

  @Test("waiters take free slots first come, first served")
  func queueIsFirstComeFirstServed() async throws {
    let policy = try compile(policyFile: "policy queueOrder = retry 0 limit 1 queue 5")
      .policies[0]
    let limiter = try #require(
      RetryStateRegistry.processWide.state(for: policy, clock: ContinuousClock()).limiter)
    let clock = ManualClock()
    let environment = RetryEnvironment(clock: clock)
    let order = Order()
    let holder = Task {
      try await policy.run(in: environment) { try await clock.sleep(for: .seconds(1)) }
    }
    await clock.waitForSleepers(count: 1)
    var waiters: [Task<Void, any Error>] = []
    for index in 1...3 {
      waiters.append(Task { try await policy.run(in: environment) { order.append(index) } })
      await eventually { limiter.waiting == index }
    }
    clock.advance(by: .seconds(1))
    try await holder.value
    for waiter in waiters { try await waiter.value }
    #expect(order.values == [1, 2, 3])
  }

  @Test("a waiter leaves the line at the 'within' deadline, refused")
  func queueLeavesAtDeadline() async throws {
    let policy = try compile(
      policyFile: "policy queueDeadline = retry 1 on Boom limit 1 queue 2 within 1s"
    ).policies[0]
    let limiter = try #require(
      RetryStateRegistry.processWide.state(for: policy, clock: ContinuousClock()).limiter)
    let clock = ManualClock()
    let recorder = RetryEventRecorder()
    let environment = RetryEnvironment(clock: clock, observer: recorder.observer)
    let holder = Task {
      try await policy.run(in: RetryEnvironment(clock: clock)) {
        try await clock.sleep(for: .seconds(5))
      }
    }
    await clock.waitForSleepers(count: 1)
    let waiter = Task { try await policy.run(in: environment) { 1 } }
    await eventually { limiter.waiting == 1 }
    clock.advance(by: .seconds(1))
    await #expect(throws: LimitExceededError(limit: 1, waited: true)) { try await waiter.value }
    #expect(limiter.waiting == 0)
    #expect(recorder.summaries.first?.outcome == .failed(.limitExceeded))
    clock.advance(by: .seconds(4))
    try await holder.value
  }

  @Test("a retry that waits in line past 'within' ends the run with its last error")
  func queuedRetryEndsWithLastError() async throws {
    let policy = try compile(
      policyFile: "policy queueRetry = retry 1 on Boom limit 1 queue 1 within 1s"
    ).policies[0]
    let limiter = try #require(
      RetryStateRegistry.processWide.state(for: policy, clock: ContinuousClock()).limiter)
    let clock = ManualClock()
    let recorder = RetryEventRecorder()
    let environment = RetryEnvironment(clock: clock, observer: recorder.observer)
    let calls = Order()
    let first = Task {
      try await policy.run(in: environment) { () async throws -> Int in
        calls.append(1)
        try await clock.sleep(for: .milliseconds(500))
        throw Boom()
      }
    }
    await clock.waitForSleepers(count: 1)
    // Another run waits in line and takes the slot when the first attempt fails.
    let other = Task {
      try await policy.run(in: RetryEnvironment(clock: clock)) {
        try await clock.sleep(for: .seconds(5))
      }
    }
    await eventually { limiter.waiting == 1 }
    clock.advance(by: .milliseconds(500))
    // The retry now waits in line behind the other run (asleep for 5s), its timer set for
    // `within`.
    await clock.waitForSleepers(count: 2)
    #expect(limiter.waiting == 1 && limiter.inFlight == 1)
    clock.advance(by: .milliseconds(500))
    await #expect(throws: Boom.self) { try await first.value }
    #expect(calls.values == [1])
    #expect(recorder.summaries.first?.outcome == .failed(.limitExceeded))
    clock.advance(by: .seconds(5))
    try await other.value
  }

  @Test("a cancelled waiter leaves the line and its run throws CancellationError")
  func queueWaiterCancelled() async throws {
    let policy = try compile(policyFile: "policy queueCancel = retry 0 limit 1 queue 1")
      .policies[0]
    let limiter = try #require(
      RetryStateRegistry.processWide.state(for: policy, clock: ContinuousClock()).limiter)
    let clock = ManualClock()
    let environment = RetryEnvironment(clock: clock)
    let holder = Task {
      try await policy.run(in: environment) { try await clock.sleep(for: .seconds(1)) }
    }
    await clock.waitForSleepers(count: 1)
    let calls = Order()
    let waiter = Task { try await policy.run(in: environment) { calls.append(1) } }
    await eventually { limiter.waiting == 1 }
    waiter.cancel()
    await #expect(throws: CancellationError.self) { try await waiter.value }
    #expect(calls.values.isEmpty)
    #expect(limiter.waiting == 0)
    clock.advance(by: .seconds(1))
    try await holder.value
    #expect(limiter.inFlight == 0)
  }
}

/// The order in which operations ran.
private final class Order: @unchecked Sendable {
  // Sound: `list` is read and written only while `lock` is held.
  private let lock = NSLock()
  private var list: [Int] = []

  func append(_ value: Int) { lock.withLock { list.append(value) } }
  var values: [Int] { lock.withLock { list } }
}
