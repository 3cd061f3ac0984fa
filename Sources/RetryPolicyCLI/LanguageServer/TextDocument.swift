import RetryPolicy

/// An open document: its text as UTF-8 bytes, and where its lines start.
///
/// The language counts columns in Unicode scalars; LSP positions count UTF-16 code units.
/// The conversions walk one line's bytes: a scalar is one code unit, or two when it is
/// astral (a UTF-8 lead byte of four bytes); combining marks are scalars like any other.
struct TextDocument: Sendable {
  /// An LSP position: a line and a character in UTF-16 code units, both from 0.
  struct Position: Codable, Sendable, Equatable {
    var line: Int
    var character: Int
  }

  /// The document's URI.
  var uri: String
  /// The version the client gave.
  var version: Int
  /// The text.
  var text: String
  /// The text's UTF-8 bytes.
  let bytes: [UInt8]
  /// The byte offset where each line starts; line ends are LF (a CR before it ends the line).
  let lineStarts: [Int]

  init(uri: String, version: Int, text: String) {
    self.uri = uri
    self.version = version
    self.text = text
    bytes = Array(text.utf8)
    var starts = [0]
    for (index, byte) in bytes.enumerated() where byte == 0x0A { starts.append(index + 1) }
    lineStarts = starts
  }

  /// The byte just past line `index`'s content (before its LF, or CR LF).
  func lineEnd(_ index: Int) -> Int {
    guard index + 1 < lineStarts.count else { return bytes.count }
    var end = lineStarts[index + 1] - 1
    if end > lineStarts[index], bytes[end - 1] == 0x0D { end -= 1 }
    return end
  }

  /// The length in bytes of the UTF-8 sequence that `lead` starts.
  private static func sequenceLength(_ lead: UInt8) -> Int {
    switch lead {
    case 0xF0...: 4
    case 0xE0...: 3
    case 0xC0...: 2
    default: 1
    }
  }

  /// The LSP position of a location of a diagnostic (line from 1, column in scalars from 1).
  func position(of location: SourceLocation) -> Position {
    let line = max(0, min(location.line - 1, lineStarts.count - 1))
    var offset = lineStarts[line]
    if line == 0, bytes.starts(with: [0xEF, 0xBB, 0xBF]) { offset = 3 }
    let end = lineEnd(line)
    var scalars = max(0, location.column - 1)
    var units = offset == 3 && line == 0 ? 1 : 0
    while scalars > 0, offset < end {
      let length = Self.sequenceLength(bytes[offset])
      units += length == 4 ? 2 : 1
      offset += length
      scalars -= 1
    }
    return Position(line: line, character: units)
  }

  /// The byte offset of an LSP position, clamped to its line.
  func offset(of position: Position) -> Int {
    guard position.line >= 0 else { return 0 }
    guard position.line < lineStarts.count else { return bytes.count }
    var offset = lineStarts[position.line]
    let end = lineEnd(position.line)
    var units = position.character
    while units > 0, offset < end {
      let length = Self.sequenceLength(bytes[offset])
      units -= length == 4 ? 2 : 1
      offset = min(end, offset + length)
    }
    return offset
  }

  /// The LSP position of a byte offset.
  func position(ofOffset target: Int) -> Position {
    let clamped = max(0, min(target, bytes.count))
    var low = 0
    var high = lineStarts.count - 1
    while low < high {
      let middle = (low + high + 1) / 2
      if lineStarts[middle] <= clamped { low = middle } else { high = middle - 1 }
    }
    var offset = lineStarts[low]
    var units = 0
    while offset < clamped {
      let length = Self.sequenceLength(bytes[offset])
      units += length == 4 ? 2 : 1
      offset += length
    }
    return Position(line: low, character: units)
  }

  /// An LSP range of a source range.
  func range(of range: SourceRange) -> LSPRange {
    Self.range(position(of: range.start), position(of: range.end))
  }

  /// An LSP range between two positions.
  static func range(_ start: Position, _ end: Position) -> LSPRange {
    LSPRange(start: start, end: end)
  }

  /// The range of the whole text.
  var wholeRange: LSPRange {
    Self.range(Position(line: 0, character: 0), position(ofOffset: bytes.count))
  }

  /// The text of a stretch of bytes.
  func text(_ start: Int, _ end: Int) -> String {
    guard start < end, start >= 0, end <= bytes.count else { return "" }
    return String(decoding: bytes[start..<end], as: UTF8.self)
  }
}
