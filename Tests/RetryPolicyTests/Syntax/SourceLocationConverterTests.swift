import Testing

@testable import RetryPolicy

/// The one position converter: byte offsets to the language's lines and columns and to an
/// editor's lines and UTF-16 characters, and back.
@Suite("Source location converter")
struct SourceLocationConverterTests {
  static let texts = [
    "policy p = retry 3 bakoff 1s\n",
    "\u{FEFF}policy é = retry 3 😀 bakoff 1s\r\npolicy q = retry 2 e\u{301} jiter 5%\n",
    "# 😀😀 e\u{301}\npolicy e = retry 3 😀 e\u{301} bakoff 1s\n",
    "policy p = retry 3\rpolicy q = retry 2 bakoff 1s\n",
    "policy p {\r\n  retry 3 on 600\r\n  retry 1 delay 2d\r\n  within 0s\r\n}\r\n",
    "retry 3 backoff 1s x0 jitter 200%\n\n\nretry 2 on serverErorr",
    "policy p = retry 3 on " + String(repeating: "é", count: 5000) + " bakoff 1s\n",
  ]

  @Test(
    "the language's lines and columns are those the lexer gives, at every diagnostic",
    arguments: texts)
  func agreesWithTheLexer(text: String) {
    let converter = SourceLocationConverter(text: text)
    for diagnostic in analyze(policyFile: text).diagnostics + analyze(policy: text).diagnostics {
      for location in [diagnostic.range.start, diagnostic.range.end] {
        #expect(converter.location(ofOffset: location.offset) == location, "\(diagnostic)")
        #expect(
          converter.offset(ofLine: location.line, column: location.column) == location.offset,
          "\(diagnostic)")
      }
    }
  }

  @Test("a column on a line longer than a checkpoint stride counts every scalar before it")
  func longLinesCountEveryScalar() {
    let piece = "aé😀e\u{301}\r"
    let text =
      "\u{FEFF}" + String(repeating: piece, count: 1500) + "\n"
      + String(repeating: piece, count: 2000)
      + "\r\n" + String(repeating: "😀", count: 3000)
    let converter = SourceLocationConverter(text: text)
    var offset = 3
    var line = 1
    var column = 1
    // Checked in plain code, the first mismatches reported: an `#expect` per scalar made
    // this one of the slowest tests.
    var mismatches: [String] = []
    for scalar in text.unicodeScalars.dropFirst() {
      let expected = SourceLocation(line: line, column: column, offset: offset)
      let found = converter.location(ofOffset: offset)
      if found != expected, mismatches.count < 5 { mismatches.append("\(found) ≠ \(expected)") }
      offset += String(scalar).utf8.count
      if scalar == "\n" {
        line += 1
        column = 1
      } else {
        column += 1
      }
    }
    #expect(mismatches == [])
    #expect(converter.location(ofOffset: offset).column == column)
  }

  @Test("the renderer prints the converter's line and column of a diagnostic's offset")
  func rendererReadsTheConverter() {
    let text = "policy a = retry 3\rdelay 1s 😀 x\npolicy b = retry 2\n"
    // A place whose line and column disagree with its offset: the offset decides.
    let offset = Array("policy a = retry 3\rdelay 1s 😀 ".utf8).count
    let wrong = SourceLocation(line: 7, column: 3, offset: offset)
    let diagnostic = Diagnostic(
      id: DiagnosticID(tool: "test-only"), severity: .warning, summary: "x here",
      at: SourceRange(start: wrong, end: wrong))
    let rendered = DiagnosticRenderer(source: text, sourceName: "a.retry").render(diagnostic)
    let converter = SourceLocationConverter(text: text)
    #expect(converter.location(ofOffset: offset).line == 1)
    #expect(converter.location(ofOffset: offset).column == 31)
    #expect(rendered.hasPrefix("a.retry:1:31: warning: x here\n"))
  }

  @Test("an editor's position counts UTF-16 code units, and a lone CR ends its line")
  func editorPositions() {
    let converter = SourceLocationConverter(text: "a😀b\rcd\r\ne\nf")
    #expect(converter.position(ofOffset: 5) == .init(line: 0, character: 3))  // b
    #expect(converter.position(ofOffset: 7) == .init(line: 1, character: 0))  // c, after CR
    #expect(converter.position(ofOffset: 11) == .init(line: 2, character: 0))  // e
    #expect(converter.offset(of: .init(line: 1, character: 9)) == 9)  // clamped before CR LF
    #expect(converter.offset(of: .init(line: 0, character: 9)) == 6)  // clamped before CR
    // The language's lines: a lone CR is a character of its line.
    #expect(converter.location(ofOffset: 7) == SourceLocation(line: 1, column: 5, offset: 7))
    #expect(converter.location(ofOffset: 11) == SourceLocation(line: 2, column: 1, offset: 11))
    #expect(converter.position(of: SourceLocation(line: 1, column: 5, offset: 0)).line == 1)
  }

  @Test("offsets out of the text are clamped, and nothing traps")
  func clamping() {
    let converter = SourceLocationConverter(text: "ab\n")
    #expect(converter.location(ofOffset: -4) == SourceLocation(line: 1, column: 1, offset: 0))
    #expect(converter.location(ofOffset: 99) == SourceLocation(line: 2, column: 1, offset: 3))
    #expect(converter.offset(ofLine: 0, column: 5) == 0)
    #expect(converter.offset(ofLine: 9, column: 5) == 3)
    #expect(converter.position(ofOffset: 99) == .init(line: 1, character: 0))
    #expect(SourceLocationConverter(text: "").position(ofOffset: 0) == .init(line: 0, character: 0))
  }
}
