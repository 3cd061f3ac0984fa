import Foundation
import Testing

@testable import RetryPolicyCLI

/// The one writer of every file a command writes (issue 23): `storm --svg` and
/// `generate --output` by each kind of path, in-process and with the built binary.
@Suite("Output files: every kind of path")
struct OutputFileTests {
  /// A folder with a policy file for `generate`.
  static func makeFolder() throws -> URL {
    try ToolRunner.makeFolder(["policies/a.retry": "policy quick = retry 3 immediately\n"])
  }

  /// The arguments of each writing command, writing to `path`.
  static func arguments(_ command: String, _ path: String, folder: URL) -> [String] {
    command == "storm"
      ? ["storm", "retry 3 immediately", "--clients", "10", "--duration", "5s", "--svg", path]
      : ["generate", "--output", path, folder.appendingPathComponent("policies").path]
  }

  static let commands = ["storm", "generate"]

  /// Runs `command` in-process writing to `path`, with the writer's operations changed by
  /// `change`; a rename over a device or pipe is refused and recorded, so that a regression
  /// cannot replace one on this machine.
  static func run(
    _ command: String, _ path: String, folder: URL,
    change: (inout FileReplacement.Operations) -> Void = { _ in }
  ) async -> (status: Int32, error: String, renamed: Bool) {
    let output = Output(destination: .capture, outputUsesColor: false, errorUsesColor: false)
    let context = CommandContext(output: output, environment: [:], input: Data())
    let renamed = RenameLog()
    let rename = context.fileReplacement.operations.rename
    context.fileReplacement.operations.rename = { source, destination in
      let name = String(decoding: destination, as: UTF8.self)
      guard name.hasPrefix(folder.path) || name.hasPrefix(folder.resolvingSymlinksInPath().path)
      else {
        renamed.didRename = true
        return PlatformError(EPERM)
      }
      return rename(source, destination)
    }
    change(&context.fileReplacement.operations)
    let status = await CommandLineTool.run(
      arguments(command, path, folder: folder), context: context)
    return (status, output.capturedError, renamed.didRename)
  }

  final class RenameLog: @unchecked Sendable {
    var didRename = false
  }

  static func kind(_ path: String) throws -> FileAttributeType? {
    try FileManager.default.attributesOfItem(atPath: path)[.type] as? FileAttributeType
  }

  @Test("a regular file is replaced whole, keeping its permission bits", arguments: commands)
  func regularFileKeepsMode(command: String) async throws {
    let folder = try Self.makeFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let file = folder.appendingPathComponent("out")
    try Data("old".utf8).write(to: file)
    try FileManager.default.setAttributes([.posixPermissions: 0o640], ofItemAtPath: file.path)
    let result = await Self.run(command, file.path, folder: folder)
    #expect(result.status == 0, "\(result.error)")
    #expect(try Data(contentsOf: file).count > 100)
    let mode = try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions]
    #expect((mode as? NSNumber)?.intValue == 0o640)
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == [
        "out", "policies",
      ])
  }

  @Test("a symbolic link stays a link; the file it leads to is written", arguments: commands)
  func symbolicLink(command: String) async throws {
    let folder = try Self.makeFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let target = folder.appendingPathComponent("target")
    try Data("old".utf8).write(to: target)
    let link = folder.appendingPathComponent("link")
    try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: "target")
    let result = await Self.run(command, link.path, folder: folder)
    #expect(result.status == 0, "\(result.error)")
    #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link.path) == "target")
    #expect(try Data(contentsOf: target).count > 100)
  }

  @Test("a link to nothing and a folder are refused with exit 2", arguments: commands)
  func refusedPaths(command: String) async throws {
    let folder = try Self.makeFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let link = folder.appendingPathComponent("dangling")
    try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: "nothing")
    let dangling = await Self.run(command, link.path, folder: folder)
    #expect(dangling.status == 2)
    #expect(
      dangling.error
        == "retry-policy: error: cannot write '\(link.path)': it is a symbolic link to a file "
        + "that does not exist\n")
    #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link.path) == "nothing")
    let directory = await Self.run(command, folder.path, folder: folder)
    #expect(directory.status == 2)
    #expect(
      directory.error == "retry-policy: error: cannot write '\(folder.path)': is a directory\n")
  }

  @Test("a named pipe is written in place and stays a pipe", arguments: commands)
  func namedPipe(command: String) async throws {
    let folder = try Self.makeFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let pipe = folder.appendingPathComponent("pipe").path
    #expect(mkfifo(pipe, 0o644) == 0)
    // Opened for reading and writing, the pipe has a reader: the command's open does not wait,
    // and what it writes (less than a pipe's buffer) waits here to be read.
    let reader = try #require(FileHandle(forUpdatingAtPath: pipe))
    defer { try? reader.close() }
    let result = await Self.run(command, pipe, folder: folder)
    #expect(result.status == 0, "\(result.error)")
    #expect(!result.renamed)
    #expect(try Self.kind(pipe) != .typeRegular)
    let start = String(decoding: reader.availableData.prefix(5), as: UTF8.self)
    #expect(start == (command == "storm" ? "<svg " : "// sw"))
  }

  @Test(
    "a character device is written in place: /dev/full fails, unchanged, exit 2",
    arguments: commands)
  func fullDevice(command: String) async throws {
    let folder = try Self.makeFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let result = await Self.run(command, "/dev/full", folder: folder)
    #expect(result.status == 2)
    #expect(!result.renamed)
    #expect(
      result.error == "retry-policy: error: cannot write '/dev/full': no space left on device\n")
    #expect(try Self.kind("/dev/full") == .typeCharacterSpecial)
    let null = await Self.run(command, "/dev/null", folder: folder)
    #expect(null.status == 0, "\(null.error)")
    #expect(!null.renamed)
  }

  @Test(
    "an I/O error while writing is reported with exit 2 and the original kept",
    arguments: commands)
  func inputOutputError(command: String) async throws {
    let folder = try Self.makeFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let file = folder.appendingPathComponent("out")
    try Data("old".utf8).write(to: file)
    let result = await Self.run(command, file.path, folder: folder) { operations in
      operations.write = { _, _ in EIO }
    }
    #expect(result.status == 2)
    #expect(
      result.error == "retry-policy: error: cannot write '\(file.path)': input/output error\n")
    #expect(try Data(contentsOf: file) == Data("old".utf8))
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == [
        "out", "policies",
      ])
  }

  @Test(
    "the built binary: /dev/full fails with exit 2; a pipe and a link keep their kind",
    arguments: commands)
  func builtBinary(command: String) throws {
    let folder = try Self.makeFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let full = try ToolRunner.runBinary(Self.arguments(command, "/dev/full", folder: folder))
    #expect(full.status == 2)
    #expect(
      full.standardError
        == "retry-policy: error: cannot write '/dev/full': no space left on device\n")
    #expect(try Self.kind("/dev/full") == .typeCharacterSpecial)
    let words = Self.arguments(command, "PATH", folder: folder).map { "'\($0)'" }
    let script = """
      cd '\(folder.path)' && mkfifo pipe && echo old > target && ln -s target link
      (cat pipe > from-pipe) & "$0" \(words.joined(separator: " ").replacingOccurrences(of: "'PATH'", with: "pipe")) > /dev/null || exit 3
      wait
      "$0" \(words.joined(separator: " ").replacingOccurrences(of: "'PATH'", with: "link")) > /dev/null || exit 4
      test -p pipe && test -L link && test -s from-pipe && test "$(cat target)" != old || exit 5
      """
    let result = try ToolRunner.runScript(script)
    #expect(result.status == 0, "\(result.standardError)")
  }

  @Test("the built binary: fmt through a link formats the file it leads to, keeping its mode")
  func builtBinaryFormat() throws {
    let folder = try ToolRunner.makeFolder(["real.retry": "policy  a = retry 3   delay 1s\n"])
    defer { try? FileManager.default.removeItem(at: folder) }
    let script = """
      cd '\(folder.path)' && chmod 640 real.retry && ln -s real.retry link.retry
      "$0" fmt link.retry || exit 3
      test -L link.retry && test "$(cat real.retry)" = 'policy a = retry 3 delay 1s' || exit 4
      """
    let result = try ToolRunner.runScript(script)
    #expect(result.status == 0, "\(result.standardError)")
    let mode = try FileManager.default.attributesOfItem(
      atPath: folder.appendingPathComponent("real.retry").path)[.posixPermissions]
    #expect((mode as? NSNumber)?.intValue == 0o640)
  }
}
