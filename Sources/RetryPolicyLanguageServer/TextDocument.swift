import RetryPolicy

/// An open document: its text as UTF-8 bytes, and its position converter.
///
/// The language counts columns in Unicode scalars; LSP positions count UTF-16 code units, on
/// lines that a lone CR ends too. Every conversion is the core's `SourceLocationConverter`,
/// made once per text.
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
  /// The converter of the text's offsets, lines and columns.
  let converter: SourceLocationConverter

  /// The text's UTF-8 bytes.
  var bytes: [UInt8] { converter.bytes }

  init(uri: String, version: Int, text: String) {
    self.uri = uri
    self.version = version
    self.text = text
    converter = SourceLocationConverter(text: text)
  }

  /// The first byte of the editor's line `line` (from 0).
  func lineStart(_ line: Int) -> Int { converter.editorLineStart(line) }

  /// The LSP position of a location of a diagnostic (line from 1, column in scalars from 1).
  func position(of location: SourceLocation) -> Position {
    Position(converter.position(of: location))
  }

  /// The byte offset of an LSP position, clamped to its line.
  func offset(of position: Position) -> Int {
    converter.offset(
      of: SourceLocationConverter.Position(line: position.line, character: position.character))
  }

  /// The LSP position of a byte offset.
  func position(ofOffset target: Int) -> Position {
    Position(converter.position(ofOffset: target))
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

extension TextDocument.Position {
  /// The position the converter gives.
  init(_ position: SourceLocationConverter.Position) {
    self.init(line: position.line, character: position.character)
  }

}
