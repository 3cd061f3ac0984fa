import Foundation

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
/// unknown command, an unreadable file), so scripts can tell. 2 for a usage error, and when
/// standard output is lost (the session stops at once; never 0 then).
enum ReplCommand {
  /// The help page, for `repl --help`: the same form as every subcommand's.
  static var usage: String { HelpRendering.help(for: CommandLineTool.replSpec) }

  /// Runs the REPL with the arguments after `repl`; returns the exit status.
  ///
  /// It stops as soon as standard output is lost; the caller then reports it (exit 2).
  static func run(arguments: [String], context: CommandContext) async -> Int32 {
    let output = context.output
    do {
      let request = try ArgumentParser.parse(
        arguments, for: CommandLineTool.replSpec, as: NoOptions.self)
      if case .help = request {
        output.write(usage)
        return 0
      }
    } catch {
      output.usageError(error, command: CommandLineTool.replSpec.fullName)
      return 2
    }
    guard context.readsProcessInput else {
      return await runPiped(lines: PipedLines(context: context), output: output)
    }
    if Terminal.isInputInteractive, Terminal.enableRawMode() {
      defer { Terminal.restore() }
      return await runInteractive(
        output: output, historyPath: History.defaultPath(environment: context.environment))
    }
    return await runPiped(lines: PipedLines(context: nil), output: output)
  }

  /// The lines of standard input: the process's, read as they come, or a context's.
  struct PipedLines {
    private var buffered: [String]?

    /// Lines from the context's standard input; from the process's with nil.
    init(context: CommandContext?) {
      buffered = context.map { context in
        let text = (try? context.standardInputText().get()) ?? ""
        return text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
      }
      if buffered?.last == "" { buffered?.removeLast() }
    }

    /// The next line without its line end, or nil at the end.
    mutating func next() -> String? {
      guard buffered != nil else { return readLine(strippingNewline: true) }
      return buffered?.isEmpty == false ? buffered?.removeFirst() : nil
    }
  }

  /// Reads lines from a pipe or file to the end; no prompt, no escape codes.
  ///
  /// Exit status 1 when a line had an error; when output is lost, it stops reading and
  /// returns 2 (never 0), whatever the lines did.
  static func runPiped(lines: PipedLines, output: Output) async -> Int32 {
    var lines = lines
    var session = ReplSession(usesColor: false)
    while let line = lines.next() {
      let text = line.hasSuffix("\r") ? String(line.dropLast()) : line
      write(await session.handle(line: text), to: output)
      if output.hasFailed { return ExitStatus.usage }
      if session.isFinished { break }
    }
    if !session.isFinished { write(session.finish(), to: output) }
    if output.hasFailed { return ExitStatus.usage }
    return session.errorCount > 0 ? 1 : 0
  }

  /// The session on a terminal in raw mode, with the line editor and the history file.
  ///
  /// A window resize (SIGWINCH) redraws the line for the new width.
  private static func runInteractive(output: Output, historyPath: String?) async -> Int32 {
    var history = historyPath.map { History.load(from: $0) } ?? History()
    var editor = LineEditor(history: history.entries)
    var decoder = KeyDecoder()
    // The prompt and the line being edited go to the terminal even when output is redirected.
    let screenIsOutput = Terminal.isOutputInteractive
    let screen = screenIsOutput ? Platform.standardOutput : Platform.standardError
    let usesColor = screenIsOutput ? output.outputUsesColor : output.errorUsesColor
    var session = ReplSession(usesColor: output.outputUsesColor)
    Platform.watchWindowResizes()

    func show(_ text: String) {
      if screenIsOutput { output.write(text) } else { output.writeError(text) }
    }

    var width = Terminal.width(of: screen)
    var cursorColumn = 0

    func redraw() {
      let prompt = session.currentPrompt
      let shown = usesColor ? "\u{1B}[1;34m\(prompt)\u{1B}[0m" : prompt
      let promptWidth = TerminalWidth.of(prompt)
      show(editor.render(prompt: shown, promptWidth: promptWidth, terminalWidth: width))
      cursorColumn = editor.cursorColumn(promptWidth: promptWidth, terminalWidth: width)
    }

    show("retry-policy repl: type a policy, ':help' for help, Ctrl-D to leave\n")
    redraw()
    while !output.hasFailed {
      let bytes: [UInt8]
      switch Terminal.readInput() {
      case .end:
        show("\n")
        return 0
      case .resized:
        // Clear what the old width left, then draw the line for the new width.
        let newWidth = Terminal.width(of: screen)
        show(
          LineEditor.resizePreamble(
            cursorColumn: cursorColumn, oldWidth: width, newWidth: newWidth))
        width = newWidth
        redraw()
        continue
      case .bytes(let read): bytes = read
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
          show("\u{7}")
        case .clearScreen:
          show("\u{1B}[H\u{1B}[2J")
          redraw()
        case .interrupt:
          show("^C\n")
          session.interrupt()
          redraw()
        case .endOfInput:
          show("\n")
          return 0
        case .submit(let line):
          show("\n")
          history.add(line)
          if let historyPath { try? history.save(to: historyPath) }
          editor.setHistory(history.entries)
          write(await session.handle(line: line), to: output)
          if session.isFinished { return 0 }
          redraw()
        }
      }
    }
    return ExitStatus.usage
  }

  private static func write(_ messages: [ReplMessage], to output: Output) {
    for message in messages {
      if message.stream == .output {
        output.write(message.text)
      } else {
        output.writeError(message.text)
      }
    }
  }
}
