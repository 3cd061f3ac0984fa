import RetryPolicy
import Testing

/// The words of a clause (`over`, `min`, `for` of `breaker`) out of order or twice: a message
/// that names the clause, the word and the order, at the word, with the move as a fix-it.
@Suite("Words of a clause")
struct ClauseWordTests {
  /// The text with the diagnostic's first fix-it applied.
  static func applying(_ fixIt: FixIt, to text: String) -> String {
    let bytes = Array(text.utf8)
    let start = fixIt.range.start.offset
    let end = fixIt.range.end.offset
    return String(decoding: bytes[..<start], as: UTF8.self) + fixIt.replacement
      + String(decoding: bytes[end...], as: UTF8.self)
  }

  @Test(
    "a misplaced word is reported at the word, and its fix-it moves it where it belongs",
    arguments: [
      (
        "retry 3 breaker 50% for 5s over 10s", "1:28",
        "'over' must come before 'for' in 'breaker'; did you mean 'over 10s for 5s'?",
        "retry 3 breaker 50% over 10s for 5s"
      ),
      (
        "retry 3 breaker 50% min 5 over 1s", "1:27",
        "'over' must come before 'min' in 'breaker'; did you mean 'over 1s min 5'?",
        "retry 3 breaker 50% over 1s min 5"
      ),
      (
        "retry 3 breaker 50% for 5s min 5 within 1m", "1:28",
        "'min' must come before 'for' in 'breaker'; did you mean 'min 5 for 5s'?",
        "retry 3 breaker 50% min 5 for 5s within 1m"
      ),
    ])
  func misplaced(text: String, location: String, message: String, fixed: String) throws {
    let diagnostics = analyze(policy: text).diagnostics
    #expect(diagnostics.count == 1)
    let diagnostic = try #require(diagnostics.first)
    #expect(diagnostic.id == .misplacedWord)
    #expect("\(diagnostic.line):\(diagnostic.column)" == location)
    #expect(diagnostic.message == message)
    let fixIt = try #require(diagnostic.fixIts.first)
    let result = Self.applying(fixIt, to: text)
    #expect(result == fixed)
    #expect(analyze(policy: result).diagnostics.isEmpty)
  }

  @Test("a repeated word is reported at its second use, and the first value counts")
  func repeated() throws {
    let text = "retry 3 breaker 50% over 1s over 2s"
    let diagnostics = analyze(policy: text).diagnostics
    #expect(
      diagnostics.map(\.description) == ["1:29: error: 'over' is given more than once in 'breaker'"]
    )
    #expect(diagnostics.first?.fixIts.isEmpty == true)
  }

  @Test(
    "a keyword word of a clause given twice is repeated, unless it starts its own clause",
    arguments: [
      (
        "retry 3 delay 1s honoring retry-after retry-after",
        ["1:39 repeated-word"]
      ),
      ("retry 3 hedge 2 after 1s after 2s", ["1:26 repeated-word"]),
      // `after refreshToken` is the hook clause, which means nothing under `hedge`.
      ("retry 3 hedge 2 after 1s after refreshToken", ["1:26 hedge-conflict"]),
    ])
  func repeatedKeyword(text: String, expected: [String]) {
    #expect(diagnosticsOf(text) == expected)
  }

  @Test("the words stay names outside their clause")
  func wordsAreNames() {
    #expect(analyze(policy: "retry 3 on over, min after for").diagnostics.isEmpty)
  }
}
