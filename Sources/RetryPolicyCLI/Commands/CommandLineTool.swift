import Foundation
import RetryPolicy

/// The `retry-policy` command: `check`, `explain`, `fmt`, `simulate` and `repl`.
///
/// The executable calls ``main()``; tests and tools call `run(arguments:standardInput:…)`,
/// which runs the same code in-process and returns the status and the captured output.
public enum CommandLineTool {
  /// The tool's version, as `--version` prints it.
  package static let version = "0.1.0"

  /// Runs the command with the process's arguments and exits with its status.
  ///
  /// Before anything else: SIGPIPE is ignored, so that a reader that goes away makes a write
  /// fail instead of killing the process, and closed standard descriptors are filled so that
  /// no file opened later takes their place.
  public static func main() async {
    let closed = [Platform.standardInput, Platform.standardOutput, Platform.standardError].map(
      Platform.wasClosedAtStart)
    Platform.ignoreBrokenPipeSignal()
    Platform.reserveStandardDescriptors()
    let environment = ProcessInfo.processInfo.environment
    let output = Output(
      destination: .standardStreams(outputIsClosed: closed[1], errorIsClosed: closed[2]),
      outputUsesColor: !closed[1]
        && Output.usesColor(
          isTerminal: Output.isTerminal(Platform.standardOutput), environment: environment),
      errorUsesColor: !closed[2]
        && Output.usesColor(
          isTerminal: Output.isTerminal(Platform.standardError), environment: environment)
    )
    let context = CommandContext(
      output: output, environment: environment,
      rawArguments: Platform.rawArguments(), readsProcessInput: !closed[0]
    ) {
      closed[0]
        ? .failure(PlatformError(Platform.badDescriptor))
        : PolicyInput.readAll(Platform.standardInput)
    }
    let status = await run(Array(CommandLine.arguments.dropFirst()), context: context)
    Platform.exit(status)
  }

  /// Runs the command in-process with the given arguments (without the program name) and
  /// standard input, and returns its exit status and everything it wrote.
  ///
  ///     let result = await CommandLineTool.run(arguments: ["explain", "--json", "retry 3"])
  ///     // result.status == 0, result.standardOutput is the JSON
  ///
  /// - Parameters:
  ///   - arguments: the command line after `retry-policy`.
  ///   - standardInput: what `-` reads.
  ///   - environment: the environment variables (`NO_COLOR`).
  ///   - isTerminal: whether to behave as if standard output and error were terminals
  ///     (colors, unless `NO_COLOR` is set or `TERM` is `dumb`).
  ///   - outputFailure: when given, every write to standard output fails with this `errno`
  ///     (as on a full disk or a closed descriptor).
  package static func run(
    arguments: [String],
    standardInput: Data = Data(),
    environment: [String: String] = [:],
    isTerminal: Bool = false,
    outputFailure: Int32? = nil
  ) async -> CommandResult {
    let usesColor = Output.usesColor(isTerminal: isTerminal, environment: environment)
    let output = Output(
      destination: outputFailure.map { .failingOutput($0) } ?? .capture,
      outputUsesColor: usesColor, errorUsesColor: usesColor)
    let context = CommandContext(output: output, environment: environment, input: standardInput)
    let status = await run(arguments, context: context)
    return CommandResult(
      status: status, standardOutput: output.capturedOutput,
      standardError: output.capturedError)
  }

  /// Runs the command in-process with text as standard input.
  package static func run(
    arguments: [String], input: String, environment: [String: String] = [:]
  ) async -> CommandResult {
    await run(arguments: arguments, standardInput: Data(input.utf8), environment: environment)
  }

  /// The subcommands, in the order help lists them.
  static let subcommands: [any Subcommand.Type] = [
    CheckCommand.self, ExplainCommand.self, FormatCommand.self, SimulateCommand.self,
    ExportCommand.self, ImportCommand.self,
    LanguageServerCommand.self,
    GenerateCommand.self,
    StormCommand.self,
  ]

  /// The tool's own help page.
  static let spec = CommandSpec(
    name: "",
    abstract: "check, explain, format and simulate retry policies",
    usage: ["<subcommand> [options] [arguments]", "--help", "--version"],
    discussion: """
      A retry policy is one line such as

        retry 5 on serverError backoff 1s x1.5 jitter 10% max 30s

      or a named block of them in a policy file (extension .retry). See
      'retry-policy help <subcommand>' for each subcommand.
      """,
    options: [.flag("version", help: "Print the version and exit.")],
    minimumArguments: 0, maximumArguments: nil, argumentName: "subcommand",
    examples: [
      ("retry-policy check policies/", "Check every .retry file below policies/."),
      (
        "retry-policy explain 'retry 5 on serverError backoff 1s x1.5 jitter 10%'",
        "Show the compiled policy and its table of delays."
      ),
      ("retry-policy fmt --check policies/", "List the files that are not in canonical form."),
      (
        "retry-policy simulate 'retry 3 backoff 1s' --outcomes serverError*2,ok",
        "Run the policy on virtual time against scripted failures."
      ),
      (
        "retry-policy storm 'retry 3 immediately' 'retry 3 budget 10%' --outage 30s+60s",
        "Compare what a fleet of clients does to a backend through an outage."
      ),
      ("retry-policy repl", "Try policies interactively."),
    ],
    exitStatuses: [
      (0, "success"), (1, "the input has errors"),
      (2, "usage error, unreadable or unwritable file, or output that cannot be written"),
    ])

  /// The `repl` entry in help; the REPL parses its own arguments.
  static let replSpec = CommandSpec(
    name: "repl", abstract: "try policies interactively", usage: ["repl"],
    discussion: """
      An interactive session. A policy typed in is compiled and explained at once; an error
      points into the line just typed. 'policy NAME {' starts a block that goes on until
      '}'. Commands: ':help', ':ast' (the syntax tree of the last policy), ':json' (the last
      policy as 'explain --json'), ':simulate OUTCOMES' (as 'simulate --outcomes'),
      ':load FILE' then ':explain NAME' (':load' again reloads the file in place; a version
      with errors changes nothing), ':quit'.

      On a terminal: left, right, home and end move; backspace and delete erase; up and down
      recall history, kept in ~/.retry_policy_history (or $RETRY_POLICY_HISTORY); Ctrl-C
      clears the line or the block being typed; Ctrl-D on an empty line leaves. From a pipe
      it prints no prompt and no escape codes, so it can be scripted.
      """,
    options: [], minimumArguments: 0, maximumArguments: 0, argumentName: "",
    examples: [
      ("retry-policy repl", "Start a session on the terminal."),
      (
        "printf 'retry 3 backoff 1s\\n:json\\n' | retry-policy repl",
        "Explain a policy, then print it as JSON, with no prompt."
      ),
    ],
    exitStatuses: [
      (0, "the session ended (':quit', Ctrl-D or the end of the input)"),
      (1, "from a pipe: a line had an error"),
      (2, "usage error, or output that cannot be written (the session then stops)"),
    ])

  private static var listedSpecs: [CommandSpec] {
    subcommands.map { $0.spec } + [replSpec]
  }

  /// Dispatches to a subcommand; when standard output was lost, says so and returns 2.
  static func run(_ arguments: [String], context: CommandContext) async -> Int32 {
    let status = await dispatch(arguments, context: context)
    return context.output.finish(status)
  }

  private static func dispatch(_ arguments: [String], context: CommandContext) async -> Int32 {
    let output = context.output
    guard let first = arguments.first else {
      output.writeError(shortUsage)
      return ExitStatus.usage
    }
    let rest = Array(arguments.dropFirst())
    switch first {
    case "--help", "-h":
      output.write(HelpRendering.help(for: spec, subcommands: listedSpecs))
      return ExitStatus.success
    case "--version":
      output.write("retry-policy \(version)\n")
      return ExitStatus.success
    case "help":
      return await help(rest, context: context)
    case "repl":
      return await ReplCommand.run(arguments: rest, context: context)
    default:
      break
    }
    if let command = subcommands.first(where: { $0.spec.name == first }) {
      return await run(command, arguments: rest, context: context)
    }
    if first.hasPrefix("-") && first != "-" {
      let suggestion = ArgumentParser.suggestion(for: first, in: spec.allOptions)
      output.usageError(.unknownOption(first, suggestion: suggestion), command: "retry-policy")
      return ExitStatus.usage
    }
    let names = listedSpecs.map(\.name) + ["help"]
    output.usageError(
      .unknownSubcommand(first, suggestion: Suggestion.nearest(to: first, in: names)),
      command: "retry-policy")
    return ExitStatus.usage
  }

  private static func run<Command: Subcommand>(
    _ command: Command.Type, arguments: [String], context: CommandContext
  ) async -> Int32 {
    let spec = command.spec
    let request: ArgumentParser.Request<Command.Options>
    do {
      request = try ArgumentParser.parse(arguments, for: spec)
    } catch {
      context.output.usageError(error, command: spec.fullName)
      return ExitStatus.usage
    }
    switch request {
    case .help:
      context.output.write(HelpRendering.help(for: spec))
      return ExitStatus.success
    case .run(let options):
      context.commandName = spec.fullName
      return await command.run(options, context: context)
    }
  }

  /// `retry-policy help [SUBCOMMAND]`; `help repl` is `repl --help`, which the REPL prints.
  private static func help(_ arguments: [String], context: CommandContext) async -> Int32 {
    let output = context.output
    guard let name = arguments.first else {
      output.write(HelpRendering.help(for: spec, subcommands: listedSpecs))
      return ExitStatus.success
    }
    if arguments.count > 1 {
      output.usageError(.unexpectedArgument(arguments[1]), command: "retry-policy help")
      return ExitStatus.usage
    }
    if name == replSpec.name {
      return await ReplCommand.run(arguments: ["--help"], context: context)
    }
    if let command = listedSpecs.first(where: { $0.name == name }) {
      output.write(HelpRendering.help(for: command))
      return ExitStatus.success
    }
    let suggestion = Suggestion.nearest(to: name, in: listedSpecs.map(\.name))
    output.usageError(
      .unknownSubcommand(name, suggestion: suggestion), command: "retry-policy")
    return ExitStatus.usage
  }

  /// What `retry-policy` alone prints on standard error.
  static var shortUsage: String {
    var text = "usage: retry-policy <subcommand> [options] [arguments]\n\nsubcommands:\n"
    let width = listedSpecs.map(\.name.count).max() ?? 0
    for command in listedSpecs {
      let padding = String(repeating: " ", count: width - command.name.count)
      text += "  \(command.name)\(padding)  \(command.abstract)\n"
    }
    text += "\nSee 'retry-policy --help' for more.\n"
    return text
  }
}

/// A subcommand: its help, its typed options and its work.
protocol Subcommand: Sendable {
  /// The subcommand's options, read once from the command line.
  associatedtype Options: CommandOptions
  /// The help of the subcommand: its usage, arguments and (from ``Options``) options.
  static var spec: CommandSpec { get }
  /// Runs the subcommand with its options; returns the exit status.
  static func run(_ options: Options, context: CommandContext) async -> Int32
}

/// The outcome of an in-process run: the exit status and what was written.
package struct CommandResult: Sendable, Equatable {
  /// The exit status: 0 success, 1 errors in the input, 2 usage error or unreadable file.
  package var status: Int32
  /// Everything written to standard output.
  package var standardOutput: String
  /// Everything written to standard error.
  package var standardError: String
}
