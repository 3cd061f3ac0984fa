import Testing

@testable import RetryPolicy

/// The tokens of a text (without the final end), its diagnostics and its comments.
private func lex(_ source: String) -> (
  tokens: [(kind: TokenKind, text: String, token: Token)], diagnostics: [Diagnostic],
  comments: [CommentSyntax]
) {
  Array(source.utf8).withUnsafeBufferPointer { bytes in
    var lexer = Lexer(bytes: bytes)
    var tokens: [(kind: TokenKind, text: String, token: Token)] = []
    while true {
      let token = lexer.next()
      if token.kind == .end { break }
      tokens.append((token.kind, lexer.text(token.start, token.end), token))
    }
    return (tokens, Array(lexer.diagnostics), lexer.comments)
  }
}

@Suite("Lexer")
struct LexerTests {
  @Test(
    "each kind of token is read from its text",
    arguments: [
      ("retry", TokenKind.word), ("serverError", .word), ("_name9", .word), ("5", .number),
      ("1.5", .number), ("250ms", .duration), ("1.5s", .duration), ("5d", .duration),
      ("%", .percent), (",", .comma), ("+", .plus), ("=", .equals), ("{", .leftBrace),
      ("}", .rightBrace), ("\n", .newline), ("\r\n", .newline), (";", .error),
      ("1.", .error),
    ])
  func tokenKinds(text: String, kind: TokenKind) {
    let result = lex(text)
    #expect(result.tokens.map(\.kind) == [kind])
    #expect(result.tokens.first?.text == text)
  }

  @Test("a comment runs to the end of its line and is kept apart from the tokens")
  func comments() {
    let result = lex("retry 3 # three times\r\n# own line\n")
    #expect(result.tokens.map(\.kind) == [.word, .number, .newline, .newline])
    #expect(result.comments.map(\.text) == ["# three times", "# own line"])
    #expect(result.comments.map(\.range.start.description) == ["1:9", "2:1"])
    #expect(result.diagnostics.isEmpty)
  }

  @Test("keywords are recognized and other words are names")
  func keywords() {
    for keyword in Keyword.allCases {
      let token = lex(keyword.rawValue).tokens.first?.token
      #expect(token?.keyword == keyword)
      #expect(token?.isIdentifier == false)
    }
    let name = lex("retryAfter").tokens.first?.token
    #expect(name?.keyword == nil)
    #expect(name?.isIdentifier == true)
  }

  @Test("'x' directly before a digit is the factor sign, and 'x 3' reads the same")
  func factorSign() {
    #expect(lex("x1.5").tokens.map(\.text) == ["x", "1.5"])
    #expect(lex("x1.5").tokens.first?.token.keyword == .x)
    #expect(lex("x 3").tokens.map(\.text) == ["x", "3"])
    #expect(lex("xray").tokens.first?.token.keyword == nil)
  }

  @Test("a name that starts with 'x' and digits, such as 'x509Error', stays a name")
  func namesStartingWithXAndDigits() {
    let name = lex("x509Error").tokens
    #expect(name.map(\.text) == ["x509Error"])
    #expect(name.first?.token.isIdentifier == true)
    #expect(lex("x2").tokens.map(\.text) == ["x", "2"])
    #expect(lex("x1.5s").tokens.first?.token.keyword == .x)
  }

  @Test("'retry-after' is one word; other hyphenated words are not identifiers")
  func hyphenatedWords() {
    let retryAfter = lex("retry-after").tokens
    #expect(retryAfter.map(\.text) == ["retry-after"])
    #expect(retryAfter.first?.token.keyword == .retryAfter)
    let other = lex("server-error").tokens
    #expect(other.map(\.text) == ["server-error"])
    #expect(other.first?.token.isIdentifier == false)
  }

  @Test("a duration keeps its number and unit apart")
  func durationParts() throws {
    let token = try #require(lex("1.25ms").tokens.first)
    #expect(token.token.hasFraction)
    #expect(token.token.unitStart == 4)
  }

  @Test("columns count Unicode scalars and offsets count bytes")
  func columnsCountScalars() throws {
    let tokens = lex("retry 3 on caféé delay").tokens
    let delay = try #require(tokens.last)
    #expect(delay.text == "delay")
    #expect(delay.token.range.start.column == 18)
    #expect(delay.token.range.start.offset == 19)
    #expect(tokens[3].token.isIdentifier == false)
  }

  @Test("CR LF ends a line like LF, and a lone CR is an error, not a blank")
  func lineEnds() throws {
    let result = lex("retry 3\r\ndelay 1s\rmax 2s")
    let tokens = result.tokens
    #expect(
      tokens.map(\.kind) == [.word, .number, .newline, .word, .duration, .error, .word, .duration])
    let max = try #require(tokens.first { $0.text == "max" })
    #expect(max.token.range.start.description == "2:10")
    #expect(result.diagnostics.map(\.range.start.description) == ["2:9"])
    #expect(result.diagnostics.first?.message.hasPrefix("unexpected character U+000D") == true)
  }

  @Test("line and column come from byte offsets, over CR LF, multi-byte words and comments")
  func locationsFromOffsets() throws {
    // "é" is 2 bytes, "→" 3 and "😀" 4: each is one column.
    let result = lex("retry 3 on café-😀 # → é\r\n\r\n  delay → 1s\n😀x max 2s")
    let tokens = result.tokens
    let texts = tokens.map(\.text)
    #expect(
      texts == [
        "retry", "3", "on", "café-😀", "\r\n", "\r\n", "delay", "→", "1s", "\n", "😀", "x",
        "max", "2s",
      ])
    let ranges = tokens.map(\.token.range.description)
    #expect(ranges[3] == "1:12-1:18")  // the word: 6 scalars, 11 bytes
    #expect(ranges[4] == "1:24-1:26")  // CR LF after the comment's multi-byte characters
    #expect(ranges[5] == "2:1-2:3")
    #expect(ranges[6] == "3:3-3:8")
    #expect(ranges[7] == "3:9-3:10")  // a bad character: one column, three bytes
    #expect(ranges[8] == "3:11-3:13")
    #expect(ranges[10] == "4:1-4:2")
    #expect(ranges[11] == "4:2-4:3")
    #expect(ranges[13] == "4:8-4:10")
    #expect(tokens[13].token.range.start.offset == tokens[13].token.start)
    #expect(result.comments.map(\.range.description) == ["1:19-1:24"])
    #expect(result.diagnostics.map(\.range.description) == ["3:9-3:10", "4:1-4:2"])
  }

  @Test("a NUL byte is an unexpected character shown as its code point")
  func nulByte() {
    let result = lex("retry\u{0}\u{0}\u{0} 3")
    #expect(result.tokens.map(\.kind) == [.word, .error, .number])
    #expect(result.diagnostics.count == 1)
    #expect(result.diagnostics.first?.id == .unexpectedCharacter)
    #expect(
      result.diagnostics.first?.message
        == "unexpected character U+0000 (null); it cannot be seen, remove it or write a space")
    #expect(result.diagnostics.first?.range.start.description == "1:6")
  }

  @Test("U+FFFD in a string is an ordinary character: unexpected between tokens")
  func replacementCharacter() {
    let invalid = String(decoding: [0x72, 0x20, 0xFF, 0xFE, 0x20, 0x33], as: UTF8.self)
    let result = lex(invalid)
    #expect(result.diagnostics.map(\.id) == [.unexpectedCharacter])
    #expect(result.diagnostics.first?.message == "unexpected character '\u{FFFD}' (U+FFFD)")
    #expect(result.diagnostics.first?.range.start.description == "1:3")
    #expect(result.tokens.last?.kind == .number)
  }

  @Test("a character of another script is shown with its code point")
  func otherScript() {
    let result = lex("retry 3 é")
    #expect(result.diagnostics.first?.message == "unexpected character 'é' (U+00E9)")
  }

  @Test("a number with a point and no digit after it is malformed")
  func malformedNumber() {
    let result = lex("delay 1.s")
    #expect(result.diagnostics.map(\.id) == [.malformedNumber])
    #expect(result.diagnostics.first?.range.start.description == "1:7")
    #expect(result.tokens.map(\.kind) == [.word, .error])
  }

  @Test("a megabyte-long line is read in one pass")
  func megabyteLine() {
    let word = String(repeating: "a", count: 1_000_000)
    let result = lex("retry 3 on \(word) # \(word)")
    #expect(result.tokens.count == 4)
    #expect(result.tokens.last?.text.utf8.count == 1_000_000)
    #expect(result.comments.first?.range.end.column == 2_000_015)
  }
}
