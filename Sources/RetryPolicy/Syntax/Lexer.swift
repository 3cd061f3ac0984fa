/// Splits the UTF-8 bytes of policy text into tokens, one at a time, on the parser's demand.
///
/// The lexer keeps no token array: `next()` scans the next token and returns it. Comments are
/// not tokens for the parser; the lexer collects them for the printer. Bad characters are
/// diagnosed here, once per run, and handed on as an `.error` token that the parser skips.
/// Every byte is looked at a bounded number of times, so time is linear in the text.
///
/// Positions are byte offsets. Columns are not counted byte by byte: the lexer keeps the
/// column base of its line (the line's first byte plus the UTF-8 continuation bytes passed on
/// it, which only non-ASCII text adds to), and a column is an offset minus that base, worked
/// out only when a range is asked for (see `Token`).
struct Lexer {
  /// The text.
  let bytes: UnsafeBufferPointer<UInt8>
  /// The byte the next token starts at, or at or before it.
  private(set) var offset = 0
  /// The line of `offset`, from 1; it stops at `UInt32.max` (as `SourceLocation` does).
  private(set) var line: UInt32 = 1
  /// The column base of `offset`: the first byte of its line plus the continuation bytes
  /// between them, so that the column of `offset` in Unicode scalars is `offset - base + 1`.
  private(set) var base = 0
  /// Every comment read so far, in order.
  var comments: [CommentSyntax] = []
  /// The lexer's own diagnostics, in the order found (the parser keeps its own).
  var diagnostics = DiagnosticList()

  init(bytes: UnsafeBufferPointer<UInt8>) {
    self.bytes = bytes
    // A UTF-8 byte order mark at the start is no character of the text (nor a column).
    if SourceCharacters.hasByteOrderMark(bytes) {
      offset = 3
      base = 3
    }
  }

  /// Where the lexer stands.
  var location: SourceLocation { Token.location(line: line, offset: offset, base: base) }

  /// A token from `start`, whose column base was `startBase`, to where the lexer stands.
  @inline(__always)
  private func token(
    _ kind: TokenKind, from start: Int, base startBase: Int, keyword: Keyword? = nil,
    clause: Clause? = nil, isIdentifier: Bool = false, hasFraction: Bool = false,
    unitStart: Int? = nil
  ) -> Token {
    Token(
      kind: kind, line: line, start: start, end: offset, startBase: startBase, endBase: base,
      keyword: keyword, clause: clause, isIdentifier: isIdentifier, hasFraction: hasFraction,
      unitStart: unitStart)
  }

  /// The text of a stretch of bytes.
  func text(_ start: Int, _ end: Int) -> String {
    guard start < end, start >= 0, end <= bytes.count else { return "" }
    return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
  }

  /// The bytes of a stretch.
  func slice(_ start: Int, _ end: Int) -> UnsafeBufferPointer<UInt8> {
    guard start < end, start >= 0, end <= bytes.count else {
      return UnsafeBufferPointer(rebasing: bytes[0..<0])
    }
    return UnsafeBufferPointer(rebasing: bytes[start..<end])
  }

  /// Scans and returns the next token.
  mutating func next() -> Token {
    while offset < bytes.count {
      let byte = bytes[offset]
      switch byte {
      case .space, .tab:
        stepASCII()
        while offset < bytes.count, bytes[offset] == .space { stepASCII() }
      case .carriageReturn:
        if peek(1) == .lineFeed {
          return newline(length: 2)
        }
        // A lone CR is no line end (they are LF and CR LF), and no blank.
        return scanBadCharacters()
      case .lineFeed:
        return newline(length: 1)
      case .hash:
        scanComment()
      case .zero ... .nine:
        return scanNumber()
      case .lowerA ... .lowerZ, .upperA ... .upperZ, .underscore:
        return scanWord()
      case .percentSign:
        return single(.percent)
      case .commaSign:
        return single(.comma)
      case .plusSign:
        return single(.plus)
      case .slashSign:
        return single(.slash)
      case .equalsSign:
        return single(.equals)
      case .leftBraceSign:
        return single(.leftBrace)
      case .rightBraceSign:
        return single(.rightBrace)
      default:
        return scanBadCharacters()
      }
    }
    return token(.end, from: offset, base: base)
  }

  // MARK: Scanning

  @inline(__always)
  private func peek(_ distance: Int) -> UInt8? {
    let index = offset + distance
    return index < bytes.count ? bytes[index] : nil
  }

  /// Moves past one ASCII byte that is not a line end.
  @inline(__always)
  private mutating func stepASCII() {
    offset += 1
  }

  private mutating func newline(length: Int) -> Token {
    let start = offset
    offset += length
    let newline = token(.newline, from: start, base: base)
    if line < .max { line += 1 }
    base = offset
    return newline
  }

  private mutating func single(_ kind: TokenKind) -> Token {
    let start = offset
    stepASCII()
    return token(kind, from: start, base: base)
  }

  private mutating func scanComment() {
    let start = location
    while offset < bytes.count, bytes[offset] != .lineFeed, bytes[offset] != .carriageReturn {
      if bytes[offset] < 0x80 {
        stepASCII()
      } else {
        stepCharacterInComment()
      }
    }
    comments.append(
      CommentSyntax(
        text: text(start.offset, offset), range: SourceRange(start: start, end: location)))
  }

  @inline(__always)
  private static func isDigit(_ byte: UInt8) -> Bool { byte >= .zero && byte <= .nine }

  @inline(__always)
  private static func isIdentifierByte(_ byte: UInt8) -> Bool {
    switch byte {
    case .lowerA ... .lowerZ, .upperA ... .upperZ, .zero ... .nine, .underscore: true
    default: false
    }
  }

  /// Whether the byte at `index` continues a word that is not an identifier: a hyphen, or a
  /// visible character of another script (not bytes that are not UTF-8, nor an invisible
  /// character, which are diagnosed on their own).
  private static func continuesLooseWord(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int)
    -> Bool
  {
    guard index < bytes.count else { return false }
    let byte = bytes[index]
    if byte == .hyphen { return true }
    if byte >= 0x80 { return continuesWordOutsideASCII(bytes, at: index) }
    return false
  }

  /// Moves past a run of ASCII bytes that `belongs` accepts (none of them a line end).
  @inline(__always)
  private mutating func skip(while belongs: (UInt8) -> Bool) {
    let bytes = bytes
    var index = offset
    while index < bytes.count, belongs(bytes[index]) { index += 1 }
    offset = index
  }

  /// Moves past a run of ASCII digits.
  @inline(__always)
  private mutating func skipDigits() { skip(while: Self.isDigit) }

  /// Moves past a run of ASCII identifier bytes (letters, digits, `_`).
  @inline(__always)
  private mutating func skipIdentifierBytes() { skip(while: Self.isIdentifierByte) }

  /// Moves past a whole character, or one ill-formed part of bytes that are not UTF-8: one
  /// column either way, as the renderer and `String(decoding:as:)` count them.
  private mutating func stepScalar() {
    if bytes[offset] < 0x80 {
      stepASCII()
      return
    }
    let length = SourceCharacters.decode(bytes, at: offset).length
    offset += length
    base += length - 1
  }

  /// Moves past a non-ASCII character of a comment, reporting bytes that are not UTF-8 (one
  /// diagnostic a run) and direction-changing characters.
  private mutating func stepCharacterInComment() {
    let start = location
    let (run, _) = Self.byteRun(bytes, at: offset)
    switch run {
    case .invalid:
      while offset < bytes.count, bytes[offset] >= 0x80,
        case .invalid = Self.byteRun(bytes, at: offset).0
      {
        stepScalar()
      }
      let end = location
      reportError(at: SourceRange(start: start, end: end)) {
        $0.invalidUTF8(from: start, to: end)
      }
    case .invisible(let scalar):
      stepScalar()
      if Self.isUnexpected(scalar, isInComment: true) {
        reportError(at: SourceRange(start: start, end: location)) { _ in
          .unexpectedCharacter(scalar, isInComment: true)
        }
      }
    case .visible:
      stepScalar()
    }
  }

  private mutating func scanNumber() -> Token {
    let start = offset
    let startBase = base
    skipDigits()
    var hasFraction = false
    if offset < bytes.count, bytes[offset] == .dot {
      if let next = peek(1), Self.isDigit(next) {
        hasFraction = true
        stepASCII()
        skipDigits()
      } else {
        stepASCII()
        while offset < bytes.count, Self.isIdentifierByte(bytes[offset]) { stepASCII() }
        let error = token(.error, from: start, base: startBase)
        reportError(at: error.range) { .malformedNumber($0.text(start, $0.offset)) }
        return error
      }
    }
    let unitStart = offset
    var kind = TokenKind.number
    if offset < bytes.count,
      Self.isIdentifierByte(bytes[offset]) || Self.continuesLooseWord(bytes, at: offset)
    {
      kind = .duration
      while offset < bytes.count {
        if Self.isIdentifierByte(bytes[offset]) {
          skipIdentifierBytes()
        } else if bytes[offset] >= 0x80, Self.continuesLooseWord(bytes, at: offset) {
          stepScalar()
        } else {
          break
        }
      }
    }
    return token(kind, from: start, base: startBase, hasFraction: hasFraction, unitStart: unitStart)
  }

  private mutating func scanWord() -> Token {
    let start = offset
    let startBase = base
    if bytes[offset] == .lowerX, let next = peek(1), Self.isDigit(next),
      Self.isFactorSign(bytes, at: offset)
    {
      stepASCII()
      return token(.word, from: start, base: startBase, keyword: .x)
    }
    skipIdentifierBytes()
    var isIdentifier = true
    while offset < bytes.count, bytes[offset] == .hyphen || bytes[offset] >= 0x80,
      Self.continuesLooseWord(bytes, at: offset)
    {
      isIdentifier = false
      if bytes[offset] >= 0x80 { stepScalar() } else { stepASCII() }
      skipIdentifierBytes()
    }
    let match = ClauseTable.keyword(spelledBy: UnsafeBufferPointer(rebasing: bytes[start..<offset]))
    return token(
      .word, from: start, base: startBase, keyword: match?.0, clause: match?.1,
      isIdentifier: isIdentifier && match == nil)
  }

  /// Whether the `x` at `position` is the factor sign: the identifier run it starts is `x`
  /// and digits only (`x1.5`, `x 3` aside), not a name such as `x509Error`.
  private static func isFactorSign(_ bytes: UnsafeBufferPointer<UInt8>, at position: Int) -> Bool {
    var index = position + 1
    while index < bytes.count, Self.isIdentifierByte(bytes[index]) {
      if !Self.isDigit(bytes[index]) { return false }
      index += 1
    }
    return true
  }

  /// Reads a run of characters that cannot start a token and reports it once: a run of bytes
  /// that are not UTF-8, one invisible character (named), or a run of visible ones.
  private mutating func scanBadCharacters() -> Token {
    let start = offset
    let startBase = base
    let (first, _) = Self.byteRun(bytes, at: offset)
    let scalar: Unicode.Scalar
    switch first {
    case .invalid:
      while offset < bytes.count, case .invalid = Self.byteRun(bytes, at: offset).0 { stepScalar() }
      let error = token(.error, from: start, base: startBase)
      reportError(at: error.range) { $0.invalidUTF8(from: error.range.start, to: error.range.end) }
      return error
    case .invisible(let invisible):
      scalar = invisible
      // One diagnostic for a run (of NULs, say), named by its first character.
      stepScalar()
      while offset < bytes.count, bytes[offset] != .tab, bytes[offset] != .lineFeed,
        bytes[offset] != .carriageReturn || peek(1) != .lineFeed,
        case .invisible = Self.byteRun(bytes, at: offset).0
      {
        stepScalar()
      }
    case .visible(let visible):
      scalar = visible
      scanVisibleBadCharacters()
    }
    let error = token(.error, from: start, base: startBase)
    reportError(at: error.range) { _ in .unexpectedCharacter(scalar) }
    return error
  }

  /// Moves past a run of visible characters that cannot start a token.
  private mutating func scanVisibleBadCharacters() {
    while offset < bytes.count {
      let byte = bytes[offset]
      if byte >= 0x80, !Self.continuesWordOutsideASCII(bytes, at: offset) { break }
      if byte < 0x20 || byte == 0x7F { break }  // an invisible character: its own diagnostic
      if byte == .space || byte == .tab || byte == .lineFeed || byte == .carriageReturn
        || byte == .hash || Self.isIdentifierByte(byte)
      {
        break
      }
      switch byte {
      case .percentSign, .commaSign, .plusSign, .slashSign, .equalsSign, .leftBraceSign,
        .rightBraceSign:
        break
      default:
        stepScalar()
        continue
      }
      break
    }
  }
}

extension UInt8 {
  fileprivate static let tab = UInt8(ascii: "\t")
  fileprivate static let lineFeed = UInt8(ascii: "\n")
  fileprivate static let carriageReturn = UInt8(ascii: "\r")
  fileprivate static let space = UInt8(ascii: " ")
  fileprivate static let hash = UInt8(ascii: "#")
  fileprivate static let percentSign = UInt8(ascii: "%")
  fileprivate static let commaSign = UInt8(ascii: ",")
  fileprivate static let plusSign = UInt8(ascii: "+")
  fileprivate static let slashSign = UInt8(ascii: "/")
  fileprivate static let hyphen = UInt8(ascii: "-")
  fileprivate static let dot = UInt8(ascii: ".")
  fileprivate static let equalsSign = UInt8(ascii: "=")
  fileprivate static let leftBraceSign = UInt8(ascii: "{")
  fileprivate static let rightBraceSign = UInt8(ascii: "}")
  fileprivate static let zero = UInt8(ascii: "0")
  fileprivate static let nine = UInt8(ascii: "9")
  fileprivate static let lowerA = UInt8(ascii: "a")
  fileprivate static let lowerX = Keyword.x.rawValue.utf8.first ?? 0
  fileprivate static let lowerZ = UInt8(ascii: "z")
  fileprivate static let upperA = UInt8(ascii: "A")
  fileprivate static let upperZ = UInt8(ascii: "Z")
  fileprivate static let underscore = UInt8(ascii: "_")
}
