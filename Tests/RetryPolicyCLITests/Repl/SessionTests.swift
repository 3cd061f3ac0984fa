import Foundation
import Testing

@testable import RetryPolicyCLI

@Suite("REPL session")
struct ReplSessionTests {
  @Test("':help' lists every command")
  func help() async {
    var harness = ReplHarness()
    await harness.enter(":help")
    for command in ReplSession.commands {
      #expect(harness.output.contains(":" + command.name))
    }
    #expect(harness.errors.isEmpty)
    #expect(harness.session.errorCount == 0)
  }

  @Test(
    "an unknown command is an error with the nearest command suggested",
    arguments: [
      (":hepl", "error: unknown command ':hepl'; did you mean ':help'?\n"),
      (":jsno", "error: unknown command ':jsno'; did you mean ':json'?\n"),
      (":simulte x", "error: unknown command ':simulte'; did you mean ':simulate'?\n"),
      (":frobnicate", "error: unknown command ':frobnicate'; type ':help' for the commands\n"),
      (":", "error: unknown command ':'; type ':help' for the commands\n"),
    ])
  func unknownCommand(line: String, expected: String) async {
    var harness = ReplHarness()
    await harness.enter(line)
    #expect(harness.errors == expected)
    #expect(harness.output.isEmpty)
    #expect(harness.session.errorCount == 1)
  }

  @Test("':quit' finishes the session")
  func quit() async {
    var harness = ReplHarness()
    #expect(!harness.session.isFinished)
    await harness.enter(":quit")
    #expect(harness.session.isFinished)
  }

  @Test("blank and comment lines do nothing")
  func blankLines() async {
    var harness = ReplHarness()
    await harness.enter("", "   ", "# a comment")
    #expect(harness.output.isEmpty && harness.errors.isEmpty)
    #expect(harness.session.errorCount == 0)
  }

  @Test("'policy NAME {' opens a block that goes on until its '}'")
  func block() async {
    var harness = ReplHarness()
    #expect(harness.session.currentPrompt == "retry> ")
    await harness.enter("policy payments {")
    #expect(harness.session.isInBlock)
    #expect(harness.session.currentPrompt == "...> ")
    await harness.enter("  retry 1 on unauthorized  # a { in a comment does not count")
    #expect(harness.session.isInBlock)
    await harness.enter("  within 2m")
    #expect(harness.session.pendingBlock.count == 3)
    await harness.enter("}")
    #expect(!harness.session.isInBlock)
    #expect(harness.session.currentPrompt == "retry> ")
  }

  @Test("Ctrl-C drops the block being typed")
  func interruptBlock() async {
    var harness = ReplHarness()
    await harness.enter("policy p {", "retry 3")
    harness.session.interrupt()
    #expect(!harness.session.isInBlock)
    #expect(harness.session.pendingBlock.isEmpty)
  }

  @Test("commands work inside a block without ending it")
  func commandInBlock() async {
    var harness = ReplHarness()
    await harness.enter("policy p {", ":help")
    #expect(harness.session.isInBlock)
    #expect(harness.output.contains(":quit"))
  }

  @Test(
    "commands about the last policy need one",
    arguments: [":ast", ":json", ":simulate ok", ":explain"])
  func noPolicyYet(line: String) async {
    var harness = ReplHarness()
    await harness.enter(line)
    #expect(harness.errors == "error: no policy yet; type one first\n")
  }

  @Test("':load' of a missing file is an error naming it")
  func loadMissingFile() async {
    var harness = ReplHarness()
    await harness.enter(":load nowhere.retry")
    #expect(harness.errors == "error: cannot read 'nowhere.retry': no such file\n")
    #expect(harness.session.errorCount == 1)
  }

  @Test(
    "commands without their argument say what they need",
    arguments: [
      (":load", "error: ':load' needs a file name\n"),
      (":explain nothing", "error: no policy 'nothing'; load a file with ':load FILE' first\n"),
    ])
  func missingArgument(line: String, expected: String) async {
    var harness = ReplHarness()
    await harness.enter(line)
    #expect(harness.errors == expected)
  }

  @Test(
    "brace balance ignores comments",
    arguments: [
      ("policy p {", 1), ("}", -1), ("policy p { # }", 1), ("# {", 0), ("{ } {", 1),
    ])
  func braceBalance(line: String, balance: Int) {
    #expect(ReplSession.braceBalance(of: line) == balance)
  }
}
