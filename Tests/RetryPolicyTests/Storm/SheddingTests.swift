import RetryPolicy
import RetryPolicySimulation
import RetryPolicyTesting
import Testing

/// The storm simulator with shedding stages: each client its own, on the virtual time.
@Suite("Storm simulation: limits, throttles and rates")
struct StormSheddingTests {
  /// 10 clients at 50 requests per second against 750 attempts per second, the backend four
  /// times slower from 10 s to 20 s; few busy clients, so that each client's own limit sees
  /// enough attempts to adapt.
  static func scenario() -> StormScenario {
    var scenario = StormScenario()
    scenario.clients = 10
    scenario.rate = 50
    scenario.capacity = 750
    scenario.outageStart = 10_000_000_000
    scenario.outageLength = 10_000_000_000
    scenario.slowdown = 4
    scenario.failureRate = 0
    scenario.duration = 40_000_000_000
    return scenario
  }

  static func policy(
    _ text: String, limit: ConcurrencyLimitPolicy? = nil, throttle: ThrottlePolicy? = nil,
    rate: RatePolicy? = nil
  ) throws -> CompiledPolicy {
    var policy = try compile(policy: text)
    policy.limit = limit
    policy.throttle = throttle
    policy.rate = rate
    return policy
  }

  @Test("each stage's refusals are counted by cause, and the backend never sees them")
  func refusalsByCause() throws {
    let simulation = StormSimulation(scenario: Self.scenario())
    let plain = try simulation.run(try compile(policy: "retry 3 immediately"))
    let limited = try simulation.run(
      try Self.policy("retry 3 immediately", limit: .fixed(limit: 4, queue: 0)))
    let adaptive = try simulation.run(
      try Self.policy("retry 3 immediately", limit: .adaptive(minimum: 1, maximum: 200)))
    let throttled = try simulation.run(
      try Self.policy("retry 3 immediately", throttle: ThrottlePolicy(factor: 2)))
    let rated = try simulation.run(
      try Self.policy("retry 3 immediately", rate: RatePolicy(count: 60, per: .seconds(1))))
    #expect(adaptive.refused(by: .limit) > 0)
    #expect(adaptive.attempts < plain.attempts)
    #expect(adaptive.successRatio > plain.successRatio)
    #expect(plain.refused == 0)
    #expect(limited.refused(by: .limit) > 0)
    #expect(limited.refused == limited.refused(by: .limit))
    #expect(throttled.refused(by: .throttle) > 0)
    // Without `within`, a rate's wait is never refused: it only delays.
    #expect(rated.refused(by: .rate) == 0)
    #expect(rated.attempts < plain.attempts)
    #expect(limited.attempts < plain.attempts)
    #expect(throttled.attempts < plain.attempts)
  }

  @Test("after a slowdown, an adaptive limit stops refusing: the fleet recovers")
  func adaptiveLimitRecovers() throws {
    // The README's comparison: 10 clients of 100 requests a second, 4× slower for 30 s.
    var scenario = StormScenario()
    scenario.clients = 10
    scenario.rate = 100
    scenario.capacity = 1500
    scenario.outageStart = 30_000_000_000
    scenario.outageLength = 30_000_000_000
    scenario.slowdown = 4
    scenario.failureRate = 0
    scenario.duration = 120_000_000_000
    let result = try StormSimulation(scenario: scenario).run(
      try Self.policy("retry 3 immediately", limit: .adaptive(minimum: 1, maximum: 200)))
    // With a buffer of 10 %, each client's limit kept refusing one or two requests in a
    // hundred after the slowdown: no second reached 99 %, the fleet never recovered.
    let recovery = try #require(result.recoverySeconds)
    #expect(recovery < 60)
    #expect(result.successRatio > 0.8)
  }
}

extension StormSheddingTests {
  @Test("a rate's wait past 'within' is refused, and a waiter in line leaves at 'within'")
  func withinBoundsWaits() throws {
    let simulation = StormSimulation(scenario: Self.scenario())
    let rated = try simulation.run(
      try Self.policy(
        "retry 3 immediately within 2s", rate: RatePolicy(count: 60, per: .seconds(1))))
    #expect(rated.refused(by: .rate) > 0)
    #expect((rated.p99 ?? 0) <= 3)
    let queued = try simulation.run(
      try Self.policy("retry 3 immediately within 2s", limit: .fixed(limit: 4, queue: 100)))
    #expect(queued.refused(by: .limit) > 0)
    // A waiter admitted before 'within' runs its attempt: at most the 1 s timeout more.
    #expect((queued.p99 ?? 0) <= 3)
  }

  @Test("as in the driver, an error no rule matches is an accept for the throttle")
  func unmatchedErrorsAreAccepts() async throws {
    var scenario = Self.scenario()
    scenario.slowdown = 1
    scenario.failureRate = 1
    var quiet = scenario
    quiet.outageStart = nil
    // One attempt a request; the outage's errors are `serverError`, which the first
    // policy's rule takes (not accepts) and the second's does not (accepts).
    let throttle = ThrottlePolicy(factor: 2, window: .seconds(5))
    let matching = try Self.policy("retry 0 on serverError", throttle: throttle)
    let other = try Self.policy("retry 0 on timeout", throttle: throttle)
    let simulation = StormSimulation(scenario: scenario)
    let matched = try simulation.run(matching).refused(by: .throttle)
    let unmatched = try simulation.run(other).refused(by: .throttle)
    let healthy = try StormSimulation(scenario: quiet).run(other).refused(by: .throttle)
    // Matched errors are rejections: the throttle refuses through the outage. Unmatched
    // ones are accepts, as the driver counts them: the outage looks healthy to it.
    #expect(matched > 1000)
    #expect(unmatched <= healthy + 20)
    // The driver on the same two policies, one client, every attempt a `serverError`.
    struct ServerError: Error {}
    let classes: [String: @Sendable (any Error) -> Bool] = ["serverError": { $0 is ServerError }]
    for (policy, refusesSome) in [(matching, true), (other, false)] {
      let environment = RetryEnvironment(
        clock: ManualClock(), errorClasses: classes, registry: RetryStateRegistry())
      var throttled = 0
      for _ in 0..<200 {
        do {
          _ = try await policy.run(in: environment) { () async throws -> Int in
            throw ServerError()
          }
        } catch is RetryPolicy.ThrottledError {
          throttled += 1
        } catch {}
      }
      #expect((throttled > 0) == refusesSome)
    }
  }
}
