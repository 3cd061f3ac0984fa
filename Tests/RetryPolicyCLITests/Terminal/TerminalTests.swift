import Foundation
import Testing

@testable import RetryPolicyCLI

/// Colour and the REPL's behaviour on a terminal whose window changes size.
@Suite("Terminals: colour and window resizes")
struct TerminalTests {
  @Test(
    "colour needs a terminal, NO_COLOR unset or empty, and TERM other than dumb",
    arguments: [
      ([:], true, true),
      (["TERM": "xterm-256color"], true, true),
      (["TERM": "dumb"], true, false),
      (["NO_COLOR": "1"], true, false),
      (["NO_COLOR": ""], true, true),
      (["TERM": "xterm-256color"], false, false),
    ])
  func colourDecision(environment: [String: String], isTerminal: Bool, colours: Bool) async {
    #expect(Output.usesColor(isTerminal: isTerminal, environment: environment) == colours)
    let explain = await ToolRunner.run(
      ["explain", "retry 3 backoff 1s"], environment: environment, isTerminal: isTerminal)
    #expect(explain.standardOutput.contains("\u{1B}[") == colours)
    let check = await ToolRunner.run(
      ["check", "-"], input: "retry 3 bakoff 1s", environment: environment,
      isTerminal: isTerminal)
    #expect(check.standardOutput.contains("\u{1B}[") == colours)
  }

  @Test("the built binary under TERM=dumb prints no escape codes even when told it is a terminal")
  func dumbTerminalBinary() throws {
    let result = try ToolRunner.runScript(
      "TERM=dumb script -qc \"$0 explain 'retry 3 backoff 1s'\" /dev/null")
    #expect(result.standardOutput.contains("policy: retry 3 backoff 1s"))
    #expect(!result.standardOutput.contains("\u{1B}"))
  }

  @Test("SIGWINCH is noted once, and a wait for keys then reports the resize")
  func windowResizeSignal() {
    Platform.watchWindowResizes()
    _ = Platform.takeWindowResize()
    // To this thread, with the signal unblocked here: the handler has run when raise returns
    // (the test runner's threads may block signals).
    var signals = sigset_t()
    var previous = sigset_t()
    sigemptyset(&signals)
    sigaddset(&signals, SIGWINCH)
    pthread_sigmask(SIG_UNBLOCK, &signals, &previous)
    raise(SIGWINCH)
    pthread_sigmask(SIG_SETMASK, &previous, nil)
    #expect(Platform.isWindowResizePending)
    #expect(Terminal.readInput() == .resized)
    #expect(!Platform.takeWindowResize())
  }

  @Test(
    "after a narrowing, the redraw goes back up the rows the terminal re-wrapped the line into",
    arguments: [
      (70, 100, 40, "\u{1B}[1A\r\u{1B}[J"),
      (70, 100, 30, "\u{1B}[2A\r\u{1B}[J"),
      (20, 100, 40, "\r\u{1B}[J"),
      (70, 40, 100, "\r\u{1B}[J"),
      (70, 100, 0, "\r\u{1B}[J"),
    ])
  func resizePreamble(cursorColumn: Int, oldWidth: Int, newWidth: Int, expected: String) {
    #expect(
      LineEditor.resizePreamble(cursorColumn: cursorColumn, oldWidth: oldWidth, newWidth: newWidth)
        == expected)
  }

  @Test("the cursor column follows the sideways scroll of a line wider than the terminal")
  func cursorColumn() {
    var editor = LineEditor(history: [])
    for scalar in "retry 5 on serverError backoff 1s".unicodeScalars {
      _ = editor.handle(.character(scalar))
    }
    #expect(editor.cursorColumn(promptWidth: 7, terminalWidth: 100) == 7 + 33)
    // 20 columns: 12 for the line after the prompt and the last column, cursor at the end.
    #expect(editor.cursorColumn(promptWidth: 7, terminalWidth: 20) == 7 + 12)
    _ = editor.handle(.home)
    #expect(editor.cursorColumn(promptWidth: 7, terminalWidth: 20) == 7)
  }
}
