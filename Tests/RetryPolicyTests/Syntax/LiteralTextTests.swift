import Testing

@testable import RetryPolicy

@Suite("Literal text")
struct LiteralTextTests {
  @Test(
    "a literal's text reads back as written, inline or not",
    arguments: [
      "", "5", "1.5", "12345678", "123456789", "1234567890.12345", "1234567890.123456",
      "0.000000000000000000000001", "café", "µs",
    ])
  func roundTrip(text: String) {
    let bytes = Array(text.utf8)
    let fromBytes = bytes.withUnsafeBufferPointer { LiteralText($0) }
    #expect(fromBytes.string == text)
    #expect(LiteralText(text) == fromBytes)
    #expect(LiteralText(text).hashValue == fromBytes.hashValue)
  }

  @Test(
    "a literal's bytes read in place are its text, and compare with a bound as its string does",
    arguments: [
      "", "5", "1.5", "100", "100.0", "100.000000001", "99.99", "12345678", "123456789",
      "1234567890.12345", "1234567890.123456", "0.000000000000000000000001",
      "100000000000000000000000", "café",
    ])
  func bytesInPlace(text: String) {
    let literal = LiteralText(text)
    #expect(literal.withUTF8 { Array($0) } == Array(text.utf8))
    for bound in [0, 1, 100, 1000] {
      let exact = Literals.order(of: text, comparedWith: bound)
      #expect(Literals.order(of: literal, comparedWith: bound) == exact)
      // With the value the parser reads beside the digits, as the checker compares them.
      if let value = Double(text) {
        #expect(Literals.order(of: literal, value: value, comparedWith: bound) == exact)
      }
    }
  }

  @Test("texts that differ compare unequal, and the syntax nodes keep their texts")
  func differentTexts() {
    #expect(LiteralText("1.5") != LiteralText("1.50"))
    #expect(LiteralText("123456789012345") != LiteralText("1234567890123456"))
    let here = SourceRange(start: .start, end: .start)
    var number = NumberLiteralSyntax(text: "10", value: 10, range: here)
    #expect(number.text == "10")
    number.text = "10.0"
    #expect(number.text == "10.0")
    let duration = DurationLiteralSyntax(
      number: "1.5", unit: .seconds, duration: .milliseconds(1500), range: here)
    #expect(duration.text == "1.5s")
  }
}
