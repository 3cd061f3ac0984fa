import RetryPolicyTesting
import Testing

@testable import RetryPolicy

private struct Boom: Error {}

/// SplitMix64, for the steps of the comparison.
private struct Steps: RandomNumberGenerator {
  var state: UInt64
  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var mixed = state
    mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
    mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
    return mixed ^ (mixed >> 31)
  }
}

@Suite("Runtime: the throttle's atomic counts")
struct ThrottleCountsTests {
  @Test(
    "one task at a time, the throttle counts and decides as the pure window, on virtual time",
    arguments: [(1, UInt64(1)), (20, 2), (120, 3), (120, 4)])
  func agreesWithWindow(seconds: Int, seed: UInt64) {
    let clock = ManualClock()
    let throttle = AdaptiveThrottle(clock: clock)
    let policy = ThrottlePolicy(factor: 1.5, window: .seconds(seconds))
    var window = ThrottleWindow(window: policy.window)
    let windowNanoseconds = Int64(seconds) * 1_000_000_000
    var steps = Steps(state: seed)
    var now: Int64 = 0
    var refusals = 0
    // The throttle's window exists from its first request: an accept before it is not kept.
    var asked = false
    for _ in 0..<5_000 {
      // Steps of time: none, within a bucket, about a bucket, past the whole window.
      let advance: Int64
      switch steps.next() % 10 {
      case 0..<5: advance = 0
      case 5..<8: advance = Int64(steps.next() % UInt64(windowNanoseconds / 200))
      case 8: advance = Int64(steps.next() % UInt64(windowNanoseconds / 10))
      default: advance = steps.next() % 50 == 0 ? windowNanoseconds + 1 : 0
      }
      now += advance
      clock.advance(by: .nanoseconds(advance))
      if steps.next() % 3 == 0 {
        throttle.recordAccept()
        if asked { window.accept(now: now) }
      } else {
        asked = true
        let uniform = Double(steps.next() >> 11) * 0x1p-53
        let expected = window.refusalProbability(now: now, factor: policy.factor)
        #expect(throttle.refusalProbability(for: policy) == expected)
        let admitted = window.request(now: now, factor: policy.factor, uniform: uniform)
        let refusal = throttle.request(policy: policy, uniform: uniform)
        #expect((refusal == nil) == admitted)
        if let refusal {
          #expect(refusal.probability == expected)
          refusals += 1
        }
      }
      #expect(throttle.counts(for: policy) == window.counts(now: now))
    }
    // The steps reach both outcomes.
    #expect(refusals > 0)
  }

  @Test("tasks on several threads counting at once lose no request and no accept")
  func concurrentCounts() async {
    let clock = ManualClock()
    let throttle = AdaptiveThrottle(clock: clock)
    let policy = ThrottlePolicy(factor: 2)
    await withTaskGroup(of: Void.self) { group in
      for _ in 0..<8 {
        group.addTask {
          for _ in 0..<5_000 {
            _ = throttle.request(policy: policy, uniform: 0.5)
            throttle.recordAccept()
          }
        }
      }
    }
    #expect(throttle.counts(for: policy) == (requests: 40_000, accepts: 40_000))
    #expect(throttle.refusalProbability(for: policy) == 0)
  }

  @Test("an accept before any request counts nothing, as before the window exists")
  func acceptBeforeRequest() {
    let throttle = AdaptiveThrottle(clock: ManualClock())
    let policy = ThrottlePolicy(factor: 2)
    throttle.recordAccept()
    #expect(throttle.counts(for: policy) == (requests: 0, accepts: 0))
    _ = throttle.request(policy: policy, uniform: 0.5)
    throttle.recordAccept()
    #expect(throttle.counts(for: policy) == (requests: 1, accepts: 1))
  }

  @Test("the decision draws from a seeded source, or from the throttle's own generator")
  func decisionDraws() {
    let throttle = AdaptiveThrottle(clock: ManualClock())
    // A seeded source: a copy is drawn from, so the same source decides the same way.
    let seeded = SeededRandomNumberGenerator(seed: 5)
    var copy = seeded
    let uniform = Double(copy.next() >> 11) * 0x1p-53
    for _ in 0..<10 {
      #expect((throttle.decide(uniform + 1e-9, drawingFrom: seeded) != nil))
      #expect(throttle.decide(uniform, drawingFrom: seeded) == nil)
    }
    // The system generator: the throttle's own draws, refusing about the probability's share.
    var refused = 0
    for _ in 0..<10_000
    where throttle.decide(0.3, drawingFrom: SystemRandomNumberGenerator()) != nil {
      refused += 1
    }
    #expect((2_500..<3_500).contains(refused))
    #expect(throttle.decide(0, drawingFrom: SystemRandomNumberGenerator()) == nil)
  }

  @Test(
    "with the system generator, a first attempt is refused with the SRE probability, not twice",
    arguments: [
      "throttle x1 over 2m", "throttle x1 over 3m limit 100000",
      "throttle x1 over 4m rate 1000000/s within 10s",
    ])
  func firstAttemptDrawsOnce(clauses: String) async throws {
    // Alone, `run` asks the throttle itself; with a limit, through its shedding gate; with a
    // rate, through the driver alone (the gate would leave a drawn attempt to the driver).
    let policy = try compile(policy: "retry 0 on Boom \(clauses)")
    let throttle = try #require(
      RetryStateRegistry.processWide.state(for: policy, clock: ContinuousClock()).throttle)
    let clause = try #require(policy.throttle)
    // 10,000 requests and 5,000 accepts: p = 5,000 / 10,001, about one half.
    for _ in 0..<10_000 { _ = throttle.request(policy: clause, uniform: 0.999_999) }
    for _ in 0..<5_000 { throttle.recordAccept() }
    var refused = 0
    var called = 0
    for _ in 0..<1_000 {
      do {
        _ = try await policy.run(in: RetryEnvironment()) { called += 1 }
      } catch is RetryPolicy.ThrottledError {
        refused += 1
      }
    }
    #expect(refused + called == 1_000)
    // About half; asking twice (a draw that admits, then the driver's) refused about 3 in 4.
    #expect((400..<600).contains(refused))
    #expect(throttle.counts(for: clause).requests == 11_000)
  }
}

@Suite("Shedding: a run asks 'throttle' alone without the driver")
struct ThrottleAloneTests {
  private struct Other: Error {}

  @Test(
    "requests and accepts count as the driver counts them: a success, a retry, an error no rule takes"
  )
  func countsAsTheDriver() async throws {
    let policy = try compile(
      policyFile: "policy throttleAlone = retry 1 on Boom immediately throttle x2"
    ).policies[0]
    let environment = RetryEnvironment(
      clock: ManualClock(), random: SeededRandomNumberGenerator(seed: 3))
    let throttle = try #require(
      RetryStateRegistry.processWide.state(for: policy, clock: ContinuousClock()).throttle)
    let clause = try #require(policy.throttle)
    #expect(try await policy.run(in: environment) { 1 } == 1)
    #expect(throttle.counts(for: clause) == (requests: 1, accepts: 1))
    // A failure a rule retries is no accept; the retry's success is.
    var calls = 0
    let value = try await policy.run(in: environment) { () async throws -> Int in
      calls += 1
      if calls == 1 { throw Boom() }
      return calls
    }
    #expect(value == 2)
    #expect(throttle.counts(for: clause) == (requests: 3, accepts: 2))
    // An error no rule matches is an accept, and ends the run.
    await #expect(throws: Other.self) {
      try await policy.run(in: environment) { () async throws -> Int in throw Other() }
    }
    #expect(throttle.counts(for: clause) == (requests: 4, accepts: 3))
  }

  @Test("only the process-wide registry's throttle of a policy with 'throttle' alone is asked")
  func onlyThrottleAlone() throws {
    let alone = try compile(policy: "retry 1 throttle x3")
    #expect(
      try alone.admitFirstThrottled(in: RetryEnvironment(registry: RetryStateRegistry())) == nil)
    for other in [
      "retry 1 throttle x3 within 1s", "retry 1 throttle x3 limit 4",
      "retry 1 throttle x3 rate 5/s",
    ] {
      #expect(try compile(policy: other).admitFirstThrottled(in: RetryEnvironment()) == nil)
    }
    #expect(try alone.admitFirstThrottled(in: RetryEnvironment()) != nil)
  }
}
