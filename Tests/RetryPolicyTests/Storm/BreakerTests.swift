import RetryPolicy
import RetryPolicySimulation
import Testing

/// The storm simulator with circuit breakers: one per client, on the virtual time.
@Suite("Storm simulation: breakers")
struct StormBreakerTests {
  /// 1,000 clients at 1 request per second against 1,500 attempts per second, the backend
  /// four times slower from 30 s to 60 s: the scenario of `.ci/storm-sample`.
  static func slowdownScenario() -> StormScenario {
    var scenario = StormScenario()
    scenario.outageStart = 30_000_000_000
    scenario.outageLength = 30_000_000_000
    scenario.slowdown = 4
    scenario.failureRate = 0
    scenario.duration = 120_000_000_000
    return scenario
  }

  static func withBreaker(_ text: String) throws -> CompiledPolicy {
    var policy = try compile(policy: text)
    policy.breaker = CircuitBreakerPolicy(failurePercent: 50, openDuration: .seconds(5))
    return policy
  }

  @Test("a breaker lets the fleet recover from the outage 'retry 3 immediately' does not survive")
  func breakerRecovers() throws {
    // The scenario at a fifth of its size (200 clients, capacity 300): the same collapse and
    // the same recovery (`.ci/storm-sample` runs it at full size), a fifth of the work.
    var scenario = Self.slowdownScenario()
    scenario.clients = 200
    scenario.capacity = 300
    let simulation = StormSimulation(scenario: scenario)
    let plain = try simulation.run(try compile(policy: "retry 3 immediately"))
    let guarded = try simulation.run(try Self.withBreaker("retry 3 immediately"))
    #expect(plain.recoverySeconds == nil)
    #expect(plain.refused == 0)
    let recovery = try #require(guarded.recoverySeconds)
    #expect(recovery < 30, "\(recovery)")
    #expect(guarded.refused > 0)
    #expect(guarded.attempts < plain.attempts)
  }

  @Test("without an outage no breaker opens: nothing is refused")
  func quietFleet() throws {
    var scenario = Self.slowdownScenario()
    scenario.outageStart = nil
    scenario.clients = 200
    scenario.capacity = 300
    let result = try StormSimulation(scenario: scenario).run(
      try Self.withBreaker("retry 3 immediately"))
    #expect(result.refused == 0)
    #expect(result.attempts == result.offered)
    #expect(result.successRatio == 1)
  }

  @Test("the same seed gives the same result with breakers")
  func deterministic() throws {
    var scenario = Self.slowdownScenario()
    scenario.clients = 200
    scenario.capacity = 300
    let policy = try Self.withBreaker("retry 3 backoff 100ms jitter full")
    let first = try StormSimulation(scenario: scenario).run(policy)
    let second = try StormSimulation(scenario: scenario).run(policy)
    #expect(first == second)
  }
}
