import Foundation
import RetryPolicy
import RetryPolicySimulation
import Testing

@testable import RetryPolicyCLI

/// `storm` at the edges of its scale (issue 23): memory that follows the requests, limits
/// said up front, no false "did not recover", and the same bytes as before for a seed.
@Suite("Command line: storm's limits")
struct StormLimitsTests {
  @Test("--json keeps its bytes for an existing seed")
  func jsonBytes() async {
    let result = await ToolRunner.run([
      "storm", "retry 3 backoff 100ms jitter full", "--seed", "5", "--clients", "100",
      "--outage", "10s+20s", "--duration", "40s", "--json",
    ])
    #expect(
      result.standardOutput == """
        {
          "policies": [
            {
              "policy": "retry 3 backoff 100ms jitter full",
              "offered": 4009,
              "attempts": 9915,
              "amplification": 2.4732,
              "outageAmplification": 3.9807,
              "successRatio": 0.5161,
              "p50": 0.051936,
              "p99": 0.398848,
              "peakLoad": 4.3333,
              "recoverySeconds": 0
            }
          ]
        }

        """)
  }

  @Test("10000 hours at a low rate keeps a record per busy second, not per second simulated")
  func longDurationStaysSmall() throws {
    var scenario = StormScenario()
    scenario.clients = 1
    scenario.rate = 0.001
    scenario.capacity = 1
    scenario.duration = 36_000_000_000_000_000
    let policy = try compile(policy: "retry 3 immediately")
    let result = try StormSimulation(scenario: scenario).run(policy)
    #expect(result.seconds.count == 36_000_000)
    #expect(result.offered > 30_000)
    #expect(result.seconds.entries.count <= result.offered + result.attempts)
    let svg = StormSVG.render([result], scenario: scenario)
    for line in svg.split(separator: "\n") where line.hasPrefix("<polyline") {
      #expect(line.split(separator: " ").count < StormSVG.maximumPoints + 10)
    }
  }

  @Test("a scale past the request limit is refused at once, naming the limit")
  func scaleRefusedUpFront() async {
    let result = await ToolRunner.run([
      "storm", "retry 3 immediately", "--clients", "1000000", "--duration", "100s",
    ])
    #expect(result.status == 2)
    #expect(
      result.standardError.hasPrefix(
        "retry-policy: error: the scenario sends about 125000000 requests (counting the load "
          + "kept up after '--duration'); the simulator's limit is 100000000"))
    #expect(!result.standardError.contains("without end"))
  }

  @Test("the attempt limit is named as the simulator's, not blamed on a policy with a count")
  func attemptLimitMessage() {
    let error = StormSimulationError.tooManyAttempts(limit: 100_000_000)
    #expect(error.description.contains("its limit of 100000000 attempts"))
    #expect(!error.description.contains("without end"))
  }

  @Test(
    "an outage that does not end within the window is an error, not 'did not recover'",
    arguments: [
      ("200s+10s", "the outage starts at 200s, after the simulated window of 100s"),
      ("50s+60s", "the outage ends at 110s, not before the simulated window does (100s)"),
    ])
  func outageOutsideWindow(outage: String, message: String) async {
    let result = await ToolRunner.run([
      "storm", "retry 3 immediately", "--clients", "10", "--outage", outage, "--duration",
      "100s",
    ])
    #expect(result.status == 2)
    #expect(result.standardError.contains(message), "\(result.standardError)")
    #expect(!result.standardOutput.contains("did not recover"))
  }
}
