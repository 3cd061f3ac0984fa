import RetryPolicy
import RetryPolicyEngines
import RetryPolicySimulation

/// Converts an option's text into its typed value, or says what a valid value looks like.
///
/// Numbers are read as plain decimals only (`12`, `0.5`): no sign, no hexadecimal, no
/// exponent, no `inf` or `nan`, so that `--rate 0x10` is an error, not 16. Every parser
/// checks its range, so a command gets a value it can use without further checks.
struct ValueParser<Value> {
  /// What a valid value looks like, for the error: `a whole number from 1 to 1000000`.
  var expected: String
  /// The values accepted, when there is a fixed list (help shows them; a typo gets a
  /// "did you mean").
  var choices: [String]?
  /// The value of a text given to an option (`--seed`), or the error that says why not.
  private var read: (_ text: String, _ option: String) throws(UsageError) -> Value

  /// A parser that converts valid texts and reports the others as expecting `expected`.
  init(expected: String, choices: [String]?, convert: @escaping (String) -> Value?) {
    self.expected = expected
    self.choices = choices
    read = { (text: String, option: String) throws(UsageError) -> Value in
      if let value = convert(text) { return value }
      let suggestion = choices.flatMap { Suggestion.nearest(to: text, in: $0) }
      throw .invalidValue(
        option: option, value: text, expected: expected, suggestion: suggestion)
    }
  }

  /// A parser of a small language of its own, which reports its own errors.
  init(expected: String, reading read: @escaping (String) throws(UsageError) -> Value) {
    self.expected = expected
    choices = nil
    self.read = { (text: String, _: String) throws(UsageError) -> Value in try read(text) }
  }

  /// The value of `text`, given to `option`; an ``UsageError/invalidValue`` when invalid.
  func parse(_ text: String, option: String) throws(UsageError) -> Value {
    try read(text, option)
  }
}

extension ValueParser where Value == String {
  /// Any text.
  static var text: ValueParser {
    ValueParser(expected: "a value", choices: nil) { $0 }
  }

  /// Any text that is not empty.
  static func nonEmpty(_ expected: String) -> ValueParser {
    ValueParser(expected: expected, choices: nil) { $0.isEmpty ? nil : $0 }
  }

}

extension ValueParser where Value == Set<String> {
  /// A comma-separated list of names, blanks ignored: `a, b,c`.
  static var nameList: ValueParser {
    ValueParser(expected: "a comma-separated list of names", choices: nil) {
      Set($0.split(separator: ",").map { $0.filter { $0 != " " } }.filter { !$0.isEmpty })
    }
  }
}

extension ValueParser {
  /// One of a fixed set of words, each standing for a value.
  static func choice(_ values: KeyValuePairs<String, Value>) -> ValueParser {
    let words = values.map(\.key)
    return ValueParser(
      expected: words.map { "'\($0)'" }.joined(separator: " or "), choices: words
    ) { text in values.first { $0.key == text }?.value }
  }
}

extension ValueParser where Value == Int {
  /// A whole number in `range`, written in decimal digits.
  static func integer(in range: ClosedRange<Int>) -> ValueParser {
    ValueParser(
      expected: "a whole number from \(range.lowerBound) to \(range.upperBound)", choices: nil
    ) { text in
      guard DecimalText.isWholeNumber(text), let value = Int(text), range.contains(value) else {
        return nil
      }
      return value
    }
  }
}

extension ValueParser where Value == UInt64 {
  /// A seed: a whole number from 0 to `UInt64.max`, in decimal digits.
  static var seed: ValueParser {
    ValueParser(expected: "a whole number from 0 to \(UInt64.max)", choices: nil) { text in
      DecimalText.isWholeNumber(text) ? UInt64(text) : nil
    }
  }
}

extension ValueParser where Value == Double {
  /// A number in `range`, written as decimal digits with an optional fraction (`0.001`).
  static func decimal(in range: ClosedRange<Double>) -> ValueParser {
    ValueParser(
      expected: "a number from \(NumberText.decimal(range.lowerBound)) to "
        + NumberText.decimal(range.upperBound), choices: nil
    ) { text in
      guard DecimalText.isDecimal(text), let value = Double(text), range.contains(value) else {
        return nil
      }
      return value
    }
  }

  /// A percentage from 0% to 100%, as a fraction from 0 to 1: `25%` is 0.25.
  static var percentage: ValueParser {
    ValueParser(expected: "a percentage from 0% to 100%", choices: nil) { text in
      guard text.hasSuffix("%") else { return nil }
      let number = String(text.dropLast())
      guard DecimalText.isDecimal(number), let value = Double(number), (0...100).contains(value)
      else { return nil }
      return value / 100
    }
  }
}

extension ValueParser where Value == Duration {
  /// A duration above zero in the language's units, `50ms`, `1.5s`, `10m`, `2h`, at most
  /// 10000h.
  static func duration(example: String) -> ValueParser {
    ValueParser(expected: "a duration such as \(example)", choices: nil) { text in
      guard let value = OutcomeScript.parseDuration(Substring(text)), value > .zero else {
        return nil
      }
      return value
    }
  }
}

/// The decimal forms the command line accepts.
enum DecimalText {
  /// Whether the text is one or more ASCII digits.
  static func isWholeNumber(_ text: some StringProtocol) -> Bool {
    !text.isEmpty && text.utf8.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
  }

  /// Whether the text is digits with an optional fraction: `12`, `0.5`; not `.5`, `5.`,
  /// `+5`, `1e3` or `0x10`.
  static func isDecimal(_ text: some StringProtocol) -> Bool {
    let parts = text.split(separator: ".", omittingEmptySubsequences: false)
    guard parts.count == 1 || parts.count == 2 else { return false }
    return parts.allSatisfy { isWholeNumber($0) }
  }
}
