import Foundation

/// The exit statuses of every command.
enum ExitStatus {
  /// Everything went well.
  static let success: Int32 = 0
  /// The input has errors (invalid policy, diagnostics, files that would change).
  static let failure: Int32 = 1
  /// The command line is wrong, a file cannot be read or written, or output was lost.
  static let usage: Int32 = 2
}

/// Where a command writes: the process's standard output and error, or strings captured
/// for in-process runs and tests.
///
/// Also decides color: only when the stream is a terminal, `NO_COLOR` is unset or empty and
/// `TERM` is not `dumb`.
///
/// Writing standard output can fail (a full disk, a closed descriptor, a reader that went
/// away): the first failure is kept in ``failure``, later output is dropped, and
/// ``finish(_:)`` turns it into `cannot write output: REASON` and exit status 2.
final class Output {
  /// Where text goes.
  enum Destination {
    /// The process's standard output and standard error; a stream closed when the process
    /// started is never written (its descriptor may now be the runtime's).
    case standardStreams(outputIsClosed: Bool, errorIsClosed: Bool)
    /// Kept in ``capturedOutput`` and ``capturedError``.
    case capture
    /// Standard error is captured; every write to standard output fails with this `errno`
    /// (tests of lost output).
    case failingOutput(Int32)
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
  /// The first failure to write standard output, if any.
  private(set) var failure: PlatformError?

  /// Creates an output.
  init(destination: Destination, outputUsesColor: Bool, errorUsesColor: Bool) {
    self.destination = destination
    self.outputUsesColor = outputUsesColor
    self.errorUsesColor = errorUsesColor
  }

  /// Whether standard output has been lost: nothing more reaches it.
  var hasFailed: Bool { failure != nil }

  /// Writes to standard output as is; after a failure, writes nothing.
  func write(_ text: String) {
    guard failure == nil else { return }
    switch destination {
    case .standardStreams(let outputIsClosed, _):
      if outputIsClosed {
        failure = PlatformError(Platform.badDescriptor)
      } else if let code = Platform.write(Array(text.utf8), to: Platform.standardOutput) {
        failure = PlatformError(code)
      }
    case .capture: capturedOutput += text
    case .failingOutput(let code): failure = PlatformError(code)
    }
  }

  /// Writes to standard error as is.
  ///
  /// A failure there cannot be reported anywhere; it is
  /// ignored.
  func writeError(_ text: String) {
    switch destination {
    case .standardStreams(_, let errorIsClosed):
      if !errorIsClosed { _ = Platform.write(Array(text.utf8), to: Platform.standardError) }
    case .capture, .failingOutput: capturedError += text
    }
  }

  /// The exit status of a command that returned `status`: 2 when standard output was lost,
  /// after `cannot write output: REASON` on standard error (a broken pipe ends quietly, as
  /// the reader is gone on purpose).
  func finish(_ status: Int32) -> Int32 {
    guard let failure else { return status }
    if failure.code != Platform.brokenPipe {
      error("cannot write output: \(failure.reason)")
    }
    return ExitStatus.usage
  }

  /// `retry-policy: error: MESSAGE` on standard error.
  func error(_ message: String) {
    writeError("retry-policy: " + label("error:", color: "\u{1B}[1;31m") + " " + message + "\n")
  }

  /// `LOCATION: error: MESSAGE` on standard error, as a diagnostic about a file is printed.
  func fileError(at location: String, _ message: String) {
    writeError(location + ": " + label("error:", color: "\u{1B}[1;31m") + " " + message + "\n")
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

  /// Whether output to a stream may be colored: a terminal, `NO_COLOR` unset or empty
  /// (no-color.org), and `TERM` not `dumb`.
  static func usesColor(isTerminal: Bool, environment: [String: String]) -> Bool {
    isTerminal && (environment["NO_COLOR"] ?? "").isEmpty && environment["TERM"] != "dumb"
  }

  /// Whether a file descriptor is a terminal.
  static func isTerminal(_ descriptor: Int32) -> Bool {
    Platform.isTerminal(descriptor)
  }
}

/// What a command needs from the world: its output, the environment and standard input.
final class CommandContext {
  /// Where the command writes.
  let output: Output
  /// The environment variables.
  let environment: [String: String]
  /// Whether standard input is the process's own (the REPL then reads it line by line).
  let readsProcessInput: Bool
  /// The command being run, as usage errors name it: `retry-policy storm`.
  var commandName = "retry-policy"
  /// How commands write files (`fmt`, `generate --output`, `storm --svg`); tests inject
  /// failures.
  var fileReplacement = FileReplacement()
  private let readInput: () -> Result<Data, PlatformError>
  private var input: Result<Data, PlatformError>?
  private let rawArguments: [String: [UInt8]]

  /// Creates a context; `readInput` is called at most once, when input is first needed.
  ///
  /// `rawArguments` are the arguments as the system gave them, in the same order, for file
  /// names that are not valid UTF-8 (`CommandLine.arguments` repairs those).
  init(
    output: Output, environment: [String: String], rawArguments: [[UInt8]] = [],
    readsProcessInput: Bool = false,
    readInput: @escaping () -> Result<Data, PlatformError>
  ) {
    self.output = output
    self.environment = environment
    self.readsProcessInput = readsProcessInput
    self.readInput = readInput
    var table: [String: [UInt8]] = [:]
    for bytes in rawArguments {
      let text = String(decoding: bytes, as: UTF8.self)
      if table[text] == nil { table[text] = bytes }
    }
    self.rawArguments = table
  }

  /// Creates a context whose standard input is `data`.
  convenience init(output: Output, environment: [String: String], input data: Data) {
    self.init(output: output, environment: environment) { .success(data) }
  }

  /// Standard input, read to its end (once).
  func standardInput() -> Result<Data, PlatformError> {
    if let input { return input }
    let data = readInput()
    input = data
    return data
  }

  /// Standard input as text; invalid UTF-8 becomes U+FFFD, which the parser reports.
  func standardInputText() -> Result<String, PlatformError> {
    standardInput().map { String(decoding: $0, as: UTF8.self) }
  }

  /// A usage error on standard error, with the help of the command being run.
  func usageError(_ error: UsageError) {
    output.usageError(error, command: commandName)
  }

  /// The bytes of a path given on the command line.
  func pathBytes(_ argument: String) -> [UInt8] {
    rawArguments[argument] ?? Array(argument.utf8)
  }
}
