// The REPL's line editor: keys (KeyDecoder.swift) edit one line.
//
// Everything here is pure: `KeyDecoder` turns raw bytes into `Key`s, `LineEditor` applies keys
// to a line and its history and says what the driver should do, and `LineEditor.render` gives
// the escape codes that redraw the line. The terminal driver in `ReplCommand` only reads bytes,
// feeds them in and writes what comes out, so all of this is unit-tested without a terminal.

/// One line being edited, with the cursor and the history it can recall.
///
/// A value: `handle(_:)` applies a key and returns what the driver should do next.
struct LineEditor: Sendable {
  /// What the driver does after a key.
  enum Action: Sendable, Hashable {
    /// Nothing changed on screen.
    case none
    /// The line or the cursor changed: redraw it.
    case redraw
    /// Enter: the line is done; the editor is already empty for the next one.
    case submit(String)
    /// Ctrl-C: the line was dropped; the editor is already empty.
    case interrupt
    /// Ctrl-D on an empty line: the input is over.
    case endOfInput
    /// Ctrl-L: clear the screen, then redraw.
    case clearScreen
    /// The key cannot do anything here (Up at the oldest entry): ring the bell.
    case bell
  }

  /// The line's characters, as Unicode scalars.
  private(set) var scalars: [Unicode.Scalar] = []
  /// Where the cursor stands: an index into `scalars`, from 0 to `scalars.count`.
  private(set) var cursor = 0
  /// The entries Up and Down go through, oldest first.
  private(set) var history: [String]
  /// The history entry shown, or `history.count` for the line being written.
  private var historyIndex: Int
  /// The line being written, kept while the user looks through the history.
  private var draft: [Unicode.Scalar] = []

  /// The longest line kept; keys that would make it longer ring the bell.
  static let maximumLength = 65_536

  /// Creates an empty editor that recalls the given history, oldest entry first.
  init(history: [String] = []) {
    self.history = history
    self.historyIndex = history.count
  }

  /// The line as text.
  var text: String {
    var result = ""
    result.unicodeScalars.append(contentsOf: scalars)
    return result
  }

  /// Replaces the history (after an entry was added), and starts over at the newest end.
  mutating func setHistory(_ entries: [String]) {
    history = entries
    historyIndex = entries.count
    draft = []
  }

  /// Applies one key.
  mutating func handle(_ key: Key) -> Action {
    switch key {
    case .character(let scalar):
      return insert([scalar])
    case .tab:
      return insert([" "])
    case .enter:
      let line = text
      reset()
      return .submit(line)
    case .interrupt:
      reset()
      return .interrupt
    case .endOfTransmission:
      if scalars.isEmpty { return .endOfInput }
      return deleteForward()
    case .left:
      guard cursor > 0 else { return .none }
      cursor = previousBoundary(before: cursor)
      return .redraw
    case .right:
      guard cursor < scalars.count else { return .none }
      cursor = nextBoundary(after: cursor)
      return .redraw
    case .home:
      guard cursor != 0 else { return .none }
      cursor = 0
      return .redraw
    case .end:
      guard cursor != scalars.count else { return .none }
      cursor = scalars.count
      return .redraw
    case .wordLeft:
      let target = wordStart(before: cursor)
      guard target != cursor else { return .none }
      cursor = target
      return .redraw
    case .wordRight:
      let target = wordEnd(after: cursor)
      guard target != cursor else { return .none }
      cursor = target
      return .redraw
    case .backspace:
      guard cursor > 0 else { return .bell }
      let start = previousBoundary(before: cursor)
      scalars.removeSubrange(start..<cursor)
      cursor = start
      return .redraw
    case .delete:
      return deleteForward()
    case .killToEnd:
      guard cursor < scalars.count else { return .none }
      scalars.removeSubrange(cursor...)
      return .redraw
    case .killToStart:
      guard cursor > 0 else { return .none }
      scalars.removeSubrange(..<cursor)
      cursor = 0
      return .redraw
    case .deleteWordBackward:
      let start = wordStart(before: cursor)
      guard start < cursor else { return .bell }
      scalars.removeSubrange(start..<cursor)
      cursor = start
      return .redraw
    case .up:
      guard historyIndex > 0 else { return .bell }
      if historyIndex == history.count { draft = scalars }
      historyIndex -= 1
      show(Array(history[historyIndex].unicodeScalars))
      return .redraw
    case .down:
      guard historyIndex < history.count else { return .bell }
      historyIndex += 1
      show(historyIndex == history.count ? draft : Array(history[historyIndex].unicodeScalars))
      return .redraw
    case .clearScreen:
      return .clearScreen
    case .unknown:
      return .none
    }
  }

  /// Empties the line and goes back to the newest end of the history.
  mutating func reset() {
    scalars = []
    cursor = 0
    draft = []
    historyIndex = history.count
  }

  private mutating func insert(_ new: [Unicode.Scalar]) -> Action {
    guard scalars.count + new.count <= Self.maximumLength else { return .bell }
    scalars.insert(contentsOf: new, at: cursor)
    cursor += new.count
    return .redraw
  }

  private mutating func deleteForward() -> Action {
    guard cursor < scalars.count else { return .bell }
    scalars.removeSubrange(cursor..<nextBoundary(after: cursor))
    return .redraw
  }

  private mutating func show(_ line: [Unicode.Scalar]) {
    scalars = line
    cursor = line.count
  }

  /// The index after the character at `index` and any zero-width marks that follow it.
  private func nextBoundary(after index: Int) -> Int {
    var next = min(index + 1, scalars.count)
    while next < scalars.count, TerminalWidth.of(scalars[next]) == 0 { next += 1 }
    return next
  }

  /// The index of the character before `index`, stepping over zero-width marks.
  private func previousBoundary(before index: Int) -> Int {
    var previous = max(index - 1, 0)
    while previous > 0, TerminalWidth.of(scalars[previous]) == 0 { previous -= 1 }
    return previous
  }

  private func isWordScalar(_ scalar: Unicode.Scalar) -> Bool {
    !(scalar.properties.isWhitespace || ",{}=#%".unicodeScalars.contains(scalar))
  }

  private func wordStart(before index: Int) -> Int {
    var position = index
    while position > 0, !isWordScalar(scalars[position - 1]) { position -= 1 }
    while position > 0, isWordScalar(scalars[position - 1]) { position -= 1 }
    return position
  }

  private func wordEnd(after index: Int) -> Int {
    var position = index
    while position < scalars.count, !isWordScalar(scalars[position]) { position += 1 }
    while position < scalars.count, isWordScalar(scalars[position]) { position += 1 }
    return position
  }

  /// The escape codes that redraw the line in place: `\r`, the prompt, the visible part of the
  /// line, `ESC [ K` to clear the rest, and the cursor moved back to its place.
  ///
  /// A line wider than the terminal scrolls sideways so the cursor stays in view.
  /// `promptWidth` is the prompt's width in columns (it may hold color codes).
  func render(prompt: String, promptWidth: Int, terminalWidth: Int) -> String {
    let available = max(1, terminalWidth - promptWidth - 1)
    let widths = scalars.map(TerminalWidth.of)
    let (start, _) = window(widths: widths, available: available)
    var end = start
    var shownWidth = 0
    while end < scalars.count, shownWidth + widths[end] <= available {
      shownWidth += widths[end]
      end += 1
    }
    var visible = ""
    visible.unicodeScalars.append(contentsOf: scalars[start..<end])
    var output = "\r" + prompt + visible + "\u{1B}[K"
    let back = widths[cursor..<max(cursor, end)].reduce(0, +)
    if back > 0 { output += "\u{1B}[\(back)D" }
    return output
  }

  /// The column of the cursor after ``render(prompt:promptWidth:terminalWidth:)`` with the
  /// same widths, counted from 0.
  func cursorColumn(promptWidth: Int, terminalWidth: Int) -> Int {
    let available = max(1, terminalWidth - promptWidth - 1)
    return promptWidth + window(widths: scalars.map(TerminalWidth.of), available: available).1
  }

  /// Where the shown part starts so that the cursor fits, and the width before the cursor.
  private func window(widths: [Int], available: Int) -> (start: Int, widthToCursor: Int) {
    var start = 0
    var widthToCursor = widths[0..<cursor].reduce(0, +)
    while widthToCursor > available, start < cursor {
      widthToCursor -= widths[start]
      start += 1
    }
    return (start, widthToCursor)
  }

  /// What to write after the window was resized, before redrawing the line: back to the row
  /// where the line starts, then clear to the end of the screen.
  ///
  /// A terminal that narrows re-wraps the line last drawn (as tmux, iTerm2 and VTE do): the
  /// cursor, `cursorColumn` columns into it, is then `cursorColumn / newWidth` rows below the
  /// line's start. Widening never wraps what was drawn, as the line always fitted.
  static func resizePreamble(cursorColumn: Int, oldWidth: Int, newWidth: Int) -> String {
    let rows = newWidth < oldWidth && newWidth > 0 ? cursorColumn / newWidth : 0
    return (rows > 0 ? "\u{1B}[\(rows)A" : "") + "\r\u{1B}[J"
  }
}

/// How many terminal columns a character takes: 0 for combining marks, 2 for wide East Asian
/// characters and emoji, 1 otherwise.
enum TerminalWidth {
  /// The columns one scalar takes.
  static func of(_ scalar: Unicode.Scalar) -> Int {
    let value = scalar.value
    if value < 0x300 { return value < 0x20 || (0x7F..<0xA0).contains(value) ? 0 : 1 }
    switch scalar.properties.generalCategory {
    case .nonspacingMark, .enclosingMark, .format: return 0
    default: break
    }
    let wide: [ClosedRange<UInt32>] = [
      0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF,
      0xA000...0xA4CF, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60,
      0xFFE0...0xFFE6, 0x1F300...0x1F64F, 0x1F900...0x1F9FF, 0x20000...0x3FFFD,
    ]
    return wide.contains { $0.contains(value) } ? 2 : 1
  }

  /// The columns a string takes.
  static func of(_ text: String) -> Int {
    text.unicodeScalars.reduce(0) { $0 + of($1) }
  }
}
