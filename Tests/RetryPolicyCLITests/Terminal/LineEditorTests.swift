import Testing

@testable import RetryPolicyCLI

/// Feeds bytes through a decoder and an editor, as the terminal driver does.
private struct EditorHarness {
  var decoder = KeyDecoder()
  var editor: LineEditor
  var actions: [LineEditor.Action] = []

  init(history: [String] = []) {
    editor = LineEditor(history: history)
  }

  mutating func type(_ bytes: [UInt8]) {
    for key in decoder.decode(bytes) {
      actions.append(editor.handle(key))
    }
  }

  mutating func type(_ text: String) {
    type(Array(text.utf8))
  }
}

private let escape: UInt8 = 0x1B
private let left: [UInt8] = [escape] + Array("[D".utf8)
private let right: [UInt8] = [escape] + Array("[C".utf8)
private let up: [UInt8] = [escape] + Array("[A".utf8)
private let down: [UInt8] = [escape] + Array("[B".utf8)

@Suite("Key decoder")
struct KeyDecoderTests {
  @Test(
    "escape sequences decode to keys",
    arguments: [
      ("[A", Key.up), ("[B", .down), ("[C", .right), ("[D", .left),
      ("[H", .home), ("[F", .end), ("OH", .home), ("OF", .end),
      ("[1~", .home), ("[7~", .home), ("[4~", .end), ("[8~", .end),
      ("[3~", .delete), ("[1;5C", .wordRight), ("[1;5D", .wordLeft),
      ("[5~", .unknown), ("[Z", .unknown), ("b", .wordLeft), ("f", .wordRight),
      ("x", .unknown), ("OA", .up), ("OQ", .unknown),
    ])
  func escapeSequences(sequence: String, key: Key) {
    var decoder = KeyDecoder()
    #expect(decoder.decode([escape] + Array(sequence.utf8)) == [key])
    #expect(!decoder.isPending)
  }

  @Test(
    "control bytes decode to keys",
    arguments: [
      (UInt8(0x7F), Key.backspace), (0x08, .backspace), (0x03, .interrupt),
      (0x04, .endOfTransmission), (0x01, .home), (0x05, .end), (0x02, .left),
      (0x06, .right), (0x0D, .enter), (0x0A, .enter), (0x0B, .killToEnd),
      (0x15, .killToStart), (0x17, .deleteWordBackward), (0x10, .up), (0x0E, .down),
      (0x0C, .clearScreen), (0x09, .tab), (0x00, .unknown), (0x1F, .unknown),
    ])
  func controlBytes(byte: UInt8, key: Key) {
    var decoder = KeyDecoder()
    #expect(decoder.decode([byte]) == [key])
  }

  @Test("multi-byte UTF-8 decodes to one character, even when split across reads")
  func utf8() {
    var decoder = KeyDecoder()
    let bytes = Array("é漢😀".utf8)
    var keys: [Key] = []
    for byte in bytes {
      keys += decoder.decode([byte])
    }
    #expect(keys == [.character("é"), .character("漢"), .character("😀")])
  }

  @Test(
    "invalid UTF-8 is dropped without losing the keys after it",
    arguments: [
      [0xFF, 0x61], [0x80, 0x61], [0xC3, 0x61], [0xC0, 0xAF, 0x61], [0xE0, 0x80, 0xAF, 0x61],
      [0xED, 0xA0, 0x80, 0x61], [0xF5, 0x61], [0xF4, 0x90, 0x80, 0x80, 0x61],
    ] as [[UInt8]])
  func invalidUTF8(bytes: [UInt8]) {
    var decoder = KeyDecoder()
    #expect(decoder.decode(bytes) == [.character("a")])
  }

  @Test("a bare Escape at the end of a read is dropped, not left pending")
  func bareEscape() {
    var decoder = KeyDecoder()
    #expect(decoder.decode([escape]).isEmpty)
    #expect(!decoder.isPending)
    #expect(decoder.decode(Array("b".utf8)) == [.character("b")])
  }

  @Test("an overlong escape sequence is skipped to its final byte")
  func overlongSequence() {
    var decoder = KeyDecoder()
    let sequence = [escape] + Array(("[" + String(repeating: "1;", count: 100) + "Xa").utf8)
    #expect(decoder.decode(sequence) == [.unknown, .character("a")])
  }

  @Test("a sequence broken by a control byte yields that byte's key")
  func brokenSequence() {
    var decoder = KeyDecoder()
    #expect(decoder.decode([escape, UInt8(ascii: "["), 0x03]) == [.unknown, .interrupt])
  }

  @Test("C1 control characters are not inserted")
  func c1Controls() {
    var decoder = KeyDecoder()
    #expect(decoder.decode([0xC2, 0x9B]) == [.unknown])
  }
}

@Suite("Line editor")
struct LineEditorTests {
  @Test("typed text is inserted at the cursor, moved with the arrows")
  func insertAtCursor() {
    var harness = EditorHarness()
    harness.type("retry 3 1s")
    harness.type(left + left)
    harness.type("delay ")
    #expect(harness.editor.text == "retry 3 delay 1s")
    #expect(harness.editor.cursor == 14)
    harness.type(right + right + right)
    #expect(harness.editor.cursor == 16)
  }

  @Test("Home and End in all their forms move to the ends of the line")
  func homeAndEnd() {
    for (home, end) in [("[H", "[F"), ("OH", "OF"), ("[1~", "[4~"), ("[7~", "[8~")] {
      var harness = EditorHarness()
      harness.type("abc")
      harness.type([escape] + Array(home.utf8))
      #expect(harness.editor.cursor == 0)
      harness.type("x")
      harness.type([escape] + Array(end.utf8))
      harness.type("y")
      #expect(harness.editor.text == "xabcy")
    }
  }

  @Test("Ctrl-A and Ctrl-E move to the ends of the line")
  func controlAAndE() {
    var harness = EditorHarness()
    harness.type("mid")
    harness.type([0x01])
    harness.type("<")
    harness.type([0x05])
    harness.type(">")
    #expect(harness.editor.text == "<mid>")
  }

  @Test("Backspace deletes before the cursor and Delete under it")
  func backspaceAndDelete() {
    var harness = EditorHarness()
    harness.type("retry 33")
    harness.type([0x7F])
    #expect(harness.editor.text == "retry 3")
    harness.type([0x01])
    harness.type([escape] + Array("[3~".utf8))
    #expect(harness.editor.text == "etry 3")
    harness.type([0x7F])
    #expect(harness.actions.last == .bell)
    #expect(harness.editor.text == "etry 3")
  }

  @Test("Backspace removes a whole multi-byte character")
  func backspaceUTF8() {
    var harness = EditorHarness()
    harness.type("né漢")
    harness.type([0x7F])
    #expect(harness.editor.text == "né")
    harness.type(left)
    harness.type([0x7F])
    #expect(harness.editor.text == "é")
  }

  @Test("a combining mark moves with the character it sits on")
  func combiningMark() {
    var harness = EditorHarness()
    harness.type("ae\u{301}b")
    harness.type(left + left)
    #expect(harness.editor.cursor == 1)
    harness.type([escape] + Array("[3~".utf8))
    #expect(harness.editor.text == "ab")
  }

  @Test("Ctrl-K, Ctrl-U and Ctrl-W delete parts of the line")
  func killKeys() {
    var harness = EditorHarness()
    harness.type("retry 3 backoff 1s")
    harness.type([0x17])
    #expect(harness.editor.text == "retry 3 backoff ")
    harness.type(left + left)
    harness.type([0x0B])
    #expect(harness.editor.text == "retry 3 backof")
    harness.type([0x15])
    #expect(harness.editor.text == "")
  }

  @Test("Enter submits the line and empties the editor")
  func enter() {
    var harness = EditorHarness()
    harness.type("retry 3\r")
    #expect(harness.actions.last == .submit("retry 3"))
    #expect(harness.editor.text.isEmpty)
    #expect(harness.editor.cursor == 0)
  }

  @Test("Ctrl-C drops the line")
  func interrupt() {
    var harness = EditorHarness()
    harness.type("retry 3")
    harness.type([0x03])
    #expect(harness.actions.last == .interrupt)
    #expect(harness.editor.text.isEmpty)
  }

  @Test("Ctrl-D ends the input on an empty line and deletes under the cursor otherwise")
  func controlD() {
    var harness = EditorHarness()
    harness.type("ab")
    harness.type(left + left)
    harness.type([0x04])
    #expect(harness.editor.text == "b")
    #expect(harness.actions.last == .redraw)
    harness.type([0x7F, 0x04])
    harness.type([escape] + Array("[3~".utf8))
    harness.type([0x04])
    #expect(harness.editor.text == "")
    #expect(harness.actions.last == .endOfInput)
  }

  @Test("Up and Down go through the history and back to the line being written")
  func history() {
    var harness = EditorHarness(history: ["retry 1", "retry 2"])
    harness.type("draft")
    harness.type(up)
    #expect(harness.editor.text == "retry 2")
    harness.type(up)
    #expect(harness.editor.text == "retry 1")
    harness.type(up)
    #expect(harness.actions.last == .bell)
    #expect(harness.editor.text == "retry 1")
    harness.type(down)
    #expect(harness.editor.text == "retry 2")
    harness.type(down)
    #expect(harness.editor.text == "draft")
    harness.type(down)
    #expect(harness.actions.last == .bell)
  }

  @Test("a recalled entry can be edited and submitted")
  func editRecalled() {
    var harness = EditorHarness(history: ["retry 3 backof 1s"])
    harness.type(up)
    harness.type(left + left + left)
    harness.type("f\r")
    #expect(harness.actions.last == .submit("retry 3 backoff 1s"))
  }

  @Test("unknown escape sequences and control bytes change nothing")
  func unknownKeys() {
    var harness = EditorHarness()
    harness.type("ab")
    harness.type([escape] + Array("[5~".utf8) + [0x00, 0x1F, escape, UInt8(ascii: "x")])
    #expect(harness.editor.text == "ab")
    #expect(harness.editor.cursor == 2)
  }
}

@Suite("Line rendering")
struct LineRenderingTests {
  @Test("the line is redrawn from the start, cleared to the end, the cursor moved back")
  func redraw() {
    var harness = EditorHarness()
    harness.type("retry 3")
    harness.type(left + left)
    let output = harness.editor.render(prompt: "retry> ", promptWidth: 7, terminalWidth: 80)
    #expect(output == "\r" + "retry> retry 3" + "\u{1B}[K" + "\u{1B}[2D")
  }

  @Test("with the cursor at the end there is no cursor move")
  func cursorAtEnd() {
    var harness = EditorHarness()
    harness.type("retry")
    let output = harness.editor.render(prompt: "> ", promptWidth: 2, terminalWidth: 80)
    #expect(output == "\r> retry\u{1B}[K")
  }

  @Test("wide characters count two columns when moving the cursor")
  func wideCharacters() {
    var harness = EditorHarness()
    harness.type("漢字x")
    harness.type(left + left)
    let output = harness.editor.render(prompt: "> ", promptWidth: 2, terminalWidth: 80)
    #expect(output == "\r> 漢字x\u{1B}[K\u{1B}[3D")
  }

  @Test("a line wider than the terminal scrolls so the cursor stays in view")
  func horizontalScroll() {
    var harness = EditorHarness()
    harness.type(String(repeating: "a", count: 30) + "XYZ")
    let output = harness.editor.render(prompt: "> ", promptWidth: 2, terminalWidth: 13)
    #expect(output == "\r> " + String(repeating: "a", count: 7) + "XYZ\u{1B}[K")
    harness.type([0x01])
    let start = harness.editor.render(prompt: "> ", promptWidth: 2, terminalWidth: 13)
    #expect(start == "\r> " + String(repeating: "a", count: 10) + "\u{1B}[K\u{1B}[10D")
  }
}
