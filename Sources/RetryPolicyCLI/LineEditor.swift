// The REPL's line editor: bytes from the terminal become keys, keys edit one line.
//
// Everything here is pure: `KeyDecoder` turns raw bytes into `Key`s, `LineEditor` applies keys
// to a line and its history and says what the driver should do, and `LineEditor.render` gives
// the escape codes that redraw the line. The terminal driver in `ReplCommand` only reads bytes,
// feeds them in and writes what comes out, so all of this is unit-tested without a terminal.

/// A key press, decoded from the bytes a terminal sends.
enum Key: Sendable, Hashable {
  /// A printable character (one Unicode scalar; multi-byte UTF-8 already decoded).
  case character(Unicode.Scalar)
  /// Return or Enter (CR or LF).
  case enter
  /// Left arrow or Ctrl-B.
  case left
  /// Right arrow or Ctrl-F.
  case right
  /// Ctrl-Left or Alt-B: to the start of the word.
  case wordLeft
  /// Ctrl-Right or Alt-F: past the end of the word.
  case wordRight
  /// Up arrow or Ctrl-P: the previous history entry.
  case up
  /// Down arrow or Ctrl-N: the next history entry.
  case down
  /// Home, `ESC [ 1 ~`, `ESC [ 7 ~`, `ESC O H` or Ctrl-A.
  case home
  /// End, `ESC [ 4 ~`, `ESC [ 8 ~`, `ESC O F` or Ctrl-E.
  case end
  /// Backspace (0x7F) or Ctrl-H: deletes before the cursor.
  case backspace
  /// Delete (`ESC [ 3 ~`): deletes under the cursor.
  case delete
  /// Ctrl-C.
  case interrupt
  /// Ctrl-D: end of input on an empty line, delete under the cursor otherwise.
  case endOfTransmission
  /// Ctrl-K: deletes from the cursor to the end of the line.
  case killToEnd
  /// Ctrl-U: deletes from the start of the line to the cursor.
  case killToStart
  /// Ctrl-W: deletes the word before the cursor.
  case deleteWordBackward
  /// Ctrl-L: clears the screen.
  case clearScreen
  /// Tab: inserted as a blank.
  case tab
  /// A control byte or escape sequence the editor does not use; ignored.
  case unknown
}

/// Turns the bytes a terminal sends into keys: UTF-8, control bytes and escape sequences.
///
/// Feed bytes one at a time; a key comes out when its last byte has arrived. Invalid UTF-8 is
/// dropped, and an escape sequence that is too long or not understood becomes ``Key/unknown``,
/// so no input can make the decoder grow without bound or stop making progress.
struct KeyDecoder: Sendable {
  private enum State: Sendable, Hashable {
    case ground
    /// After ESC.
    case escape
    /// After `ESC [`: parameter and intermediate bytes so far.
    case controlSequence([UInt8])
    /// Inside a sequence too long to keep: skipped up to its final byte.
    case skippingSequence
    /// After `ESC O`.
    case singleShift
    /// Inside a multi-byte UTF-8 character: the value so far, bytes still to come, and the
    /// smallest value its length may encode (to reject overlong forms).
    case utf8(value: UInt32, remaining: Int, minimum: UInt32)
  }

  private var state: State = .ground

  /// The longest escape sequence kept; longer ones are dropped as unknown.
  static let maximumSequenceLength = 16

  /// Whether the decoder holds part of a key.
  var isPending: Bool { state != .ground }

  /// Decodes a whole chunk of bytes, as one `read` gives them.
  ///
  /// An ESC alone at the end of a chunk is the Escape key, not the start of a sequence (a
  /// terminal sends a sequence in one write), so it is dropped rather than left pending.
  mutating func decode(_ bytes: some Sequence<UInt8>) -> [Key] {
    var keys: [Key] = []
    for byte in bytes {
      keys.append(contentsOf: feed(byte))
    }
    if state == .escape { state = .ground }
    return keys
  }

  /// Feeds one byte; returns the keys it completes (none, one, or two when a byte both ends
  /// a malformed sequence and starts a key of its own).
  mutating func feed(_ byte: UInt8) -> [Key] {
    switch state {
    case .ground:
      return ground(byte)
    case .escape:
      switch byte {
      case UInt8(ascii: "["):
        state = .controlSequence([])
        return []
      case UInt8(ascii: "O"):
        state = .singleShift
        return []
      case 0x1B:
        return []
      default:
        state = .ground
        switch byte {
        case UInt8(ascii: "b"): return [.wordLeft]
        case UInt8(ascii: "f"): return [.wordRight]
        case 0x7F, 0x08: return [.deleteWordBackward]
        default: return [.unknown]
        }
      }
    case .singleShift:
      state = .ground
      switch byte {
      case UInt8(ascii: "A"): return [.up]
      case UInt8(ascii: "B"): return [.down]
      case UInt8(ascii: "C"): return [.right]
      case UInt8(ascii: "D"): return [.left]
      case UInt8(ascii: "H"): return [.home]
      case UInt8(ascii: "F"): return [.end]
      default: return [.unknown]
      }
    case .controlSequence(var parameters):
      if (0x40...0x7E).contains(byte) {
        state = .ground
        return [Self.controlSequenceKey(parameters: parameters, final: byte)]
      }
      if (0x20...0x3F).contains(byte) {
        guard parameters.count < Self.maximumSequenceLength else {
          state = .skippingSequence
          return []
        }
        parameters.append(byte)
        state = .controlSequence(parameters)
        return []
      }
      // Not a sequence byte: give up on the sequence; the byte is a key of its own.
      state = .ground
      return [.unknown] + ground(byte)
    case .skippingSequence:
      if (0x20...0x3F).contains(byte) { return [] }
      state = .ground
      if (0x40...0x7E).contains(byte) { return [.unknown] }
      return [.unknown] + ground(byte)
    case .utf8(let value, let remaining, let minimum):
      guard byte & 0xC0 == 0x80 else {
        state = .ground
        return ground(byte)
      }
      let next = value << 6 | UInt32(byte & 0x3F)
      if remaining > 1 {
        state = .utf8(value: next, remaining: remaining - 1, minimum: minimum)
        return []
      }
      state = .ground
      guard next >= minimum, let scalar = Unicode.Scalar(next) else { return [] }
      return [Self.printable(scalar)]
    }
  }

  private mutating func ground(_ byte: UInt8) -> [Key] {
    switch byte {
    case 0x1B:
      state = .escape
      return []
    case 0x0D, 0x0A: return [.enter]
    case 0x7F, 0x08: return [.backspace]
    case 0x01: return [.home]
    case 0x02: return [.left]
    case 0x03: return [.interrupt]
    case 0x04: return [.endOfTransmission]
    case 0x05: return [.end]
    case 0x06: return [.right]
    case 0x09: return [.tab]
    case 0x0B: return [.killToEnd]
    case 0x0C: return [.clearScreen]
    case 0x0E: return [.down]
    case 0x10: return [.up]
    case 0x15: return [.killToStart]
    case 0x17: return [.deleteWordBackward]
    case 0x00...0x1F: return [.unknown]
    case 0x20...0x7E: return [.character(Unicode.Scalar(byte))]
    case 0xC2...0xDF:
      state = .utf8(value: UInt32(byte & 0x1F), remaining: 1, minimum: 0x80)
      return []
    case 0xE0...0xEF:
      state = .utf8(value: UInt32(byte & 0x0F), remaining: 2, minimum: 0x800)
      return []
    case 0xF0...0xF4:
      state = .utf8(value: UInt32(byte & 0x07), remaining: 3, minimum: 0x10000)
      return []
    default:
      // A stray continuation byte or a byte that never starts UTF-8: dropped.
      return []
    }
  }

  /// Control characters that arrive as multi-byte UTF-8 (C1 controls) are not printable.
  private static func printable(_ scalar: Unicode.Scalar) -> Key {
    (0x80...0x9F).contains(scalar.value) ? .unknown : .character(scalar)
  }

  private static func controlSequenceKey(parameters: [UInt8], final: UInt8) -> Key {
    let text = String(decoding: parameters, as: UTF8.self)
    let fields = text.split(separator: ";", omittingEmptySubsequences: false)
    let modifier = fields.count > 1 ? Int(fields[1]) : nil
    let isControl = modifier.map { $0 == 5 || $0 == 3 } ?? false
    switch final {
    case UInt8(ascii: "A"): return .up
    case UInt8(ascii: "B"): return .down
    case UInt8(ascii: "C"): return isControl ? .wordRight : .right
    case UInt8(ascii: "D"): return isControl ? .wordLeft : .left
    case UInt8(ascii: "H"): return .home
    case UInt8(ascii: "F"): return .end
    case UInt8(ascii: "~"):
      switch fields.first.flatMap({ Int($0) }) {
      case 1, 7: return .home
      case 4, 8: return .end
      case 3: return .delete
      default: return .unknown
      }
    default:
      return .unknown
    }
  }
}

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
    // Start far enough right that the cursor fits.
    var start = 0
    var widthToCursor = widths[0..<cursor].reduce(0, +)
    while widthToCursor > available, start < cursor {
      widthToCursor -= widths[start]
      start += 1
    }
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
