/// Converts byte offsets of one text to lines and columns, and back: made once per text.
///
/// Two ways of counting are offered, each decided here and nowhere else:
/// - the language's (``location(ofOffset:)``): lines end at LF or CR LF, columns count Unicode
///   scalars from 1, and a UTF-8 byte order mark at the start is no column. A lone CR is no
///   line end: it is a character of its line (and an `unexpected-character` error). This is
///   what the command line prints, and what the lexer's ranges hold.
/// - an editor's (``position(ofOffset:)``), as the Language Server Protocol counts: lines and
///   characters from 0, characters in UTF-16 code units, and lines end at LF, CR LF **or a
///   lone CR**, since an editor shows a lone CR as a line break.
///
///     let converter = SourceLocationConverter(bytes: Array(text.utf8))
///     converter.location(ofOffset: 14)  // 1:15
///     converter.position(ofOffset: 14)  // (line: 0, character: 14)
package struct SourceLocationConverter: Sendable {
  /// A place as an editor counts it: a line and a character in UTF-16 code units, from 0.
  package struct Position: Sendable, Hashable {
    /// The line, from 0.
    package var line: Int
    /// The character in UTF-16 code units, from 0.
    package var character: Int

    /// Creates a position.
    package init(line: Int, character: Int) {
      self.line = line
      self.character = character
    }
  }

  /// The text.
  package let bytes: [UInt8]
  /// Where each of the language's lines starts (after LF).
  package let lineStarts: [Int]
  /// Where each of an editor's lines starts (after LF, or after a lone CR).
  package let editorLineStarts: [Int]
  /// The offset of the first column of line 1: past a byte order mark.
  private let firstColumn: Int
  /// The language's column, less one, at every `checkpointStride`-th byte that is inside a
  /// line's content: so a column costs at most one stride of counting, however long the line.
  private let checkpointColumns: [Int]
  /// The bytes between two checkpoints.
  private static let checkpointStride = 4096

  /// Makes the converter of a text given as UTF-8 bytes.
  package init(bytes: [UInt8]) {
    self.bytes = bytes
    var starts = [0]
    var editorStarts = [0]
    var index = 0
    while index < bytes.count {
      switch bytes[index] {
      case 0x0A:
        starts.append(index + 1)
        editorStarts.append(index + 1)
      case 0x0D where index + 1 >= bytes.count || bytes[index + 1] != 0x0A:
        editorStarts.append(index + 1)
      default: break
      }
      index += 1
    }
    lineStarts = starts
    editorLineStarts = editorStarts
    let first = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
    firstColumn = first
    // The columns before each checkpoint, counted as `location(ofOffset:)` counts them: the
    // line's first byte, then every byte that starts a scalar.
    var checkpoints: [Int] = []
    checkpoints.reserveCapacity(bytes.count / Self.checkpointStride + 1)
    var columns = 0
    var lineStart = first
    index = 0
    while index < bytes.count {
      if index % Self.checkpointStride == 0 { checkpoints.append(columns) }
      if index == lineStart || (index > lineStart && Self.startsScalar(bytes[index])) {
        columns += 1
      }
      if bytes[index] == 0x0A {
        columns = 0
        lineStart = index + 1
      }
      index += 1
    }
    checkpointColumns = checkpoints
  }

  /// Makes the converter of a text.
  package init(text: String) {
    self.init(bytes: Array(text.utf8))
  }

  /// The index of the line of `starts` that holds `offset`.
  private static func line(of offset: Int, in starts: [Int]) -> Int {
    var low = 0
    var high = starts.count - 1
    while low < high {
      let middle = low + (high - low + 1) / 2
      if starts[middle] <= offset { low = middle } else { high = middle - 1 }
    }
    return low
  }

  /// The byte just past the content of line `index` of `starts` (before its line end).
  private func contentEnd(ofLine index: Int, in starts: [Int]) -> Int {
    guard index + 1 < starts.count else { return bytes.count }
    var end = starts[index + 1] - 1
    if bytes[end] == 0x0A, end > starts[index], bytes[end - 1] == 0x0D { end -= 1 }
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

  /// Whether `byte` starts a scalar (is no UTF-8 continuation byte).
  private static func startsScalar(_ byte: UInt8) -> Bool { byte & 0xC0 != 0x80 }

  // MARK: The language's lines and columns

  /// The language's line (from 1) and column (in Unicode scalars, from 1) of a byte offset.
  package func location(ofOffset target: Int) -> SourceLocation {
    let offset = max(0, min(target, bytes.count))
    let line = Self.line(of: offset, in: lineStarts)
    let start = line == 0 ? min(firstColumn, offset) : lineStarts[line]
    var index = start
    var column = 1
    // From the last checkpoint of the line before `offset`, if it is past the line's start.
    let checkpoint = offset / Self.checkpointStride
    if checkpoint < checkpointColumns.count, checkpoint * Self.checkpointStride > start {
      index = checkpoint * Self.checkpointStride
      column = checkpointColumns[checkpoint] + 1
      while index < offset {
        if Self.startsScalar(bytes[index]) { column += 1 }
        index += 1
      }
      return SourceLocation(line: line + 1, column: column, offset: offset)
    }
    while index < offset {
      index += 1
      while index < offset, !Self.startsScalar(bytes[index]) { index += 1 }
      column += 1
    }
    return SourceLocation(line: line + 1, column: column, offset: offset)
  }

  /// The byte offset of the language's line (from 1) and column (in scalars, from 1),
  /// clamped to the line's content.
  package func offset(ofLine line: Int, column: Int) -> Int {
    guard line >= 1 else { return 0 }
    guard line <= lineStarts.count else { return bytes.count }
    let end = contentEnd(ofLine: line - 1, in: lineStarts)
    var offset = line == 1 ? min(firstColumn, end) : lineStarts[line - 1]
    var scalars = column - 1
    while scalars > 0, offset < end {
      offset = min(end, offset + Self.sequenceLength(bytes[offset]))
      scalars -= 1
    }
    return offset
  }

  // MARK: An editor's lines and UTF-16 characters

  /// An editor's position of a byte offset: lines end at LF, CR LF or a lone CR.
  package func position(ofOffset target: Int) -> Position {
    let offset = max(0, min(target, bytes.count))
    let line = Self.line(of: offset, in: editorLineStarts)
    var index = editorLineStarts[line]
    var units = 0
    while index < offset {
      let length = Self.sequenceLength(bytes[index])
      units += length == 4 ? 2 : 1
      index += length
    }
    return Position(line: line, character: units)
  }

  /// The byte offset of an editor's position, clamped to its line's content.
  package func offset(of position: Position) -> Int {
    guard position.line >= 0 else { return 0 }
    guard position.line < editorLineStarts.count else { return bytes.count }
    let end = contentEnd(ofLine: position.line, in: editorLineStarts)
    var offset = editorLineStarts[position.line]
    var units = position.character
    while units > 0, offset < end {
      let length = Self.sequenceLength(bytes[offset])
      units -= length == 4 ? 2 : 1
      offset = min(end, offset + length)
    }
    return offset
  }

  /// An editor's position of a location the language gives (a line and a column in scalars).
  package func position(of location: SourceLocation) -> Position {
    position(ofOffset: offset(ofLine: location.line, column: location.column))
  }

  /// The first byte of an editor's line `line` (from 0), clamped to the text.
  package func editorLineStart(_ line: Int) -> Int {
    editorLineStarts[max(0, min(line, editorLineStarts.count - 1))]
  }
}
