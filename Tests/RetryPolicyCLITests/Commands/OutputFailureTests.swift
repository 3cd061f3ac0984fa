import Foundation
import Testing

@testable import RetryPolicyCLI

/// Output that cannot be written: a full disk, a closed descriptor, a reader that went away.
@Suite("Output failures: every subcommand says so and exits 2")
struct OutputFailureTests {
  /// Command lines that write to standard output, with their standard input.
  static let commandLines: [(arguments: [String], input: String)] = [
    (["explain", "retry 3"], ""),
    (["explain", "--json", "retry forever backoff 1s within 1h"], ""),
    (["explain", "-"], "retry 3 backoff 1s"),
    (["check", "-"], "retry 3 bakoff 1s"),
    (["check", "--format", "json", "-"], "retry 3"),
    (["fmt", "-"], "policy  a = retry 3   delay 1s\n"),
    (["fmt", "--check", "-"], "policy  a = retry 3   delay 1s\n"),
    (["simulate", "retry 3 backoff 1s", "--outcomes", "serverError,ok", "--seed", "1"], ""),
    (["--help"], ""),
    (["--version"], ""),
    (["help", "check"], ""),
    (["explain", "--help"], ""),
    (["repl", "--help"], ""),
    (["help", "repl"], ""),
    (["repl"], "retry 3\n:json\n"),
  ]

  @Test(
    "a full disk is reported with its reason and exit status 2",
    arguments: zip(commandLines.map(\.arguments), commandLines.map(\.input)))
  func fullDisk(arguments: [String], input: String) async {
    let result = await CommandLineTool.run(
      arguments: arguments, standardInput: Data(input.utf8), outputFailure: Platform.noSpace)
    #expect(result.status == 2)
    #expect(
      result.standardError.hasSuffix(
        "retry-policy: error: cannot write output: no space left on device\n"))
  }

  @Test(
    "a broken pipe ends quietly with a status that is not 0",
    arguments: zip(commandLines.map(\.arguments), commandLines.map(\.input)))
  func brokenPipe(arguments: [String], input: String) async {
    let result = await CommandLineTool.run(
      arguments: arguments, standardInput: Data(input.utf8), outputFailure: Platform.brokenPipe)
    #expect(result.status == 2)
    #expect(!result.standardError.contains("cannot write output"))
  }

  @Test("the REPL from a pipe stops at the first lost output and never exits 0")
  func replStops() async {
    let output = Output(
      destination: .failingOutput(Platform.noSpace), outputUsesColor: false,
      errorUsesColor: false)
    let context = CommandContext(
      output: output, environment: [:], input: Data("retry 3\nretry 4\n:quit\n".utf8))
    let status = await CommandLineTool.run(["repl"], context: context)
    #expect(status == 2)
    #expect(
      output.capturedError == "retry-policy: error: cannot write output: no space left on device\n")
  }

  @Test(
    "the built binary writing to /dev/full says so and exits 2", arguments: ["explain", "repl"])
  func devFull(command: String) throws {
    let script =
      command == "repl"
      ? "printf 'retry 3\\n' | \"$0\" repl > /dev/full"
      : "\"$0\" explain 'retry 3' > /dev/full"
    let result = try ToolRunner.runScript(script)
    #expect(result.status == 2)
    #expect(
      result.standardError == "retry-policy: error: cannot write output: no space left on device\n")
  }

  @Test("the built binary with standard output closed says so and exits 2")
  func closedOutput() throws {
    let result = try ToolRunner.runScript("\"$0\" explain --json 'retry 3' >&-")
    #expect(result.status == 2)
    #expect(
      result.standardError == "retry-policy: error: cannot write output: bad file descriptor\n")
    let format = try ToolRunner.runScript("printf 'policy  a = retry 3\\n' | \"$0\" fmt - >&-")
    #expect(format.status == 2)
  }

  @Test("the built binary with SIGPIPE ignored and the reader gone ends quietly, not with 0")
  func ignoredBrokenPipe() throws {
    // A named pipe whose only reader is closed before the tool starts: its first write fails
    // with EPIPE, deterministically.
    let result = try ToolRunner.runScript(
      """
      folder=$(mktemp -d)
      mkfifo "$folder/pipe"
      exec 3<>"$folder/pipe" 4>"$folder/pipe"
      exec 3<&-
      trap '' PIPE
      "$0" explain 'retry forever backoff 1s within 1h' >&4
      echo "explain $?"
      printf 'retry 3\\n:json\\n' | "$0" repl >&4
      echo "repl $?"
      rm -r "$folder"
      """)
    #expect(result.standardOutput == "explain 2\nrepl 2\n")
    #expect(result.standardError == "")
  }
}
