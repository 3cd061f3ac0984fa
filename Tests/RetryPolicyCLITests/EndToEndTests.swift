import Foundation
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
}
