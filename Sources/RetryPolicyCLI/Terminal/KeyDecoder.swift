// Bytes from the terminal become keys: `KeyDecoder` is pure and unit-tested without a
// terminal; `LineEditor` (LineEditor.swift) applies the keys.

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
