import Foundation
import Testing

@testable import RetryPolicyCLI

/// The one input reader (issue 23): every command that reads a file stops at 64 MiB, for
/// regular files, devices and pipes alike, with exit 2.
@Suite("Input files: the 64 MiB limit")
struct InputLimitTests {
  /// Each reading command, reading `path`.
  static func arguments(_ command: String, _ path: String) -> [String] {
    switch command {
    case "check", "fmt", "import", "generate": return [command] + extra(command) + [path]
    default: return [command, "--file", path]
    }
  }

  static func extra(_ command: String) -> [String] {
    switch command {
    case "import": ["--from", "grpc"]
    case "generate": ["--output", "/dev/null"]
    default: []
    }
  }

  static let commands = [
    "check", "fmt", "explain", "import", "export", "generate", "storm", "simulate",
  ]

  static func withArguments(_ command: String, _ path: String) -> [String] {
    command == "export" ? ["export", "--to", "grpc", "--file", path] : arguments(command, path)
  }

  @Test("a regular file past 64 MiB is refused before it is read", arguments: commands)
  func largeRegularFile(command: String) async throws {
    let folder = try ToolRunner.makeFolder(["big.retry": ""])
    defer { try? FileManager.default.removeItem(at: folder) }
    let file = folder.appendingPathComponent("big.retry")
    // A sparse file: its size is past the limit, its blocks are not on the disk.
    let handle = try FileHandle(forWritingTo: file)
    try handle.truncate(atOffset: UInt64(PolicyInput.sizeLimit) + 1)
    try handle.close()
    let result = await ToolRunner.run(Self.withArguments(command, file.path))
    #expect(result.status == 2)
    #expect(result.standardError.contains("error: '\(file.path)' is larger than 64 MiB\n"))
  }

  @Test("the reader takes exactly the limit and stops one byte past it")
  func limitEdge() throws {
    let folder = try ToolRunner.makeFolder(["ten": "0123456789"])
    defer { try? FileManager.default.removeItem(at: folder) }
    for (limit, fits) in [(10, true), (9, false)] {
      let descriptor = open(folder.appendingPathComponent("ten").path, O_RDONLY)
      try #require(descriptor >= 0)
      defer { Platform.close(descriptor) }
      let result = PolicyInput.readAll(descriptor, limit: limit)
      #expect((try? result.get()) == (fits ? Data("0123456789".utf8) : nil))
    }
  }

  @Test("the REPL's ':load' stops at the limit too, for a file and a device")
  func replLoad() async throws {
    let folder = try ToolRunner.makeFolder(["big.retry": ""])
    defer { try? FileManager.default.removeItem(at: folder) }
    let file = folder.appendingPathComponent("big.retry")
    let handle = try FileHandle(forWritingTo: file)
    try handle.truncate(atOffset: UInt64(PolicyInput.sizeLimit) + 1)
    try handle.close()
    var session = ReplSession(usesColor: false)
    for path in [file.path, "/dev/zero"] {
      let messages = await session.handle(line: ":load \(path)")
      #expect(messages.map(\.text).joined() == "error: '\(path)' is larger than 64 MiB\n")
    }
  }

  @Test("an endless device stops at the limit with exit 2", arguments: commands)
  func endlessDevice(command: String) async {
    let result = await ToolRunner.run(Self.withArguments(command, "/dev/zero"))
    #expect(result.status == 2)
    #expect(result.standardError.contains("error: '/dev/zero' is larger than 64 MiB\n"))
  }

  @Test("the built binary: a pipe on standard input and /dev/zero stop at the limit")
  func builtBinaryPipe() throws {
    let script = """
      head -c 70000000 /dev/zero | "$0" check - 2>&1; echo "status $?"
      head -c 70000000 /dev/zero | "$0" import --from grpc - 2>&1; echo "status $?"
      "$0" fmt /dev/zero 2>&1; echo "status $?"
      """
    let result = try ToolRunner.runScript(script)
    #expect(
      result.standardOutput == """
        retry-policy: error: '<stdin>' is larger than 64 MiB
        checked 0 files; 1 file could not be read
        status 2
        retry-policy: error: standard input is larger than 64 MiB
        status 2
        retry-policy: error: '/dev/zero' is larger than 64 MiB
        status 2

        """)
  }
}
