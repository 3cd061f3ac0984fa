import Foundation
import RetryPolicyTesting
import Testing

@testable import RetryPolicy

/// A large file is read in parts on several cores.
///
/// The result must be the one a single pass gives, diagnostics (their order, caps and counts)
/// and policies alike.
@Suite("Policy files read in parts")
struct AnalyzeInPartsTests {
  /// The lines a generated file is made of, good and bad.
  ///
  /// Each is a declaration or a stray line that a part may start or end next to; `@` stands
  /// for a number that makes a name unique.
  private static let pieces: [String] = [
    "policy p@ = retry 3 backoff 1s x1.5 jitter 10% max 30s",
    "policy p@ {\n  retry 1 on unauthorized after refreshToken\n  retry 3 on 503, timeout delay 1s\n  within 1m\n}",
    "policy shared = retry 2 immediately",  // the same name in every part
    "policy p@ = retry 3 jiter 5%",  // an unknown clause
    "policy p@ {\n  retry 2 delay 100ms\n",  // no `}`: unterminated at the next policy
    "policy p@ = retry forever delay 1s",  // forever without within
    "stray words here",  // expected policy
    "# policy commented",
    "  policy p@indented = retry 1",  // indented: no part starts here
    "policy\tp@ = retry 2 delay 0s",  // a warning, a tab after policy
    "policy p@ = retry 3 on 600",  // an invalid status code
    "policy p@ = retry 3 on a except a",  // in on and except
    "policy p@ =",  // no line
    "policy p@ = retry 3 $ % delay 2q",  // bad characters, unknown unit
    "",
  ]

  private static func file(seed: UInt64, lines: Int, lineEnd: String, byteOrderMark: Bool)
    -> String
  {
    var random = SeededRandomNumberGenerator(seed: seed)
    var text = byteOrderMark ? "\u{FEFF}" : ""
    for index in 0..<lines {
      let piece = pieces[Int(random.next() % UInt64(pieces.count))]
        .replacingOccurrences(of: "@", with: "\(index)")
      text += piece.replacingOccurrences(of: "\n", with: lineEnd) + lineEnd
    }
    return text
  }

  private static func expectSameAsOnePass(_ text: String, parts: Int) {
    let whole = analyze(
      policyFile: text, vocabulary: .open, maximumParts: 1, minimumPartBytes: 1)
    let inParts = analyze(
      policyFile: text, vocabulary: .open, maximumParts: parts, minimumPartBytes: 64)
    #expect(inParts.diagnostics == whole.diagnostics)
    #expect(inParts.policies == whole.policies)
    #expect(inParts.omittedErrorCount == whole.omittedErrorCount)
    #expect(inParts.omittedWarningCount == whole.omittedWarningCount)
    #expect(inParts.syntax.range == whole.syntax.range)
  }

  @Test("a file is split at lines that start with 'policy', with their line numbers")
  func splitsAtDeclarations() {
    let text =
      "policy a = retry 1\n  policy b = retry 2\n# x\npolicy c {\n  retry 3\n}\n"
      + "policy\td = retry 4\n"
    let bytes = Array(text.utf8)
    let starts = bytes.withUnsafeBufferPointer {
      FileParting(maximumParts: 8, minimumPartBytes: 1).starts(of: $0)
    }
    let lines = starts.map(\.line)
    let words = starts.map { start in
      String(decoding: bytes[start.offset..<start.offset + 8], as: UTF8.self)
    }
    #expect(lines == [1, 4, 7])
    #expect(words == ["policy a", "policy c", "policy\td"])
  }

  @Test("a small file is read in one pass")
  func smallFileIsOnePart() {
    let bytes = Array("policy a = retry 1\npolicy b = retry 2\n".utf8)
    let starts = bytes.withUnsafeBufferPointer {
      FileParting(maximumParts: 8, minimumPartBytes: 512 * 1024).starts(of: $0)
    }
    #expect(starts.count == 1)
  }

  @Test(
    "read in parts, a file gives what one pass gives",
    arguments: [
      (seed: 1, lines: 60, lineEnd: "\n", byteOrderMark: false),
      (seed: 2, lines: 400, lineEnd: "\n", byteOrderMark: true),
      (seed: 3, lines: 400, lineEnd: "\r\n", byteOrderMark: false),
      (seed: 4, lines: 3_000, lineEnd: "\n", byteOrderMark: false),  // past the caps of 100
      (seed: 5, lines: 9, lineEnd: "\n", byteOrderMark: false),
    ])
  func sameAsOnePass(seed: Int, lines: Int, lineEnd: String, byteOrderMark: Bool) {
    let text = Self.file(
      seed: UInt64(seed), lines: lines, lineEnd: lineEnd, byteOrderMark: byteOrderMark)
    let parts = Array(text.utf8).withUnsafeBufferPointer {
      FileParting(maximumParts: 8, minimumPartBytes: 64).starts(of: $0)
    }
    #expect(parts.count > 1, "the file must be split for the test to mean anything")
    for count in [2, 3, 8] { Self.expectSameAsOnePass(text, parts: count) }
  }

  @Test("the public entry points read a large valid file in parts and compile every policy")
  func largeValidFile() throws {
    var text = ""
    for index in 0..<30_000 { text += "policy p\(index) = retry 3 backoff 1s max 30s\n" }
    #expect(text.utf8.count > 2 * 512 * 1024)
    let file = try compile(policyFile: text)
    #expect(file.policies.count == 30_000)
    #expect(file.policies.last?.name == "p29999")
    Self.expectSameAsOnePass(text + "policy p5 = retry 1\n", parts: 4)
  }
}
