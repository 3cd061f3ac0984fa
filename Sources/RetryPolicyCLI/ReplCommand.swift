import Foundation
import Glibc

/// `retry-policy repl`: the interactive session.
///
/// On a terminal it shows a prompt (`retry> `, `...> ` inside a block) and edits the line
/// (arrows, Home, End, Backspace, Delete, Ctrl-A, Ctrl-E, Ctrl-K, Ctrl-U, Ctrl-W, history with
/// Up and Down, kept in `~/.retry_policy_history` or `$RETRY_POLICY_HISTORY`). Ctrl-C clears
/// the line and drops an open block; Ctrl-D on an empty line leaves. Color is used only on a
/// terminal and never when `NO_COLOR` is set (to anything but the empty string, as in the
/// other commands).
///
/// With standard input not a terminal it prints no prompt and no escape codes and reads lines
/// to the end, so it can be scripted:
///
///     printf 'retry 3 backoff 1s\n:json\n' | retry-policy repl
///
/// Exit status: 0 at the end of input or `:quit`. On a terminal, errors in what is typed do
/// not change it; from a pipe it is 1 when any line had an error (a policy with errors, an
/// unknown command, an unreadable file), so scripts can tell. 2 for a usage error.
enum ReplCommand {
  /// The help page, for `repl --help`: the same form as every subcommand's.
  static var usage: String { HelpRendering.help(for: CommandLineTool.replSpec) }

  /// Runs the REPL with the arguments after `repl`; returns the exit status.
  static func run(arguments: [String]) async -> Int32 {
    if arguments.contains(where: { $0 == "--help" || $0 == "-h" }) {
      Terminal.write(usage)
      return 0
    }
    if let first = arguments.first {
      Terminal.write(
        "retry-policy: error: unexpected argument '\(first)'\nSee 'retry-policy repl --help'.\n",
        to: STDERR_FILENO)
      return 2
    }
    let environment = ProcessInfo.processInfo.environment
    if Terminal.isInputInteractive, Terminal.enableRawMode() {
      defer { Terminal.restore() }
      let usesColor = Output.usesColor(
        isTerminal: Terminal.isOutputInteractive, environment: environment)
      return await runInteractive(
        usesColor: usesColor, historyPath: History.defaultPath(environment: environment))
    }
    return await runPiped()
  }

  /// Reads lines from a pipe or file to the end; no prompt, no escape codes.
  static func runPiped() async -> Int32 {
    var session = ReplSession(usesColor: false)
    while let line = readLine(strippingNewline: true) {
      let text = line.hasSuffix("\r") ? String(line.dropLast()) : line
      write(await session.handle(line: text))
      if session.isFinished { break }
    }
    if !session.isFinished { write(session.finish()) }
    return session.errorCount > 0 ? 1 : 0
  }

  /// The session on a terminal in raw mode, with the line editor and the history file.
  private static func runInteractive(usesColor: Bool, historyPath: String?) async -> Int32 {
    var history = historyPath.map { History.load(from: $0) } ?? History()
    var editor = LineEditor(history: history.entries)
    var decoder = KeyDecoder()
    var session = ReplSession(usesColor: usesColor)
    // The prompt and the line being edited go to the terminal even when output is redirected.
    let screen = Terminal.isOutputInteractive ? STDOUT_FILENO : STDERR_FILENO

    func redraw() {
      let prompt = session.currentPrompt
      let shown = usesColor ? "\u{1B}[1;34m\(prompt)\u{1B}[0m" : prompt
      Terminal.write(
        editor.render(
          prompt: shown, promptWidth: TerminalWidth.of(prompt), terminalWidth: Terminal.width),
        to: screen)
    }

    Terminal.write(
      "retry-policy repl: type a policy, ':help' for help, Ctrl-D to leave\n", to: screen)
    redraw()
    while true {
      let bytes = Terminal.readBytes()
      guard !bytes.isEmpty else {
        Terminal.write("\n", to: screen)
        return 0
      }
      for key in decoder.decode(bytes) {
        if key == .enter || key == .interrupt {
          // Show the whole line's end, so what follows starts after it, not inside it.
          let line = editor
          _ = editor.handle(.end)
          redraw()
          editor = line
        }
        switch editor.handle(key) {
        case .none:
          continue
        case .redraw:
          redraw()
        case .bell:
          Terminal.write("\u{7}", to: screen)
        case .clearScreen:
          Terminal.write("\u{1B}[H\u{1B}[2J", to: screen)
          redraw()
        case .interrupt:
          Terminal.write("^C\n", to: screen)
          session.interrupt()
          redraw()
        case .endOfInput:
          Terminal.write("\n", to: screen)
          return 0
        case .submit(let line):
          Terminal.write("\n", to: screen)
          history.add(line)
          if let historyPath { try? history.save(to: historyPath) }
          editor.setHistory(history.entries)
          write(await session.handle(line: line))
          if session.isFinished { return 0 }
          redraw()
        }
      }
    }
  }

  private static func write(_ messages: [ReplMessage]) {
    for message in messages {
      Terminal.write(message.text, to: message.stream == .output ? STDOUT_FILENO : STDERR_FILENO)
    }
  }
}
