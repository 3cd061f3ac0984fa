import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The exit statuses of every command.
enum ExitStatus {
  /// Everything went well.
  static let success: Int32 = 0
  /// The input has errors (invalid policy, diagnostics, files that would change).
  static let failure: Int32 = 1
  /// The command line is wrong, or a file cannot be read.
  static let usage: Int32 = 2
}

/// Where a command writes: the process's standard output and error, or strings captured
/// for in-process runs and tests.
///
/// Also decides color: only when the stream is a terminal and `NO_COLOR` is unset or empty.
final class Output {
  /// Where text goes.
  enum Destination {
    /// The process's standard output and standard error.
    case standardStreams
    /// Kept in ``capturedOutput`` and ``capturedError``.
    case capture
  }

  private let destination: Destination
  /// Everything written to standard output, when capturing.
  private(set) var capturedOutput = ""
  /// Everything written to standard error, when capturing.
  private(set) var capturedError = ""
  /// Whether text for standard output may use ANSI colors.
  let outputUsesColor: Bool
  /// Whether text for standard error may use ANSI colors.
  let errorUsesColor: Bool

  /// Creates an output.
  init(destination: Destination, outputUsesColor: Bool, errorUsesColor: Bool) {
    self.destination = destination
    self.outputUsesColor = outputUsesColor
    self.errorUsesColor = errorUsesColor
  }

  /// Writes to standard output as is.
  func write(_ text: String) {
    switch destination {
    case .standardStreams: FileHandle.standardOutput.write(Data(text.utf8))
    case .capture: capturedOutput += text
    }
  }

  /// Writes to standard error as is.
  func writeError(_ text: String) {
    switch destination {
    case .standardStreams: FileHandle.standardError.write(Data(text.utf8))
    case .capture: capturedError += text
    }
  }

  /// `retry-policy: error: MESSAGE` on standard error.
  func error(_ message: String) {
    writeError("retry-policy: " + label("error:", color: "\u{1B}[1;31m") + " " + message + "\n")
  }

  /// `retry-policy: warning: MESSAGE` on standard error.
  func warning(_ message: String) {
    writeError("retry-policy: " + label("warning:", color: "\u{1B}[1;35m") + " " + message + "\n")
  }

  /// `retry-policy: note: MESSAGE` on standard error.
  func note(_ message: String) {
    writeError("retry-policy: " + label("note:", color: "\u{1B}[1;36m") + " " + message + "\n")
  }

  /// A usage error and where to find help, on standard error.
  func usageError(_ error: UsageError, command: String) {
    self.error(error.message)
    writeError("See '\(command) --help'.\n")
  }

  private func label(_ text: String, color: String) -> String {
    errorUsesColor ? color + text + "\u{1B}[0m" : text
  }

  /// Whether output to a stream may be colored: a terminal, and `NO_COLOR` unset or empty.
  static func usesColor(isTerminal: Bool, environment: [String: String]) -> Bool {
    isTerminal && (environment["NO_COLOR"] ?? "").isEmpty
  }

  /// Whether a file descriptor is a terminal.
  static func isTerminal(_ descriptor: Int32) -> Bool {
    isatty(descriptor) != 0
  }
}

/// What a command needs from the world: its output, the environment and standard input.
final class CommandContext {
  /// Where the command writes.
  let output: Output
  /// The environment variables.
  let environment: [String: String]
  private let readInput: () -> Data
  private var input: Data?

  /// Creates a context; `readInput` is called at most once, when input is first needed.
  init(output: Output, environment: [String: String], readInput: @escaping () -> Data) {
    self.output = output
    self.environment = environment
    self.readInput = readInput
  }

  /// Standard input, read to its end (once).
  func standardInput() -> Data {
    if let input { return input }
    let data = readInput()
    input = data
    return data
  }

  /// Standard input as text; invalid UTF-8 becomes U+FFFD, which the parser reports.
  func standardInputText() -> String {
    String(decoding: standardInput(), as: UTF8.self)
  }
}
