import Foundation
import Testing

/// Runs the built `retry-policy` binary with standard input from a pipe.
enum BuiltTool {
  /// The `retry-policy` executable beside the test bundle, if it was built.
  static var url: URL? {
    var directories: [URL] = []
    if let first = CommandLine.arguments.first {
      directories.append(
        URL(fileURLWithPath: first).resolvingSymlinksInPath().deletingLastPathComponent())
    }
    let bundle = Bundle.main.bundleURL
    directories += [bundle, bundle.deletingLastPathComponent()]
    for directory in directories {
      let candidate = directory.appendingPathComponent("retry-policy")
      if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
    }
    return nil
  }

  /// The tool's exit status, standard output and standard error.
  struct Result {
    var status: Int32
    var output: String
    var errors: String
  }

  /// Runs the tool with `arguments`, `input` on standard input and a clean environment.
  static func run(
    _ arguments: [String], input: String, environment extra: [String: String] = [:]
  ) throws -> Result {
    guard let url else { throw CocoaError(.fileNoSuchFile) }
    let home = FileManager.default.temporaryDirectory
      .appendingPathComponent("retry-policy-e2e-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: home) }
    let process = Process()
    process.executableURL = url
    process.arguments = arguments
    process.currentDirectoryURL = home
    var environment = ["HOME": home.path, "PATH": "/usr/bin:/bin"]
    environment.merge(extra) { $1 }
    process.environment = environment
    let standardInput = Pipe()
    let standardOutput = Pipe()
    let standardError = Pipe()
    process.standardInput = standardInput
    process.standardOutput = standardOutput
    process.standardError = standardError
    try process.run()
    standardInput.fileHandleForWriting.write(Data(input.utf8))
    try standardInput.fileHandleForWriting.close()
    let output = standardOutput.fileHandleForReading.readDataToEndOfFile()
    let errors = standardError.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return Result(
      status: process.terminationStatus,
      output: String(decoding: output, as: UTF8.self),
      errors: String(decoding: errors, as: UTF8.self))
  }
}

@Suite("REPL end to end")
struct ReplEndToEndTests {
  @Test("piped commands print no prompt and no escape codes, and errors make the status 1")
  func pipedCommands() throws {
    let result = try BuiltTool.run(["repl"], input: ":help\n:hepl\n")
    #expect(result.status == 1)
    #expect(result.output.contains(":simulate OUTCOMES"))
    #expect(!result.output.contains("retry> "))
    #expect(!result.output.contains("\u{1B}"))
    #expect(result.errors == "error: unknown command ':hepl'; did you mean ':help'?\n")
  }

  @Test("':quit' ends the session with status 0 and ignores the lines after it")
  func quit() throws {
    let result = try BuiltTool.run(["repl"], input: ":quit\n:hepl\n")
    #expect(result.status == 0)
    #expect(result.output.isEmpty)
    #expect(result.errors.isEmpty)
  }

  @Test("an unknown option or an argument is a usage error that names the REPL's help")
  func usageError() throws {
    let option = try BuiltTool.run(["repl", "--frob"], input: "")
    #expect(option.status == 2)
    #expect(
      option.errors
        == "retry-policy: error: unknown option '--frob'\nSee 'retry-policy repl --help'.\n")
    let argument = try BuiltTool.run(["repl", "frob"], input: "")
    #expect(argument.status == 2)
    #expect(argument.errors.hasPrefix("retry-policy: error: unexpected argument 'frob'"))
  }
}
