import Foundation
import Testing

@testable import RetryPolicyCLI

/// `retry-policy storm` in-process: options, the report's forms and their determinism.
@Suite("Command line: storm")
struct StormCommandTests {
  static let small = ["--clients", "100", "--outage", "10s+20s", "--duration", "40s"]

  @Test("the JSON report has contract §11's keys, in order, for each policy")
  func jsonKeys() async throws {
    let result = await ToolRunner.run(
      ["storm", "retry 3 immediately", "retry 3 backoff 100ms jitter full budget 10%", "--json"]
        + Self.small)
    #expect(result.status == 0, "\(result.standardError)")
    let object = try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8))
    let policies = try #require((object as? [String: Any])?["policies"] as? [[String: Any]])
    #expect(policies.count == 2)
    #expect(policies.first?["policy"] as? String == "retry 3 immediately")
    let keys = [
      "policy", "offered", "attempts", "amplification", "outageAmplification", "successRatio",
      "p50", "p99", "peakLoad", "recoverySeconds",
    ]
    for policy in policies { #expect(Set(policy.keys) == Set(keys)) }
    // In order, as written.
    let positions = keys.compactMap { result.standardOutput.range(of: "\"\($0)\"")?.lowerBound }
    #expect(positions == positions.sorted() && positions.count == keys.count)
    let amplification = try #require(policies.first?["outageAmplification"] as? Double)
    #expect(abs(amplification - 4) < 0.02)
  }

  @Test("a policy with 'rate' reports its refusals by cause: refusedBy.rate and a legend line")
  func rateRefusals() async throws {
    let policy = "retry 3 backoff 100ms rate 5/s burst 2 within 1s"
    let result = await ToolRunner.run(["storm", policy, "--json", "--rate", "1"] + Self.small)
    #expect(result.status == 0, "\(result.standardError)")
    let object = try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8))
    let policies = try #require((object as? [String: Any])?["policies"] as? [[String: Any]])
    let refusedBy = try #require(policies.first?["refusedBy"] as? [String: Int])
    let byRate = try #require(refusedBy["rate"])
    #expect(byRate > 0)
    #expect(refusedBy["breaker"] == 0 && refusedBy["limit"] == 0 && refusedBy["throttle"] == 0)
    #expect(policies.first?["refused"] as? Int == byRate)
    let text = await ToolRunner.run(["storm", policy, "--rate", "1"] + Self.small)
    #expect(text.standardOutput.contains("(rate \(byRate))"), "\(text.standardOutput)")
  }

  @Test("the same seed prints the same bytes, text and JSON; another seed does not")
  func sameSeedSameBytes() async {
    for format in [[], ["--json"]] {
      let arguments = ["storm", "retry 3 backoff 100ms jitter full", "--seed", "5"] + format
      let first = await ToolRunner.run(arguments + Self.small)
      let second = await ToolRunner.run(arguments + Self.small)
      let other = await ToolRunner.run(arguments + Self.small + ["--rate", "1.01"])
      #expect(first.standardOutput == second.standardOutput)
      #expect(first.standardOutput != other.standardOutput)
    }
  }

  @Test("the text report has the table and a chart per policy; NO_COLOR keeps it plain")
  func textAndColor() async {
    let arguments = ["storm", "retry 3 immediately", "retry 2 budget 10%"] + Self.small
    let plain = await ToolRunner.run(
      arguments, environment: ["NO_COLOR": "1"], isTerminal: true)
    #expect(plain.status == 0)
    #expect(plain.standardOutput.contains("amplif."))
    #expect(plain.standardOutput.contains("  A  retry 3 immediately"))
    #expect(plain.standardOutput.contains("  B  retry 2 budget 10%"))
    #expect(plain.standardOutput.components(separatedBy: "success |").count == 3)
    #expect(plain.standardOutput.contains("outage |          ~~~~~"))
    #expect(!plain.standardOutput.contains("\u{1B}["))
    let colored = await ToolRunner.run(arguments, isTerminal: true)
    #expect(colored.standardOutput.contains("\u{1B}[31m#"))
  }

  @Test("--svg writes a self-contained chart: a line per policy in each panel, the outage shaded")
  func svg() async throws {
    let folder = try ToolRunner.makeFolder([:])
    defer { try? FileManager.default.removeItem(at: folder) }
    let path = folder.appendingPathComponent("storm.svg").path
    let result = await ToolRunner.run(
      ["storm", "retry 3 immediately", "retry 3 budget 10%", "--svg", path] + Self.small)
    #expect(result.status == 0, "\(result.standardError)")
    let svg = try String(contentsOfFile: path, encoding: .utf8)
    #expect(svg.hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\""))
    #expect(svg.hasSuffix("</svg>\n"))
    #expect(svg.components(separatedBy: "<polyline").count == 5)
    #expect(svg.components(separatedBy: "fill=\"\(StormSVG.outageColor)\"").count == 3)
    #expect(svg.contains(StormSVG.palette[0]) && svg.contains(StormSVG.palette[1]))
    #expect(!svg.contains("<script") && !svg.contains("href"))
    #expect(svg.contains("retry 3 budget 10%"))
  }

  @Test(
    "bad options are usage errors that name the option",
    arguments: [
      (["--outage", "30s"], "--outage"), (["--outage", "1s+2x"], "--outage"),
      (["--clients", "0"], "--clients"), (["--failure-rate", "50%"], "'--failure-rate' needs"),
      (["--outage", "1s+1s", "--failure-rate", "150%"], "--failure-rate"),
      (["--rate", "nan"], "--rate"),
      (["--clients", "1000000", "--duration", "10000h"], "limit is 100000000"),
      (["--policy", "x"], "'--policy' needs '--file'"),
    ])
  func usageErrors(options: [String], message: String) async {
    let result = await ToolRunner.run(["storm", "retry 3"] + options)
    #expect(result.status == 2)
    #expect(result.standardError.contains(message), "\(result.standardError)")
    #expect(result.standardOutput.isEmpty)
  }

  @Test("a hedged policy is refused with the reason, not simulated as if it did not hedge")
  func hedgedPolicy() async {
    let result = await ToolRunner.run(
      ["storm", "retry 3 immediately", "retry 2 hedge 1 after 50ms"] + Self.small)
    #expect(result.status == 1)
    #expect(result.standardError.contains("storm does not simulate 'hedge' yet"))
  }

  @Test("an invalid policy is reported with its column and exits 1")
  func invalidPolicy() async {
    let result = await ToolRunner.run(["storm", "retry 3 bakoff 1s"] + Self.small)
    #expect(result.status == 1)
    #expect(result.standardError.contains("<policy>:1:9: error: unknown clause 'bakoff'"))
  }

  @Test("--file --policy takes a named policy from a file, beside policies given as text")
  func fromFile() async throws {
    let folder = try ToolRunner.makeFolder(["p.retry": "policy api = retry 2 backoff 1s\n"])
    defer { try? FileManager.default.removeItem(at: folder) }
    let path = folder.appendingPathComponent("p.retry").path
    let result = await ToolRunner.run(
      ["storm", "--file", path, "--policy", "api", "retry 3", "--json"] + Self.small)
    #expect(result.status == 0, "\(result.standardError)")
    #expect(result.standardOutput.contains("\"policy\": \"api: retry 2 backoff 1s\""))
    #expect(result.standardOutput.contains("\"policy\": \"retry 3\""))
  }
}
