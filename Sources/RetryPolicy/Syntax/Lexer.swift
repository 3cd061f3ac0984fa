/// Splits the UTF-8 bytes of policy text into tokens, one at a time, on the parser's demand.
///
/// The lexer keeps no token array: `next()` scans the next token and returns it. Comments are
/// not tokens for the parser; the lexer collects them for the printer. Bad characters are
/// diagnosed here, once per run, and handed on as an `.error` token that the parser skips.
/// Every byte is looked at a bounded number of times, so time is linear in the text.
struct Lexer {
  /// The text.
  let bytes: UnsafeBufferPointer<UInt8>
  /// The byte the next token starts at, or at or before it.
  private(set) var offset = 0
  /// The line of `offset`, from 1; it stops at `UInt32.max` (as `SourceLocation` does).
  private(set) var line: UInt32 = 1
  /// The column of `offset` in Unicode scalars, from 1; it stops at `UInt32.max`.
  private(set) var column: UInt32 = 1
  /// Every comment read so far, in order (none when `keepsComments` is false).
  var comments: [CommentSyntax] = []
  /// Whether comments are collected; only the printer needs them.
  var keepsComments = true
  /// The lexer's own diagnostics, in the order found (the parser keeps its own).
  var diagnostics = DiagnosticList()

  init(bytes: UnsafeBufferPointer<UInt8>) {
    self.bytes = bytes
    // A UTF-8 byte order mark at the start is no character of the text.
    if SourceCharacters.hasByteOrderMark(bytes) { offset = 3 }
  }

  /// Where the lexer stands.
  var location: SourceLocation {
    SourceLocation(line: line, column: column, offset: UInt32(clamping: offset))
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
    let here = location
    return Token(
      kind: .end, start: offset, end: offset, range: SourceRange(start: here, end: here),
      keyword: nil, isIdentifier: false, hasFraction: false, unitStart: offset)
  }

  // MARK: Scanning

  private func peek(_ distance: Int) -> UInt8? {
    let index = offset + distance
    return index < bytes.count ? bytes[index] : nil
  }

  /// Moves past one ASCII byte that is not a line end.
  @inline(__always)
  private mutating func stepASCII() {
    offset += 1
    if column < .max { column += 1 }
  }

  /// Moves past one byte that is not a line end.
  private mutating func step() {
    if bytes[offset] & 0xC0 != 0x80, column < .max { column += 1 }
    offset += 1
  }

  private mutating func newline(length: Int) -> Token {
    let start = location
    let startOffset = offset
    offset += length
    let end = SourceLocation(
      line: line, column: column > .max - 2 ? .max : column + UInt32(length),
      offset: UInt32(clamping: offset))
    if line < .max { line += 1 }
    column = 1
    return Token(
      kind: .newline, start: startOffset, end: offset, range: SourceRange(start: start, end: end),
      keyword: nil, isIdentifier: false, hasFraction: false, unitStart: offset)
  }

  private mutating func single(_ kind: TokenKind) -> Token {
    let start = location
    let startOffset = offset
    step()
    return Token(
      kind: kind, start: startOffset, end: offset, range: SourceRange(start: start, end: location),
      keyword: nil, isIdentifier: false, hasFraction: false, unitStart: offset)
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
    guard keepsComments else { return }
    comments.append(
      CommentSyntax(
        text: text(start.offset, offset), range: SourceRange(start: start, end: location)))
  }

  private func isDigit(_ byte: UInt8) -> Bool { byte >= .zero && byte <= .nine }

  private func isIdentifierByte(_ byte: UInt8) -> Bool {
    switch byte {
    case .lowerA ... .lowerZ, .upperA ... .upperZ, .zero ... .nine, .underscore: true
    default: false
    }
  }

  /// Whether the byte at `index` continues a word that is not an identifier: a hyphen, or a
  /// visible character of another script (not bytes that are not UTF-8, nor an invisible
  /// character, which are diagnosed on their own).
  private func continuesLooseWord(at index: Int) -> Bool {
    guard index < bytes.count else { return false }
    let byte = bytes[index]
    if byte == .hyphen { return true }
    if byte >= 0x80 { return continuesWordOutsideASCII(at: index) }
    return false
  }

  /// Moves past a whole character, or one ill-formed part of bytes that are not UTF-8: one
  /// column either way, as the renderer and `String(decoding:as:)` count them.
  private mutating func stepScalar() {
    if bytes[offset] < 0x80 {
      step()
      return
    }
    offset += SourceCharacters.decode(bytes, at: offset).length
    if column < .max { column += 1 }
  }

  /// Moves past a non-ASCII character of a comment, reporting bytes that are not UTF-8 (one
  /// diagnostic a run) and direction-changing characters.
  private mutating func stepCharacterInComment() {
    let start = location
    let (run, _) = byteRun(at: offset)
    switch run {
    case .invalid:
      while offset < bytes.count, bytes[offset] >= 0x80, case .invalid = byteRun(at: offset).0 {
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
    let start = location
    while offset < bytes.count, isDigit(bytes[offset]) { stepASCII() }
    var hasFraction = false
    if offset < bytes.count, bytes[offset] == .dot {
      if let next = peek(1), isDigit(next) {
        hasFraction = true
        step()
        while offset < bytes.count, isDigit(bytes[offset]) { stepASCII() }
      } else {
        step()
        while offset < bytes.count, isIdentifierByte(bytes[offset]) { stepASCII() }
        let range = SourceRange(start: start, end: location)
        reportError(at: range) { .malformedNumber($0.text(start.offset, $0.offset)) }
        return Token(
          kind: .error, start: start.offset, end: offset, range: range, keyword: nil,
          isIdentifier: false, hasFraction: false, unitStart: offset)
      }
    }
    let unitStart = offset
    var kind = TokenKind.number
    if offset < bytes.count, isIdentifierByte(bytes[offset]) || continuesLooseWord(at: offset) {
      kind = .duration
      while offset < bytes.count {
        if isIdentifierByte(bytes[offset]) {
          step()
        } else if bytes[offset] >= 0x80, continuesLooseWord(at: offset) {
          stepScalar()
        } else {
          break
        }
      }
    }
    return Token(
      kind: kind, start: start.offset, end: offset,
      range: SourceRange(start: start, end: location), keyword: nil, isIdentifier: false,
      hasFraction: hasFraction, unitStart: unitStart)
  }

  private mutating func scanWord() -> Token {
    let start = location
    if bytes[offset] == .lowerX, let next = peek(1), isDigit(next), isFactorSign(at: offset) {
      step()
      return Token(
        kind: .word, start: start.offset, end: offset,
        range: SourceRange(start: start, end: location), keyword: .x, isIdentifier: false,
        hasFraction: false, unitStart: offset)
    }
    while offset < bytes.count, isIdentifierByte(bytes[offset]) { stepASCII() }
    var isIdentifier = true
    while continuesLooseWord(at: offset) {
      isIdentifier = false
      if bytes[offset] >= 0x80 { stepScalar() } else { step() }
      while offset < bytes.count, isIdentifierByte(bytes[offset]) { stepASCII() }
    }
    let keyword = Keyword.matching(slice(start.offset, offset))
    return Token(
      kind: .word, start: start.offset, end: offset,
      range: SourceRange(start: start, end: location), keyword: keyword,
      isIdentifier: isIdentifier && keyword == nil, hasFraction: false, unitStart: offset)
  }

  /// Whether the `x` at `position` is the factor sign: the identifier run it starts is `x`
  /// and digits only (`x1.5`, `x 3` aside), not a name such as `x509Error`.
  private func isFactorSign(at position: Int) -> Bool {
    var index = position + 1
    while index < bytes.count, isIdentifierByte(bytes[index]) {
      if !isDigit(bytes[index]) { return false }
      index += 1
    }
    return true
  }

  /// Reads a run of characters that cannot start a token and reports it once: a run of bytes
  /// that are not UTF-8, one invisible character (named), or a run of visible ones.
  private mutating func scanBadCharacters() -> Token {
    let start = location
    let (first, _) = byteRun(at: offset)
    let scalar: Unicode.Scalar
    switch first {
    case .invalid:
      while offset < bytes.count, case .invalid = byteRun(at: offset).0 { stepScalar() }
      let range = SourceRange(start: start, end: location)
      reportError(at: range) { $0.invalidUTF8(from: range.start, to: range.end) }
      return Token(
        kind: .error, start: start.offset, end: offset, range: range, keyword: nil,
        isIdentifier: false, hasFraction: false, unitStart: offset)
    case .invisible(let invisible):
      scalar = invisible
      // One diagnostic for a run (of NULs, say), named by its first character.
      stepScalar()
      while offset < bytes.count, bytes[offset] != .tab, bytes[offset] != .lineFeed,
        bytes[offset] != .carriageReturn || peek(1) != .lineFeed,
        case .invisible = byteRun(at: offset).0
      {
        stepScalar()
      }
    case .visible(let visible):
      scalar = visible
      scanVisibleBadCharacters()
    }
    let range = SourceRange(start: start, end: location)
    reportError(at: range) { _ in .unexpectedCharacter(scalar) }
    return Token(
      kind: .error, start: start.offset, end: offset, range: range, keyword: nil,
      isIdentifier: false, hasFraction: false, unitStart: offset)
  }

  /// Moves past a run of visible characters that cannot start a token.
  private mutating func scanVisibleBadCharacters() {
    while offset < bytes.count {
      let byte = bytes[offset]
      if byte >= 0x80, !continuesWordOutsideASCII(at: offset) { break }
      if byte < 0x20 || byte == 0x7F { break }  // an invisible character: its own diagnostic
      if byte == .space || byte == .tab || byte == .lineFeed || byte == .carriageReturn
        || byte == .hash || isIdentifierByte(byte)
      {
        break
      }
      switch byte {
      case .percentSign, .commaSign, .plusSign, .equalsSign, .leftBraceSign, .rightBraceSign:
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
  fileprivate static let hyphen = UInt8(ascii: "-")
  fileprivate static let dot = UInt8(ascii: ".")
  fileprivate static let equalsSign = UInt8(ascii: "=")
  fileprivate static let leftBraceSign = UInt8(ascii: "{")
  fileprivate static let rightBraceSign = UInt8(ascii: "}")
  fileprivate static let zero = UInt8(ascii: "0")
  fileprivate static let nine = UInt8(ascii: "9")
  fileprivate static let lowerA = UInt8(ascii: "a")
  fileprivate static let lowerX = UInt8(ascii: "x")
  fileprivate static let lowerZ = UInt8(ascii: "z")
  fileprivate static let upperA = UInt8(ascii: "A")
  fileprivate static let upperZ = UInt8(ascii: "Z")
  fileprivate static let underscore = UInt8(ascii: "_")
}
