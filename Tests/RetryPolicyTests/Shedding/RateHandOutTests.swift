import RetryPolicy
import RetryPolicyTesting
import Synchronization
import Testing

private let millisecond: Int64 = 1_000_000

/// A virtual time in nanoseconds that counts how often it is read.
private final class CountingTime: Sendable {
  private let nanoseconds = Atomic<Int64>(0)
  private let readings = Atomic<Int>(0)

  var reads: Int { readings.load(ordering: .relaxed) }

  func advance(by delta: Int64) {
    nanoseconds.wrappingAdd(delta, ordering: .relaxed)
  }

  var reader: @Sendable () -> Duration {
    { [self] in
      readings.wrappingAdd(1, ordering: .relaxed)
      return .nanoseconds(nanoseconds.load(ordering: .relaxed))
    }
  }
}

@Suite("Runtime: tokens of 'rate' handed out ahead, taken without reading the clock")
struct RateHandOutTests {
  @Test("tokens handed out ahead are charged at the next reading, as if all were taken then")
  func handOutSettles() {
    // 10/s, burst 5: a token every 100 ms.
    var machine = RateLimitStateMachine(policy: RatePolicy(count: 10, per: .seconds(1), burst: 5))
    #expect(machine.reserve(now: 0) == .now)
    #expect(machine.handOut(now: 0, upTo: 3) == 3)
    #expect(machine.ahead == 3)
    // Two of the three taken: the bucket holds the one handed out and left, and the one not
    // handed out.
    #expect(machine.tokens(now: 0, unused: 1) == 2)
    // All three taken; at 1 s the bucket would be full (5), but they count as taken then.
    #expect(machine.tokens(now: 1_000 * millisecond) == 2)
    #expect(machine.reserve(now: 1_000 * millisecond) == .now)
    #expect(machine.ahead == 0)
    #expect(machine.reserve(now: 1_000 * millisecond) == .now)
    #expect(machine.reserve(now: 1_000 * millisecond) == .after(100 * millisecond))
  }

  @Test("a hand-out never gives more than the bucket holds, nor more than asked")
  func handOutIsBounded() {
    var machine = RateLimitStateMachine(policy: RatePolicy(count: 10, per: .seconds(1), burst: 3))
    #expect(machine.reserve(now: 0) == .now)
    #expect(machine.handOut(now: 0, upTo: 100) == 2)
    // Both taken: the next token comes one interval after the bucket was emptied.
    #expect(machine.reserve(now: 0) == .after(100 * millisecond))
    #expect(machine.handOut(now: 500 * millisecond, upTo: 0) == 0)
  }

  @Test("the shortest wait over a span of times is the wait at its end, the hand-out settled")
  func shortestWait() {
    var machine = RateLimitStateMachine(policy: RatePolicy(count: 1, per: .seconds(60), burst: 1))
    #expect(machine.reserve(now: 0) == .now)
    #expect(machine.shortestWait(from: 0, to: 0) == 60_000 * millisecond)
    #expect(machine.shortestWait(from: 0, to: 10_000 * millisecond) == 50_000 * millisecond)
    #expect(machine.shortestWait(from: 0, to: 70_000 * millisecond) == 0)
    // Refusing changes nothing.
    #expect(machine.reserve(now: 0, maxWait: millisecond) == .refused(wait: 60_000 * millisecond))
    #expect(machine.shortestWait(from: 0, to: 0) == 60_000 * millisecond)
  }

  @Test("a limiter that hands out tokens reads its clock once per hand-out, within the rate")
  func limiterReadsTheClockOncePerHandOut() {
    let time = CountingTime()
    // 1000/s (1 ms a token), burst 100, tokens handed out 10 ms ahead: ten at a time.
    let limiter = RateLimiter(reading: time.reader, handOutWindow: .milliseconds(10))
    let policy = RatePolicy(count: 1000, per: .seconds(1), burst: 100)
    var admitted = 0
    for _ in 0..<100 where limiter.takeAtOnce(policy: policy, on: nil) { admitted += 1 }
    // The whole burst, with one reading of the clock per eleven tokens.
    #expect(admitted == 100)
    #expect(time.reads <= 10)
    #expect(!limiter.takeAtOnce(policy: policy, on: nil))
    #expect(limiter.tokens(for: policy) == 0)
    // 5 ms later, five tokens came: no more.
    time.advance(by: 5 * millisecond)
    admitted = 0
    for _ in 0..<20 where limiter.takeAtOnce(policy: policy, on: nil) { admitted += 1 }
    #expect(admitted == 5)
    // An attempt that may wait reserves the next token, one interval on.
    #expect(limiter.reserve(policy: policy, maxWait: nil) == .after(millisecond))
  }

  @Test("tokens handed out but not taken stay in the bucket's count")
  func tokensCountTheHandOut() {
    let time = CountingTime()
    let limiter = RateLimiter(reading: time.reader, handOutWindow: .milliseconds(10))
    let policy = RatePolicy(count: 1000, per: .seconds(1), burst: 100)
    #expect(limiter.takeAtOnce(policy: policy, on: nil))
    // One taken; ten handed out and not taken yet are still in the bucket.
    #expect(limiter.tokens(for: policy) == 99)
    #expect(limiter.takeAtOnce(policy: policy, on: nil))
    #expect(limiter.tokens(for: policy) == 98)
  }

  @Test("a refusal under 'within' is decided without a token at hand, and changes nothing")
  func refusalWithinChangesNothing() {
    let time = CountingTime()
    let limiter = RateLimiter(reading: time.reader, handOutWindow: .milliseconds(10))
    let policy = RatePolicy(count: 1, per: .seconds(60), burst: 1)
    #expect(limiter.refusal(policy: policy, maxWait: .milliseconds(1), on: nil) == nil)
    #expect(limiter.takeAtOnce(policy: policy, on: nil))
    let refusal = limiter.refusal(policy: policy, maxWait: .milliseconds(1), on: nil)
    #expect(refusal as? RateLimitedError == RateLimitedError(wait: .seconds(60)))
    time.advance(by: 30_000 * millisecond)
    let later = limiter.refusal(policy: policy, maxWait: .milliseconds(1), on: nil)
    #expect(later as? RateLimitedError == RateLimitedError(wait: .seconds(30)))
    #expect(limiter.refusal(policy: policy, maxWait: .seconds(30), on: nil) == nil)
    #expect(limiter.reserve(policy: policy, maxWait: nil) == .after(30_000 * millisecond))
  }

  @Test("a first attempt whose token comes past 'within' is refused as the driver refuses it")
  func firstAttemptRefusedWithin() async throws {
    let policy = try compile(
      policyFile: "policy rateGateWithin = retry 1 on Boom rate 1/m burst 1 within 1s"
    ).policies[0]
    let clock = ManualClock()
    let environment = RetryEnvironment(clock: clock)
    #expect(policy.sheddingGate(in: environment) != nil)
    #expect(try await policy.run(in: environment) { 1 } == 1)
    clock.advance(by: .seconds(20))
    // Without the driver (nothing observes the run), then with it: the same error.
    await #expect(throws: RateLimitedError(wait: .seconds(40))) {
      try await policy.run(in: environment) { () async throws -> Int in
        Issue.record("the operation was called")
        return 0
      }
    }
    let recorder = RetryEventRecorder()
    let observed = RetryEnvironment(clock: clock, observer: recorder.observer)
    await #expect(throws: RateLimitedError(wait: .seconds(40))) {
      try await policy.run(in: observed) { () async throws -> Int in
        Issue.record("the operation was called")
        return 0
      }
    }
    // A token within `within` is waited for: the gate leaves the attempt to the driver.
    clock.advance(by: .milliseconds(39_500))
    let waiting = Task { try await policy.run(in: environment) { 2 } }
    await clock.waitForSleepers(count: 1)
    #expect(clock.now.duration(to: try #require(clock.nextDeadline)) == .milliseconds(500))
    clock.advance(by: .milliseconds(500))
    #expect(try await waiting.value == 2)
  }

  @Test("run takes a token at hand for a first attempt of 'rate' alone; a failure retries")
  func runTakesTokenAtHand() async throws {
    struct Boom: Error {}
    let policy = try compile(
      policyFile: "policy rateAtHand = retry 1 on Boom immediately rate 1000000/s burst 1000"
    ).policies[0]
    let environment = RetryEnvironment()
    #expect(try await policy.run(in: environment) { 1 } == 1)
    // The gate is kept, and with it the tokens the limiter handed out.
    #expect(policy.rateTokensAtHand(in: environment) != nil)
    var calls = 0
    let value = try await policy.run(in: environment) { () async throws -> Int in
      calls += 1
      if calls == 1 { throw Boom() }
      return calls
    }
    #expect(value == 2)
    // Not for `within`, nor with another stage, nor with a host's registry.
    let within = try compile(policy: "retry 1 rate 1000000/s within 1s")
    _ = try await within.run(in: environment) { 1 }
    #expect(within.rateTokensAtHand(in: environment) == nil)
    let throttled = try compile(policy: "retry 1 rate 1000000/s throttle x2")
    _ = try await throttled.run(in: environment) { 1 }
    #expect(throttled.rateTokensAtHand(in: environment) == nil)
    let hosted = RetryEnvironment(registry: RetryStateRegistry())
    #expect(policy.rateTokensAtHand(in: hosted) == nil)
    #expect(policy.rateTokensAtHand(in: RetryEnvironment(clock: ManualClock())) == nil)
  }
}
