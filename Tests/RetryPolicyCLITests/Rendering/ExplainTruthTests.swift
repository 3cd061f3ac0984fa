import Foundation
import Testing

@testable import RetryPolicyCLI
@testable import RetryPolicyEngines

/// `explain` tells the truth: retry-after, ranges, `retry forever` and cancellation.
@Suite("Explain tells the truth")
struct ExplainTruthTests {
  /// The rows of the text table: retry, delay, range, worst-case elapsed.
  func textRows(_ text: String) -> [[String]] {
    text.split(separator: "\n").compactMap { line in
      let cells = line.split(separator: "  ", omittingEmptySubsequences: true).map {
        $0.trimmingCharacters(in: .whitespaces)
      }
      guard cells.count == 4, Int(cells[0]) != nil else { return nil }
      return cells
    }
  }

  /// The first rule's schedule and worst-case total of `explain --json`.
  func jsonRule(_ policy: String) async throws -> (rows: [[String: Any]], total: Any?) {
    let result = await ToolRunner.run(["explain", "--json", policy])
    let root = try #require(
      try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
    let rule = try #require((root["rules"] as? [[String: Any]])?.first)
    return (try #require(rule["schedule"] as? [[String: Any]]), rule["worstCaseTotal"])
  }

  @Test("with retry-after and a cap, every row's worst case is the cap, and so is the total")
  func retryAfterCapped() async throws {
    let policy = "retry 3 on serverError backoff 1s jitter 10% max 30s honoring retry-after"
    let text = await ToolRunner.run(["explain", policy]).standardOutput
    #expect(
      textRows(text) == [
        ["1", "1s", "0s – 30s", "30s"], ["2", "2s", "0s – 30s", "60s"],
        ["3", "4s", "0s – 30s", "90s"],
      ])
    #expect(
      text.contains(
        "worst-case total: 90s (1m 30s): every retry may wait the cap 'max 30s' when the error"
          + " carries a Retry-After\n"))
    let json = try await jsonRule(policy)
    #expect(json.rows.map { $0["max"] as? Double } == [30, 30, 30])
    #expect(json.rows.map { $0["min"] as? Double } == [0, 0, 0])
    #expect(json.total as? Double == 90)
  }

  @Test(
    "the worst-case total bounds what the driver waits, or names the waits it does not count",
    arguments: [
      ("retry 3 delay 1s", nil),
      ("retry 3 delay 1s rate 1/m", "without bound when other runs share them"),
      ("retry 3 delay 1s limit 2 queue 3 within 1m", "until 'within 1m' refuses it"),
    ])
  func worstCaseAgreesWithTheDriver(policy: String, note: String?) async throws {
    let explained = await ToolRunner.run(["explain", policy]).standardOutput
    let simulated = await ToolRunner.run(["simulate", policy, "--seed", "1", "--json"])
    let root = try #require(
      try JSONSerialization.jsonObject(with: Data(simulated.standardOutput.utf8))
        as? [String: Any])
    let elapsed = try #require((root["result"] as? [String: Any])?["elapsed"] as? Double)
    let total = try #require(try await jsonRule(policy).total as? Double)
    #expect(total == 3)
    if let note {
      #expect(explained.contains("worst-case total: 3s; the rules' delays only: each attempt"))
      #expect(explained.contains(note))
    } else {
      #expect(explained.contains("worst-case total: 3s\n"))
      #expect(elapsed <= total)
    }
    if policy.contains("rate 1/m") {
      // A lone run waits 59s for each retry's token: more than the rules' delays.
      #expect(elapsed == 180)
    }
  }

  @Test("with retry-after and no cap, every row and the total are unbounded")
  func retryAfterUncapped() async throws {
    let policy = "retry 2 backoff 1s honoring retry-after"
    let text = await ToolRunner.run(["explain", policy]).standardOutput
    #expect(
      textRows(text) == [
        ["1", "1s", "0s – unbounded", "unbounded"], ["2", "2s", "0s – unbounded", "unbounded"],
      ])
    #expect(text.contains("worst-case total: unbounded: a Retry-After delay"))
    let json = try await jsonRule(policy)
    #expect(json.rows.allSatisfy { $0["max"] is NSNull })
    #expect(json.total is NSNull)
  }

  @Test(
    "a range is '-' only when minimum, maximum and delay are all equal",
    arguments: [
      ("retry 2 delay 10s max 5s", "-"),
      ("retry 2 delay 1s", "-"),
      ("retry 2 delay 1s jitter 10%", "0.9s – 1.1s"),
      ("retry 2 delay 1s max 1s honoring retry-after", "0s – 1s"),
    ])
  func dashRange(policy: String, range: String) async {
    let text = await ToolRunner.run(["explain", policy]).standardOutput
    #expect(textRows(text).first?[2] == range)
  }

  @Test("text and JSON show the same first 100 rows for retry forever")
  func foreverRows() async throws {
    let policy = "retry forever backoff 1s +1s jitter 10% max 1m within 1h"
    let text = textRows(await ToolRunner.run(["explain", policy]).standardOutput)
    let json = try await jsonRule(policy).rows
    #expect(text.count == ExplainRendering.foreverScheduleLimit)
    #expect(json.count == text.count)
    #expect(text.map(\.[0]) == json.map { String($0["retry"] as? Int ?? 0) })
    #expect(
      text.map(\.[1]) == json.map { NumberText.decimal($0["delay"] as? Double ?? -1) + "s" })
  }

  @Test("a rule naming CancellationError still never retries cancellation, in simulate too")
  func cancellationNamed() async {
    for name in ["CancellationError", "cancellation", "cancel"] {
      let result = await ToolRunner.run([
        "simulate", "retry 3 on CancellationError", "--outcomes", "\(name),ok", "--seed", "1",
      ])
      #expect(result.status == 1, "\(name)")
      #expect(result.standardOutput.contains("gave up: cancelled"), "\(name)")
    }
    let explained = await ToolRunner.run(["explain", "retry 3 on CancellationError"])
    #expect(
      explained.standardOutput.contains(
        "retries on   CancellationError (but never cancellation, even when named)"))
  }
}
