import Foundation
import RetryPolicyTestSupport
import Testing

@testable import RetryPolicyCLI

/// Runs the built `retry-policy` binary as a process.
@Suite("End to end: the built binary")
struct EndToEndTests {
  @Test("--version and --help exit 0")
  func versionAndHelp() throws {
    let version = try ToolRunner.runBinary(["--version"])
    #expect(version.status == 0)
    #expect(version.standardOutput == "retry-policy 0.1.0\n")
    let help = try ToolRunner.runBinary(["check", "--help"])
    #expect(help.status == 0)
    #expect(help.standardOutput.contains("USAGE:"))
  }

  @Test("no arguments and unknown subcommands exit 2")
  func usage() throws {
    #expect(try ToolRunner.runBinary([]).status == 2)
    let misspelt = try ToolRunner.runBinary(["chek", "x.retry"])
    #expect(misspelt.status == 2)
    #expect(
      misspelt.standardError.hasPrefix(
        "retry-policy: error: unknown subcommand 'chek'; did you mean 'check'?\n"))
  }

  @Test("an unreadable file exits 2")
  func unreadable() throws {
    let result = try ToolRunner.runBinary(["check", "does-not-exist.retry"])
    #expect(result.status == 2)
    #expect(result.standardError.contains("cannot read 'does-not-exist.retry'"))
  }

  /// The package's root folder, where `Samples/` is.
  static let root = packageRoot

  static let worked = "retry 5 on serverError backoff 1s x1.5 jitter 10%"

  /// The deliberate mistakes: `Samples/mistakes/NAME.retry.bad`, relative to the root.
  static let mistakes = ["counts", "delays", "keywords", "limits", "policies", "units"].map {
    "Samples/mistakes/\($0).retry.bad"
  }

  @Test(
    "check of each deliberate mistake prints what its .expected file records and exits 1",
    arguments: mistakes)
  func checkMistake(path: String) throws {
    let result = try ToolRunner.runBinary(["check", path], directory: Self.root)
    #expect(result.status == 1)
    let expected = Self.root.appendingPathComponent(
      path.replacingOccurrences(of: ".retry.bad", with: ".expected"))
    Golden.check(result.standardOutput, against: expected)
    #expect(result.standardError.hasPrefix("checked 1 file: "))
  }

  @Test("check of the Samples folder finds no errors and exits 0")
  func checkSamples() throws {
    let samples = try ToolRunner.runBinary(["check", "Samples"], directory: Self.root)
    #expect(samples.status == 0, "\(samples.standardOutput)")
    #expect(samples.standardError.hasPrefix("checked 7 files: no problems"))
    let format = try ToolRunner.runBinary(["fmt", "--check", "Samples"], directory: Self.root)
    #expect(format.status == 0, "\(format.standardOutput)")
  }

  @Test("check --format json of the mistakes is valid JSON with every diagnostic")
  func checkJSON() throws {
    let result = try ToolRunner.runBinary(
      ["check", "--format", "json"] + Self.mistakes, directory: Self.root)
    #expect(result.status == 1)
    let root = try #require(
      try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
    let diagnostics = try #require(root["diagnostics"] as? [[String: Any]])
    let text = try ToolRunner.runBinary(["check"] + Self.mistakes, directory: Self.root)
    let headLines = text.standardOutput.split(separator: "\n").filter {
      $0.hasPrefix("Samples/") && !$0.contains(": note: ")
    }
    #expect(diagnostics.count == headLines.count)
    Golden.check(result.standardOutput, against: "check-mistakes.json")
  }

  @Test("explain's text and JSON match their golden files")
  func explainGolden() throws {
    let text = try ToolRunner.runBinary(["explain", Self.worked])
    #expect(text.status == 0)
    Golden.check(text.standardOutput, against: "explain-worked-example.txt")
    let json = try ToolRunner.runBinary(["explain", "--json", Self.worked])
    #expect(json.status == 0)
    Golden.check(json.standardOutput, against: "explain-worked-example.json")
    let reads = try ToolRunner.runBinary(
      ["explain", "--file", "Samples/http-api-client.retry", "--policy", "reads"],
      directory: Self.root)
    #expect(reads.status == 0)
    Golden.check(reads.standardOutput, against: "explain-http-reads.txt")
  }

  @Test("explain - reads standard input; an invalid policy exits 1 with its diagnostic")
  func explainStandardInput() throws {
    let fromInput = try ToolRunner.runBinary(["explain", "--json", "-"], input: Self.worked)
    #expect(fromInput.status == 0)
    let root = try #require(
      try JSONSerialization.jsonObject(with: Data(fromInput.standardOutput.utf8))
        as? [String: Any])
    let rule = try #require((root["rules"] as? [[String: Any]])?.first)
    let schedule = try #require(rule["schedule"] as? [[String: Any]])
    #expect(schedule.map { $0["delay"] as? Double } == [1.0, 1.5, 2.25, 3.375, 5.0625])
    let invalid = try ToolRunner.runBinary(["explain", "-"], input: "retry 3 bakoff 1s\n")
    #expect(invalid.status == 1)
    #expect(invalid.standardError.hasPrefix("<policy>:1:9: error: unknown clause 'bakoff'"))
    Golden.check(invalid.standardError, against: "explain-invalid.txt")
  }

  @Test("fmt --check, fmt - and simulate run as processes with their exit statuses")
  func formatAndSimulate() throws {
    let folder = try ToolRunner.makeFolder(["a.retry": "policy  a = retry 3   delay 1s\n"])
    defer { try? FileManager.default.removeItem(at: folder) }
    let check = try ToolRunner.runBinary(["fmt", "--check", "a.retry"], directory: folder)
    #expect(check.status == 1)
    #expect(check.standardOutput == "a.retry\n")
    let piped = try ToolRunner.runBinary(["fmt", "-"], input: "policy  a = retry 3   delay 1s\n")
    #expect(piped.status == 0)
    #expect(piped.standardOutput == "policy a = retry 3 delay 1s\n")
    let simulation = try ToolRunner.runBinary([
      "simulate", Self.worked, "--outcomes", "serverError*2,ok", "--seed", "7",
    ])
    #expect(simulation.status == 0)
    Golden.check(simulation.standardOutput, against: "simulate-worked-example.txt")
  }
}
