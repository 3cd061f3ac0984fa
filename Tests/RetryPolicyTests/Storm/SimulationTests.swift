import RetryPolicy
import RetryPolicySimulation
import Testing

/// The storm simulator's numbers: the sanity checks of issue 14, on small fleets.
@Suite("Storm simulation")
struct StormSimulationTests {
  /// 200 clients at 1 request per second for 60 s, with a full outage from 10 s to 40 s.
  static func outageScenario(seed: UInt64 = 1) -> StormScenario {
    var scenario = StormScenario()
    scenario.clients = 200
    scenario.capacity = 300
    scenario.duration = 60_000_000_000
    scenario.outageStart = 10_000_000_000
    scenario.outageLength = 30_000_000_000
    scenario.seed = seed
    return scenario
  }

  static func simulate(_ text: String, _ scenario: StormScenario) throws -> StormResult {
    try StormSimulation(scenario: scenario).run(try compile(policy: text))
  }

  @Test("in a full outage 'retry 3 immediately' makes 4 attempts per request", arguments: [1, 2])
  func immediateRetriesQuadrupleTheLoad(seed: UInt64) throws {
    let result = try Self.simulate("retry 3 immediately", Self.outageScenario(seed: seed))
    let amplification = try #require(result.outageAmplification)
    #expect(abs(amplification - 4) < 0.01, "\(amplification)")
    #expect(result.outageOffered > 5000)
  }

  @Test("a budget of 10% holds the outage's amplification to 1.1 plus the budget's floor")
  func budgetCapsTheAmplification() throws {
    let scenario = Self.outageScenario()
    let result = try Self.simulate("retry 3 immediately budget 10%", scenario)
    let amplification = try #require(result.outageAmplification)
    // Each client's bucket holds at most its 10 tokens plus 0.1 per request sent before the
    // outage: the floor, spread over the outage's requests.
    let requestsBefore = scenario.rate * 10
    let floor =
      Double(scenario.clients) * (Double(RetryBudget.initialTokens) + 0.1 * requestsBefore)
      / Double(result.outageOffered)
    #expect(amplification <= 1.1 + floor, "\(amplification) > 1.1 + \(floor)")
    #expect(amplification > 1.05)
  }

  @Test(
    "without an outage every policy makes one attempt per request",
    arguments: [
      "retry 3 immediately", "retry 3 backoff 100ms jitter full budget 10%",
      "retry forever backoff 1s max 10s within 30s", "retry 5 on timeout delay 50ms",
    ])
  func noOutageNoAmplification(text: String) throws {
    var scenario = Self.outageScenario()
    scenario.outageStart = nil
    let result = try Self.simulate(text, scenario)
    #expect(result.attempts == result.offered)
    #expect(result.amplification == 1)
    #expect(result.successRatio == 1)
    #expect(result.outageAmplification == nil)
    #expect(result.recoverySeconds == nil)
    // Service times are 25 ms plus an exponential of mean 25 ms: a median near 42 ms.
    let median = try #require(result.p50)
    #expect(median > 0.035 && median < 0.05, "\(median)")
  }

  @Test("full jitter lowers the peak load of retries after a crash, on the same seed")
  func jitterSpreadsTheRetries() throws {
    // Attempts take 1 s, so a second of requests is in flight when the backend crashes and
    // fails them all at once: without jitter their retries come back together.
    var scenario = Self.outageScenario()
    scenario.latency = 1_000_000_000
    scenario.timeout = 5_000_000_000
    let plain = try Self.simulate("retry 3 backoff 1s", scenario)
    let jittered = try Self.simulate("retry 3 backoff 1s jitter full", scenario)
    #expect(jittered.peakLoad < plain.peakLoad * 0.75, "\(jittered.peakLoad) vs \(plain.peakLoad)")
  }

  @Test("after a slowdown, immediate retries keep the backend saturated; a budget recovers")
  func metastableFailure() throws {
    var scenario = Self.outageScenario()
    scenario.failureRate = 0
    scenario.slowdown = 4
    let storm = try Self.simulate("retry 3 immediately", scenario)
    let budgeted = try Self.simulate("retry 3 immediately budget 10%", scenario)
    #expect(storm.recoverySeconds == nil)
    #expect(storm.seconds[50].successRatio < 0.5, "\(storm.seconds[50])")
    let recovery = try #require(budgeted.recoverySeconds)
    #expect(recovery < 10)
    #expect(budgeted.successRatio > storm.successRatio)
  }

  @Test("a policy with a per-attempt timeout gives up on slow attempts at that timeout")
  func policyTimeoutIsTheClientsTimeout() throws {
    var scenario = Self.outageScenario()
    scenario.outageStart = nil
    let result = try Self.simulate("retry 2 on timeout immediately timeout 30ms", scenario)
    // Service times are 25 ms plus an exponential of mean 25 ms: some exceed 30 ms.
    #expect(result.attempts > result.offered)
    #expect(try #require(result.p99) < 0.1)
  }

  @Test("the same seed gives the same result; another seed another")
  func deterministic() throws {
    let text = "retry 3 backoff 100ms jitter full budget 10%"
    let first = try Self.simulate(text, Self.outageScenario(seed: 7))
    let again = try Self.simulate(text, Self.outageScenario(seed: 7))
    let other = try Self.simulate(text, Self.outageScenario(seed: 8))
    #expect(first == again)
    #expect(first != other)
  }

  @Test("a policy that retries without end stops at the limit of attempts")
  func attemptLimit() throws {
    var scenario = Self.outageScenario()
    scenario.attemptLimit = 20_000
    #expect(throws: StormSimulationError.tooManyAttempts(limit: 20_000)) {
      try Self.simulate("retry forever immediately within 1h", scenario)
    }
  }

  @Test("'within' ends the retries of each request during the outage")
  func withinStopsRetries() throws {
    let result = try Self.simulate(
      "retry forever backoff 1s within 5s", Self.outageScenario())
    let amplification = try #require(result.outageAmplification)
    // Retries after 1, 2 and 4 s (3 s, 7 s elapsed): the third would end past 5 s.
    #expect(amplification > 2.5 && amplification < 3.05, "\(amplification)")
  }
}
