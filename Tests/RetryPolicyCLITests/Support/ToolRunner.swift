import Foundation
import Testing

@testable import RetryPolicyCLI

/// Runs the command in-process, or the built `retry-policy` binary as a process.
enum ToolRunner {
  /// Runs the command in-process with text as standard input.
  static func run(
    _ arguments: [String], input: String = "", environment: [String: String] = [:],
    isTerminal: Bool = false
  ) async -> CommandResult {
    await CommandLineTool.run(
      arguments: arguments, standardInput: Data(input.utf8), environment: environment,
      isTerminal: isTerminal)
  }

  /// A context that captures output, with `input` as standard input.
  static func context(input: String = "") -> CommandContext {
    CommandContext(
      output: Output(destination: .capture, outputUsesColor: false, errorUsesColor: false),
      environment: [:], input: Data(input.utf8))
  }

  /// The built `retry-policy` executable: next to the test bundle, under `.build/…/debug/`.
  static func binary() throws -> URL {
    var candidates: [URL] = []
    if let first = CommandLine.arguments.first {
      candidates.append(URL(fileURLWithPath: first).deletingLastPathComponent())
    }
    candidates.append(Bundle.main.bundleURL)
    candidates.append(Bundle.main.bundleURL.deletingLastPathComponent())
    for start in candidates {
      var folder = start
      for _ in 0..<4 {
        let url = folder.appendingPathComponent("retry-policy")
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory),
          !isDirectory.boolValue, FileManager.default.isExecutableFile(atPath: url.path)
        {
          return url
        }
        folder = folder.deletingLastPathComponent()
      }
    }
    throw MissingBinary()
  }

  struct MissingBinary: Error, CustomStringConvertible {
    var description: String { "the built retry-policy binary was not found next to the tests" }
  }

  /// Runs the built binary with standard input, in `directory` if given; output is captured
  /// through temporary files, so large outputs cannot block on a full pipe.
  static func runBinary(
    _ arguments: [String], input: String = "", directory: URL? = nil,
    environment: [String: String] = [:]
  ) throws -> CommandResult {
    try run(
      executable: try binary(), arguments: arguments, input: input, directory: directory,
      environment: environment)
  }

  /// Runs a bash script in which `$0` is the built binary, for what `Process` cannot set up
  /// (a closed descriptor, an ignored SIGPIPE, process substitution, non-UTF-8 arguments).
  ///
  /// Returns the script's status, and what it wrote to standard output and error.
  static func runScript(_ script: String, directory: URL? = nil) throws -> CommandResult {
    try run(
      executable: URL(fileURLWithPath: "/bin/bash"),
      arguments: ["-c", script, try binary().path], input: "", directory: directory,
      environment: [:])
  }

  /// Runs a process with standard input, output and error in temporary files, so large
  /// outputs cannot block on a full pipe; `NO_COLOR` is removed from the environment.
  private static func run(
    executable: URL, arguments: [String], input: String, directory: URL?,
    environment: [String: String]
  ) throws -> CommandResult {
    let process = Process()
    process.executableURL = executable
    process.arguments = arguments
    if let directory { process.currentDirectoryURL = directory }
    var variables = ProcessInfo.processInfo.environment
    variables.removeValue(forKey: "NO_COLOR")
    variables.merge(environment) { $1 }
    process.environment = variables
    let scratch = try makeFolder(["stdin": input, "stdout": "", "stderr": ""])
    defer { try? FileManager.default.removeItem(at: scratch) }
    let outputURL = scratch.appendingPathComponent("stdout")
    let errorURL = scratch.appendingPathComponent("stderr")
    let inputHandle = try FileHandle(forReadingFrom: scratch.appendingPathComponent("stdin"))
    let outputHandle = try FileHandle(forWritingTo: outputURL)
    let errorHandle = try FileHandle(forWritingTo: errorURL)
    process.standardInput = inputHandle
    process.standardOutput = outputHandle
    process.standardError = errorHandle
    try process.run()
    process.waitUntilExit()
    try? inputHandle.close()
    try? outputHandle.close()
    try? errorHandle.close()
    return CommandResult(
      status: process.terminationStatus,
      standardOutput: String(decoding: try Data(contentsOf: outputURL), as: UTF8.self),
      standardError: String(decoding: try Data(contentsOf: errorURL), as: UTF8.self))
  }

  /// A fresh temporary folder with the given files (relative path → text).
  static func makeFolder(_ files: [String: String]) throws -> URL {
    let folder = FileManager.default.temporaryDirectory
      .appendingPathComponent("retry-policy-tests-\(UUID().uuidString)")
    for (path, text) in files {
      let url = folder.appendingPathComponent(path)
      try FileManager.default.createDirectory(
        at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
      try Data(text.utf8).write(to: url)
    }
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    return folder
  }
}
