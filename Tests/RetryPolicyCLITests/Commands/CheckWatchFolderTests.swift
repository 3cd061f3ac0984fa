import Foundation
import RetryPolicyTestSupport
import Testing

@testable import RetryPolicyCLI

@Suite("check --watch follows the folder")
struct CheckWatchFolderTests {
  /// Runs `check --watch ARGUMENTS` for `rounds` looks; `change` runs before look `step`.
  private func watch(
    _ arguments: [String], rounds: Int, change: @escaping @Sendable (Int) -> Void
  ) async -> (status: Int32, error: String, output: String) {
    let output = Output(destination: .capture, outputUsesColor: false, errorUsesColor: false)
    let context = CommandContext(output: output, environment: [:], input: Data())
    var options = CheckCommand.Options()
    options.isWatching = true
    options.arguments = arguments
    let status = await CheckCommand.watch(
      options, context: context, clock: SteppingClock(onSleep: change), rounds: rounds)
    return (status, output.capturedError, output.capturedOutput)
  }

  @Test("a dangling link added to a watched folder is reported at the next look")
  func danglingLinkAdded() async throws {
    let folder = try ToolRunner.makeFolder(["a.retry": "policy a = retry 3\n"])
    defer { try? FileManager.default.removeItem(at: folder) }
    let link = folder.appendingPathComponent("b.retry").path
    let result = await watch([folder.path], rounds: 2) { step in
      if step == 2 {
        try? FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "gone")
      }
    }
    #expect(result.error.contains("note: changed: \(link); checking again"))
    #expect(result.error.contains("cannot read '\(link)': no such file or directory"))
    #expect(result.status == ExitStatus.usage)
  }

  @Test("a folder that becomes a dangling link is reported at the next look")
  func folderBecomesDanglingLink() async throws {
    let folder = try ToolRunner.makeFolder([
      "a.retry": "policy a = retry 3\n", "x.retry/c.retry": "policy c = retry 1\n",
    ])
    defer { try? FileManager.default.removeItem(at: folder) }
    let inner = folder.appendingPathComponent("x.retry").path
    let result = await watch([folder.path], rounds: 2) { step in
      guard step == 2 else { return }
      try? FileManager.default.removeItem(atPath: inner)
      try? FileManager.default.createSymbolicLink(atPath: inner, withDestinationPath: "gone")
    }
    #expect(result.error.contains("note: changed: \(inner), \(inner)/c.retry; checking again"))
    #expect(result.status == ExitStatus.usage)
  }

  @Test("a file named on the command line that becomes a named pipe is refused, not read")
  func fileBecomesPipe() async throws {
    let folder = try ToolRunner.makeFolder(["p.retry": "policy a = retry 3\n"])
    defer { try? FileManager.default.removeItem(at: folder) }
    let path = folder.appendingPathComponent("p.retry").path
    let result = await watch([path], rounds: 2) { step in
      guard step == 2 else { return }
      try? FileManager.default.removeItem(atPath: path)
      _ = mkfifo(path, 0o644)
    }
    #expect(
      result.error.contains(
        "\(path):1:1: error: the policy file is a named pipe, not a regular file\n"))
    #expect(result.status == ExitStatus.usage)
  }

  @Test("an edit is seen once; looks without a change check nothing again")
  func quietLooks() async throws {
    let folder = try ToolRunner.makeFolder(["a.retry": "policy a = retry 3\n"])
    defer { try? FileManager.default.removeItem(at: folder) }
    let file = folder.appendingPathComponent("a.retry")
    let result = await watch([folder.path], rounds: 6) { step in
      if step == 3 { try? Data("policy a = retry 4\n".utf8).write(to: file) }
    }
    #expect(result.error.components(separatedBy: "checked 1 file").count == 3)
    #expect(result.status == ExitStatus.success)
  }
}

@Suite("check: a policy file with no policy")
struct CheckEmptyFileTests {
  @Test("an empty file, or comments only, is a warning 'no-policies'")
  func emptyFile() async throws {
    let folder = try ToolRunner.makeFolder(["empty.retry": "", "comments.retry": "# nothing\n"])
    defer { try? FileManager.default.removeItem(at: folder) }
    let result = await CommandLineTool.run(arguments: ["check", folder.path])
    #expect(result.status == ExitStatus.success)
    for name in ["empty.retry", "comments.retry"] {
      let path = folder.appendingPathComponent(name).path
      #expect(result.standardOutput.contains("\(path):1:1: warning: the file has no policy"))
    }
    #expect(result.standardError.contains("checked 2 files: 2 warnings"))
  }
}
