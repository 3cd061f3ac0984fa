/// The kind of a token of policy text.
enum TokenKind: Sendable, Hashable {
  /// A line end: LF or CR LF.
  case newline
  /// A keyword or a name: `backoff`, `serverError`, `retry-after`.
  case word
  /// A number without a unit: `3`, `1.5`.
  case number
  /// A number directly followed by letters: `250ms`, `5d` (the unit is checked by the parser).
  case duration
  /// `%`.
  case percent
  /// `,`.
  case comma
  /// `+`.
  case plus
  /// `/`, between a rate's count and its period (`50/s`).
  case slash
  /// `=`.
  case equals
  /// `{`.
  case leftBrace
  /// `}`.
  case rightBrace
  /// Text the lexer already diagnosed (a bad character, a malformed number): the parser skips
  /// it without a second diagnostic.
  case error
  /// The end of the text.
  case end
}

/// One token: its kind, where it stands, and what the lexer learnt about it.
///
/// A token keeps byte offsets only. Its line and columns are derived when a range is asked for
/// (`range`, `location(at:)`), in constant time: the lexer hands each token its line and a
/// column base, the offset of its line's start plus the UTF-8 continuation bytes before the
/// token on that line, so that a column is an offset minus the base. No column is counted
/// byte by byte.
struct Token: Sendable {
  /// The kind of token.
  var kind: TokenKind
  /// For a word, the keyword it spells, if any.
  var keyword: Keyword?
  /// For a keyword, the clause it starts, if any (from the clause table).
  var clause: Clause?
  /// For a word, whether it is an ASCII identifier (no hyphen, no other script).
  var isIdentifier = false
  /// For a number or a duration, whether it has a fraction (`1.5`).
  var hasFraction = false
  /// The token's line, from 1 (it stops at `UInt32.max`, as `SourceLocation` does).
  var line: UInt32
  /// The first byte of the token.
  var start: Int
  /// The byte just past the token.
  var end: Int
  /// For a duration, the first byte of the unit; otherwise `end`.
  var unitStart: Int
  /// The column base of `start`: the first byte of the line plus the continuation bytes
  /// before `start` on the line; the column of `start` is `start - startBase + 1`.
  var startBase: Int
  /// The column base of `end`, as `startBase` is of `start`.
  var endBase: Int

  init(
    kind: TokenKind, line: UInt32, start: Int, end: Int, startBase: Int, endBase: Int,
    keyword: Keyword? = nil, clause: Clause? = nil, isIdentifier: Bool = false,
    hasFraction: Bool = false, unitStart: Int? = nil
  ) {
    self.kind = kind
    self.keyword = keyword
    self.clause = clause
    self.isIdentifier = isIdentifier
    self.hasFraction = hasFraction
    self.line = line
    self.start = start
    self.end = end
    self.unitStart = unitStart ?? end
    self.startBase = startBase
    self.endBase = endBase
  }

  /// Where the token starts, in lines and columns.
  var startLocation: SourceLocation { Self.location(line: line, offset: start, base: startBase) }

  /// Where the token ends, in lines and columns.
  var endLocation: SourceLocation { Self.location(line: line, offset: end, base: endBase) }

  /// Where the token stands, in lines and columns.
  var range: SourceRange { SourceRange(start: startLocation, end: endLocation) }

  /// The location of an offset within the token's ASCII start (such as a duration's unit,
  /// after its ASCII digits).
  func location(at offset: Int) -> SourceLocation {
    Self.location(line: line, offset: offset, base: startBase)
  }

  /// The location of `offset` on `line`, whose column base is `base` (at most `offset`).
  @inline(__always)
  static func location(line: UInt32, offset: Int, base: Int) -> SourceLocation {
    // base <= offset: the difference is never negative and never overflows.
    let column = UInt32(clamping: offset - base)
    return SourceLocation(
      line: line, column: column == .max ? .max : column + 1, offset: UInt32(clamping: offset))
  }
}
