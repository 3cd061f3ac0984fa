import Foundation
import Testing

@testable import RetryPolicy

/// Policy text as bytes: UTF-8 that is not, a byte order mark, line ends, and characters a
/// reader cannot see.
@Suite("Source bytes")
struct SourceBytesTests {
  /// `policy p = retry 3  # ` then `bytes` in the comment.
  static func commented(_ bytes: [UInt8]) -> [UInt8] {
    Array("policy p = retry 3  # ".utf8) + bytes + Array(" end\n".utf8)
  }

  @Test(
    "bytes that are not UTF-8 are an error at their place, in a comment too",
    arguments: [
      [0xFF], [0xC0, 0xAF], [0xE0, 0x80, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80],
      [0x80], [0xE2, 0x82], [0xF8, 0x88, 0x80, 0x80, 0x80],
    ] as [[UInt8]])
  func invalidInComment(bytes: [UInt8]) throws {
    let analysis = analyze(policyFile: Self.commented(bytes))
    let diagnostic = try #require(analysis.diagnostics.first)
    #expect(analysis.diagnostics.map(\.id) == [.invalidUTF8])
    #expect("\(diagnostic.line):\(diagnostic.column)" == "1:23")
    #expect(analysis.policies.isEmpty)
  }

  @Test("bytes that are not UTF-8 between tokens are an error, and the check goes on")
  func invalidBetweenTokens() {
    let bytes =
      Array("policy p = retry 3 ".utf8) + [0xC0, 0xAF] + Array(" delay 5d\n".utf8)
    let analysis = analyze(policyFile: bytes)
    #expect(analysis.diagnostics.map(\.id) == [.invalidUTF8, .unknownUnit])
    #expect(analysis.diagnostics.first?.message.contains("\\xC0\\xAF") == true)
    // One column per ill-formed part, as a decoded string counts it.
    #expect(analysis.diagnostics.map(\.column) == [20, 30])
  }

  @Test("columns after bytes that are not UTF-8 agree with the decoded text's scalars")
  func columnsMatchDecoding() {
    var random = SystemRandomNumberGenerator()
    for _ in 0..<200 {
      let junk = (0..<Int.random(in: 1...12, using: &random)).map { _ in
        UInt8.random(in: 0x80...0xFF, using: &random)
      }
      let bytes = Self.commented(junk) + Array("policy q = retry 3 @\n".utf8)
      let analysis = analyze(policyFile: bytes)
      #expect(analysis.diagnostics.last.map { "\($0.line):\($0.column)" } == "2:20")
      let firstLine = String(decoding: Self.commented(junk), as: UTF8.self)
        .split(separator: "\n").first.map { $0.unicodeScalars.count }
      #expect(firstLine == 22 + String(decoding: junk, as: UTF8.self).unicodeScalars.count + 4)
    }
  }

  @Test("a literal U+FFFD is an ordinary character: fine in a comment, unexpected elsewhere")
  func replacementCharacter() {
    #expect(analyze(policyFile: "policy p = retry 3  # \u{FFFD} ok\n").diagnostics.isEmpty)
    let outside = analyze(policyFile: "policy p = retry 3 \u{FFFD}\n")
    #expect(outside.diagnostics.map(\.id) == [.unexpectedCharacter])
    #expect(outside.diagnostics.first?.message.hasPrefix("unexpected character '\u{FFFD}'") == true)
  }

  @Test("a UTF-8 byte order mark at the start is skipped; columns start after it")
  func byteOrderMark() {
    let bytes: [UInt8] = [0xEF, 0xBB, 0xBF] + Array("policy p = retry 3 @\n".utf8)
    let analysis = analyze(policyFile: bytes)
    #expect(analysis.diagnostics.map { "\($0.line):\($0.column)" } == ["1:20"])
    let rendered = DiagnosticRenderer(bytes: bytes, sourceName: "f").render(analysis.diagnostics)
    #expect(rendered.split(separator: "\n")[1] == "policy p = retry 3 @")
    #expect(analyze(policyFile: "\u{FEFF}policy p = retry 3\n").diagnostics.isEmpty)
    // Anywhere else it is a character a reader cannot see.
    let inside = analyze(policyFile: "policy p = retry 3 \u{FEFF}\n")
    #expect(inside.diagnostics.map(\.id) == [.unexpectedCharacter])
  }

  @Test("a lone CR is an error, not a blank; CR LF and LF are line ends")
  func loneCarriageReturn() throws {
    let lone = analyze(policyFile: "policy p = retry 3\rpolicy q = retry 2\n")
    let diagnostic = try #require(lone.diagnostics.first)
    #expect(diagnostic.id == .unexpectedCharacter)
    #expect(diagnostic.message.contains("U+000D (carriage return)"))
    #expect("\(diagnostic.line):\(diagnostic.column)" == "1:19")
    #expect(analyze(policyFile: "policy p = retry 3\r\npolicy q = retry 2\r\n").diagnostics.isEmpty)
    #expect(analyze(policyFile: "policy p = retry 3  # note\r\n").diagnostics.isEmpty)
    #expect(analyze(policyFile: "policy p = retry 3  # note\rmore\n").hasErrors)
    // A run of lone CRs is one error; the CR of a CR LF after it ends the line.
    let run = analyze(policyFile: "policy p = retry 3\r\r\r\npolicy q = retry 2\n")
    #expect(run.diagnostics.map { "\($0.line):\($0.column)" } == ["1:19"])
  }

  @Test(
    "invisible characters are named by code point and name, never shown",
    arguments: [
      ("\u{00A0}", "U+00A0 (no-break space)"), ("\u{200B}", "U+200B (zero width space)"),
      ("\u{202E}", "U+202E (right-to-left override)"),
      ("\u{2066}", "U+2066 (left-to-right isolate)"),
      ("\u{0000}", "U+0000 (null)"), ("\u{3000}", "U+3000 (ideographic space)"),
    ])
  func invisibleCharacters(character: String, named: String) throws {
    let analysis = analyze(policyFile: "policy p = retry 3 on serverError\(character) delay 1s\n")
    let diagnostic = try #require(analysis.diagnostics.first)
    #expect(diagnostic.id == .unexpectedCharacter)
    #expect(diagnostic.message.hasPrefix("unexpected character \(named)"))
    #expect(!diagnostic.message.unicodeScalars.contains { $0 == character.unicodeScalars.first })
    #expect("\(diagnostic.line):\(diagnostic.column)" == "1:34")
  }

  @Test("a direction-changing character is an error in a comment too; other invisible ones are not")
  func trojanSourceInComments() throws {
    let override = analyze(policyFile: "policy p = retry 3  # admin \u{202E} }\n")
    let diagnostic = try #require(override.diagnostics.first)
    #expect(
      diagnostic.message.hasPrefix(
        "unexpected character U+202E (right-to-left override) in a comment"))
    #expect(diagnostic.column == 29)
    #expect(analyze(policyFile: "policy p = retry 3  # a\u{00A0}b \u{200B}\n").diagnostics.isEmpty)
  }

  @Test("source text quoted in a message has its invisible characters escaped")
  func messagesEscape() throws {
    let analysis = analyze(policyFile: "policy p = retry 3 on sérver\u{202E}x\n")
    let messages = analysis.diagnostics.map(\.message)
    #expect(messages.allSatisfy { !$0.unicodeScalars.contains("\u{202E}") })
    #expect(DiagnosticMessage.excerpt("a\u{202E}b\u{200B}") == "a<U+202E>b<U+200B>")
  }

  @Test(
    "the marker lands under the right cell after wide and combining characters",
    arguments: [
      ("policy p = retry 3  # 東京\npolicy 東京 = retry 3\n", 2, "policy ", "東京"),
      ("policy p = retry 3 on e\u{0301}x @\n", 1, "policy p = retry 3 on e\u{0301}x ", "@"),
      ("policy p = retry 3 on 😀 @\n", 1, "policy p = retry 3 on 😀 ", "@"),
    ])
  func markerUnderCell(source: String, line: Int, before: String, at: String) throws {
    let analysis = analyze(policyFile: source)
    let diagnostic = try #require(
      analysis.diagnostics.first { $0.line == line && $0.message.contains(String(at.prefix(1))) })
    let lines = DiagnosticRenderer(source: source, sourceName: "f").render(diagnostic)
      .split(separator: "\n", omittingEmptySubsequences: false)
    let cells = before.unicodeScalars.reduce(0) { $0 + SourceCharacters.cellWidth($1) }
    #expect(lines[2] == Substring(String(repeating: " ", count: cells) + "^"))
  }

  @Test("a long line of escaped characters is cut to the shown width in cells")
  func escapedLineIsCut() throws {
    let source = "policy p = retry 3  # " + String(repeating: "\u{202E}", count: 500) + "\n"
    let analysis = analyze(policyFile: source)
    let renderer = DiagnosticRenderer(source: source, sourceName: "f")
    for diagnostic in analysis.diagnostics {
      let lines = renderer.render(diagnostic).split(separator: "\n")
      #expect(lines[1].count <= DiagnosticRenderer.maximumShownColumns + 2)
      let marker = lines[2].count - 1
      let shown = Array(lines[1])
      #expect(marker + 8 <= shown.count)
      if diagnostic.id == .unexpectedCharacter {
        #expect(String(shown[marker..<marker + 8]) == "<U+202E>")
      }
    }
  }

  @Test("the shown line writes invisible characters as <U+XXXX>, with the marker after them")
  func shownLineEscapes() throws {
    let source = "policy p = retry 3 on a\u{202E}b @\n"
    let analysis = analyze(policyFile: source)
    let diagnostic = try #require(analysis.diagnostics.last)
    let lines = DiagnosticRenderer(source: source, sourceName: "f").render(diagnostic)
      .split(separator: "\n", omittingEmptySubsequences: false)
    #expect(lines[1] == "policy p = retry 3 on a<U+202E>b @")
    #expect(lines[2] == Substring(String(repeating: " ", count: 33) + "^"))
  }

  @Test("PolicyFile(contentsOf:) reads the file as bytes: invalid UTF-8 is an error")
  func policyFileReadsBytes() throws {
    let url = FileManager.default.temporaryDirectory
      .appendingPathComponent("retry-policy-\(UUID().uuidString).retry")
    defer { try? FileManager.default.removeItem(at: url) }
    try Data(Array("policy a = retry 3  # caf".utf8) + [0xE9, 0x0A]).write(to: url)
    #expect {
      try PolicyFile(contentsOf: url)
    } throws: { error in
      (error as? PolicyCompileError)?.diagnostics.map(\.id) == [.invalidUTF8]
    }
    try Data([0xEF, 0xBB, 0xBF] + Array("policy a = retry 3\n".utf8)).write(to: url)
    #expect(try PolicyFile(contentsOf: url)["a"] != nil)
  }
}
