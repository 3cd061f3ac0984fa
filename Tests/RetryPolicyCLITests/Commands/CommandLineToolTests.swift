import Foundation
import Testing

@testable import RetryPolicyCLI

@Suite("Command line: dispatch, help and usage errors")
struct CommandLineToolTests {
  @Test("no arguments prints usage on standard error and exits 2")
  func noArguments() async {
    let result = await ToolRunner.run([])
    #expect(result.status == 2)
    #expect(result.standardOutput.isEmpty)
    #expect(result.standardError.hasPrefix("usage: retry-policy <subcommand>"))
    for name in ["check", "explain", "fmt", "simulate", "repl"] {
      #expect(result.standardError.contains("  \(name) "))
    }
  }

  @Test("--version prints the version and exits 0")
  func version() async {
    let result = await ToolRunner.run(["--version"])
    #expect(
      result == CommandResult(status: 0, standardOutput: "retry-policy 0.1.0\n", standardError: ""))
  }

  @Test("--help, -h and help list every subcommand")
  func help() async {
    for arguments in [["--help"], ["-h"], ["help"]] {
      let result = await ToolRunner.run(arguments)
      #expect(result.status == 0)
      #expect(result.standardOutput.contains("SUBCOMMANDS:"))
      #expect(result.standardOutput.contains("EXAMPLES:"))
      #expect(result.standardError.isEmpty)
    }
  }

  @Test(
    "every subcommand has help with usage and examples",
    arguments: ["check", "explain", "fmt", "simulate"])
  func subcommandHelp(name: String) async {
    let viaFlag = await ToolRunner.run([name, "--help"])
    let viaHelp = await ToolRunner.run(["help", name])
    #expect(viaFlag.status == 0)
    #expect(viaFlag == viaHelp)
    #expect(viaFlag.standardOutput.hasPrefix("retry-policy \(name): "))
    #expect(viaFlag.standardOutput.contains("USAGE:\n  retry-policy \(name)"))
    #expect(viaFlag.standardOutput.contains("EXAMPLES:\n  retry-policy \(name)"))
    #expect(viaFlag.standardOutput.contains("EXIT STATUS:"))
  }

  @Test(
    "usage errors exit 2 with a message, a suggestion and a hint",
    arguments: [
      (["chek"], "unknown subcommand 'chek'; did you mean 'check'?", "retry-policy --help"),
      (
        ["explian", "x"], "unknown subcommand 'explian'; did you mean 'explain'?",
        "retry-policy --help"
      ),
      (
        ["--verison"], "unknown option '--verison'; did you mean '--version'?",
        "retry-policy --help"
      ),
      (["help", "fmtt"], "unknown subcommand 'fmtt'; did you mean 'fmt'?", "retry-policy --help"),
      (
        ["explain", "--jsno", "retry 1"], "unknown option '--jsno'; did you mean '--json'?",
        "retry-policy explain --help"
      ),
      (
        ["check", "--formt", "json", "x"], "unknown option '--formt'; did you mean '--format'?",
        "retry-policy check --help"
      ),
      (["check"], "missing file or folder to check", "retry-policy check --help"),
      (["fmt"], "missing file or folder to format", "retry-policy fmt --help"),
      (["explain"], "missing policy (or '--file')", "retry-policy explain --help"),
      (
        ["explain", "--policy", "x", "retry 1"], "'--policy' needs '--file'",
        "retry-policy explain --help"
      ),
      (
        ["simulate", "retry 1", "--seed", "x"],
        "invalid value 'x' for '--seed'; expected a whole number from 0 to 18446744073709551615",
        "retry-policy simulate --help"
      ),
      (
        ["simulate", "retry 1", "--outcomes", "a*0"],
        "invalid count '0' in outcome 'a*0'; expected a whole number from 1 to 1000000",
        "retry-policy simulate --help"
      ),
    ])
  func usageErrors(arguments: [String], message: String, hint: String) async {
    let result = await ToolRunner.run(arguments)
    #expect(result.status == 2)
    #expect(result.standardOutput.isEmpty)
    #expect(result.standardError == "retry-policy: error: \(message)\nSee '\(hint)'.\n")
  }

  @Test("check of a missing file exits 2 and names it")
  func checkMissingFile() async {
    let result = await ToolRunner.run(["check", "/nonexistent/file.retry"])
    #expect(result.status == 2)
    #expect(
      result.standardError.hasPrefix(
        "retry-policy: error: cannot read '/nonexistent/file.retry': no such file or directory\n"))
  }

  @Test("explain --file of a missing file exits 2")
  func explainMissingFile() async {
    let result = await ToolRunner.run(["explain", "--file", "/nonexistent.retry", "--policy", "a"])
    #expect(result.status == 2)
    #expect(result.standardError.contains("cannot read '/nonexistent.retry'"))
  }

  @Test("errors are colored only on a terminal without NO_COLOR")
  func colorDecision() async {
    let plain = await ToolRunner.run(["chek"])
    let terminal = await ToolRunner.run(["chek"], isTerminal: true)
    let noColor = await ToolRunner.run(["chek"], environment: ["NO_COLOR": "1"], isTerminal: true)
    let emptyNoColor = await ToolRunner.run(
      ["chek"], environment: ["NO_COLOR": ""], isTerminal: true)
    #expect(!plain.standardError.contains("\u{1B}"))
    #expect(terminal.standardError.contains("\u{1B}[1;31merror:"))
    #expect(!noColor.standardError.contains("\u{1B}"))
    #expect(emptyNoColor.standardError.contains("\u{1B}"))
    #expect(Output.usesColor(isTerminal: false, environment: [:]) == false)
  }

  @Test("folders expand to their .retry files, recursively and sorted, skipping hidden ones")
  func folderExpansion() throws {
    let folder = try ToolRunner.makeFolder([
      "b.retry": "", "a/z.retry": "", "a/c.retry": "", "notes.txt": "", ".hidden/x.retry": "",
      ".y.retry": "", "dir.retry/inner.retry": "",
    ])
    defer { try? FileManager.default.removeItem(at: folder) }
    let expansion = PolicyInput.expand(
      [folder.path, folder.path + "/missing"], context: ToolRunner.context())
    let relative = expansion.files.map { String($0.name.dropFirst(folder.path.count + 1)) }
    #expect(relative == ["a/c.retry", "a/z.retry", "b.retry", "dir.retry/inner.retry"])
    #expect(expansion.errors.map(\.reason) == ["no such file or directory"])
    #expect(expansion.empty.isEmpty)
  }
}
