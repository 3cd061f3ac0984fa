import Foundation
import Testing

@testable import RetryPolicyCLI

/// `simulate --metrics` and `storm --metrics FILE`: the families of RetryMetrics for the
/// simulated runs.
@Suite("Command line: metrics of simulated runs")
struct MetricsCommandTests {
  @Test("simulate --metrics prints the run's metrics on virtual time instead of the timeline")
  func simulate() async {
    let result = await ToolRunner.run([
      "simulate", "retry 3 on serverError backoff 1s", "--outcomes", "serverError*2,ok~20ms",
      "--seed", "1", "--metrics",
    ])
    #expect(result.status == 0)
    let text = result.standardOutput
    #expect(text.hasSuffix("# EOF\n"))
    #expect(
      text.contains("retry_policy_attempts_total{policy=\"anonymous\",outcome=\"success\"} 1\n"))
    #expect(
      text.contains("retry_policy_attempts_total{policy=\"anonymous\",outcome=\"failure\"} 2\n"))
    #expect(
      text.contains(
        "retry_policy_runs_total{policy=\"anonymous\",outcome=\"success\",reason=\"\"} 1\n"))
    #expect(text.contains("retry_policy_run_duration_seconds_sum{policy=\"anonymous\"} 3.02\n"))
    #expect(!text.contains("attempt 1"))
  }

  @Test("simulate refuses --json with --metrics")
  func simulateJSONAndMetrics() async {
    let result = await ToolRunner.run(["simulate", "retry 3", "--json", "--metrics"])
    #expect(result.status == 2)
    #expect(result.standardError.contains("'--json' and '--metrics' cannot be used together"))
  }

  @Test("storm --metrics FILE writes each compared policy's metrics, labelled by its text")
  func storm() async throws {
    let folder = FileManager.default.temporaryDirectory
      .appendingPathComponent("storm-metrics-\(UInt64.random(in: 0...UInt64.max))")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let path = folder.appendingPathComponent("storm.txt").path
    let result = await ToolRunner.run([
      "storm", "retry 2 immediately", "retry 2 budget 10%", "--clients", "20", "--duration",
      "20s", "--outage", "5s+5s", "--json", "--metrics", path,
    ])
    #expect(result.status == 0, "\(result.standardError)")
    let text = try String(contentsOfFile: path, encoding: .utf8)
    #expect(text.hasSuffix("# EOF\n"))
    #expect(
      text.contains(
        "retry_policy_attempts_total{policy=\"retry 2 immediately\",outcome=\"failure\"}"))
    #expect(
      text.contains("retry_policy_refusals_total{policy=\"retry 2 budget 10%\",by=\"budget\"}"))
    // Every attempt the report counts is in the metrics (they count the uncounted tail too).
    let report = try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8))
    let policies = try #require((report as? [String: Any])?["policies"] as? [[String: Any]])
    let attempts = try #require(policies.first?["attempts"] as? Int)
    let line = try #require(
      text.split(separator: "\n").first {
        $0.hasPrefix("retry_policy_attempt_duration_seconds_count{policy=\"retry 2 immediately\"}")
      })
    let recorded = try #require(Int(line.split(separator: " ").last ?? ""))
    #expect(recorded >= attempts)
  }
}
