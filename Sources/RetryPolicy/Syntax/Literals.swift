// The values of literals: numbers, counts, durations and their units.
//
// The parser calls these to give each literal its value; nothing here reports a diagnostic or
// knows about tokens. Every reader is total: a value too large to represent is nil, never a trap.

/// Readers for the literals of the language.
enum Literals {
  /// The value of a number's digits (`1.5`, `10`), or nil when it is not finite.
  static func double(_ digits: UnsafeBufferPointer<UInt8>) -> Double? {
    if digits.count <= 16 {
      // At most 15 significant digits: mantissa and power of ten are exact, so one division
      // rounds correctly.
      var mantissa: Int64 = 0
      var fractionDigits = 0
      var isFraction = false
      for byte in digits {
        if byte == UInt8(ascii: ".") {
          isFraction = true
          continue
        }
        mantissa = mantissa &* 10 &+ Int64(byte &- UInt8(ascii: "0"))
        if isFraction { fractionDigits += 1 }
      }
      if mantissa < 1 << 53, fractionDigits < powersOfTen.count {
        return Double(mantissa) / powersOfTen[fractionDigits]
      }
    }
    guard let value = Double(String(decoding: digits, as: UTF8.self)), value.isFinite else {
      return nil
    }
    return value
  }

  private static let powersOfTen: [Double] = (0...16).map { exponent in
    var value = 1.0
    for _ in 0..<exponent { value *= 10 }
    return value
  }

  /// The value of a run of decimal digits, or nil when it overflows `Int`.
  static func integer(_ digits: UnsafeBufferPointer<UInt8>) -> Int? {
    var value = 0
    for byte in digits {
      let (times, overflow) = value.multipliedReportingOverflow(by: 10)
      if overflow { return nil }
      let (sum, carry) = times.addingReportingOverflow(Int(byte &- UInt8(ascii: "0")))
      if carry { return nil }
      value = sum
    }
    return value
  }

  /// The exact duration of `digits` units, rounded to the nanosecond; nil when too large.
  static func duration(_ digits: UnsafeBufferPointer<UInt8>, nanosecondsPerUnit: Int64)
    -> Duration?
  {
    var whole: Int64 = 0
    var index = 0
    while index < digits.count, digits[index] != UInt8(ascii: ".") {
      let (times, overflow) = whole.multipliedReportingOverflow(by: 10)
      let (sum, carry) = times.addingReportingOverflow(Int64(digits[index] &- UInt8(ascii: "0")))
      if overflow || carry { return nil }
      whole = sum
      index += 1
    }
    // The first nine fraction digits, and whether the rest round them up.
    var fraction: Int64 = 0
    var fractionDigits = 0
    index += 1
    var roundsUp = false
    while index < digits.count {
      let digit = Int64(digits[index] &- UInt8(ascii: "0"))
      if fractionDigits < 9 {
        fraction = fraction * 10 + digit
        fractionDigits += 1
      } else if fractionDigits == 9 {
        roundsUp = digit >= 5
        fractionDigits += 1
      }
      index += 1
    }
    while fractionDigits < 9 {
      fraction *= 10
      fractionDigits += 1
    }
    if roundsUp { fraction += 1 }
    let (wholeNanoseconds, overflow) = whole.multipliedReportingOverflow(by: nanosecondsPerUnit)
    if overflow { return nil }
    // fraction / 10^9 of a unit, in nanoseconds, rounded to nearest: below one unit, so it fits.
    var fractionNanoseconds: Int64 = 0
    if fraction > 0 {
      let product = nanosecondsPerUnit.multipliedFullWidth(by: fraction)
      let (quotient, remainder) = Int64(1_000_000_000).dividingFullWidth(product)
      fractionNanoseconds = quotient + (remainder >= 500_000_000 ? 1 : 0)
    }
    let (total, carry) = wholeNanoseconds.addingReportingOverflow(fractionNanoseconds)
    if carry { return nil }
    return .nanoseconds(total)
  }

  /// How a number as written compares with a whole number.
  enum Order: Equatable {
    case below, equal, above
  }

  /// How `text`, a number as written (digits, optionally a point and digits), compares with
  /// `bound` (0 or more), exactly: `0.99999999999999999999` is below 1 and
  /// `100.0000000000000001` above 100, which a `Double` would round to 1 and 100.
  static func order(of text: String, comparedWith bound: Int) -> Order {
    order(of: text.utf8, comparedWith: bound)
  }

  /// ``order(of:comparedWith:)-(String,_)`` of literal digits, read where they are kept.
  static func order(of digits: LiteralText, comparedWith bound: Int) -> Order {
    digits.withUTF8 { order(of: $0, comparedWith: bound) }
  }

  /// How a number as written, whose value read as a `Double` is `value`, compares with
  /// `bound`: from the value when it is clearly on one side, else exactly from its digits.
  static func order(of digits: LiteralText, value: Double, comparedWith bound: Int) -> Order {
    // A `Double` read from digits is within a relative 2^-52 of them: more than a quarter
    // from a bound (the bounds are small whole numbers), it is on the same side as they are.
    let limit = Double(bound)
    if value < limit - 0.25 { return .below }
    if value > limit + 0.25 { return .above }
    return order(of: digits, comparedWith: bound)
  }

  /// ``order(of:comparedWith:)-(String,_)`` of the UTF-8 bytes of a number as written.
  static func order<Bytes: Sequence<UInt8>>(of bytes: Bytes, comparedWith bound: Int) -> Order {
    // The integer part's value, exact while it fits (any `Int` bound does), and whether any
    // digit after the point is not zero. Nothing is allocated: this runs for every limit.
    var integer: UInt64 = 0
    var isTooLarge = false
    var hasFraction = false
    var isFraction = false
    for byte in bytes {
      if byte == UInt8(ascii: ".") {
        isFraction = true
      } else if isFraction {
        if byte != UInt8(ascii: "0") { hasFraction = true }
      } else if !isTooLarge {
        let (times, overflowTimes) = integer.multipliedReportingOverflow(by: 10)
        let (sum, overflowSum) = times.addingReportingOverflow(UInt64(byte &- UInt8(ascii: "0")))
        if overflowTimes || overflowSum { isTooLarge = true } else { integer = sum }
      }
    }
    let limit = UInt64(max(bound, 0))
    if isTooLarge || integer > limit { return .above }
    if integer < limit { return .below }
    return hasFraction ? .above : .equal
  }

  // MARK: Units

  /// What to suggest for a duration written with a unit the language does not have.
  enum UnitSuggestion: Equatable {
    /// A unit of the same magnitude, such as `s` for `sec`.
    case unit(String)
    /// The same duration in a unit the language has, such as `48h` for `2d`.
    case literal(String)
    /// A unit below the smallest the language has, such as `us`: the name of what it measures.
    case tooSmall(String)
  }

  /// A suggestion for `digits` followed by the unknown `unit`, of the same magnitude.
  ///
  /// Nil when no unit of the same magnitude is near: a suggestion never changes the
  /// duration's magnitude (`2d` suggests `48h`, never `2s`).
  static func suggestion(forUnit unit: String, digits: UnsafeBufferPointer<UInt8>)
    -> UnitSuggestion?
  {
    let lowercased = unit.lowercased()
    if let same = sameMagnitude[lowercased] { return .unit(same) }
    if let hours = longUnits[lowercased] {
      // At most 168 × 3.6 × 10^12 nanoseconds per unit: the product is a constant that fits.
      let nanoseconds = hours * DurationUnit.hours.nanoseconds
      guard let duration = Literals.duration(digits, nanosecondsPerUnit: nanoseconds) else {
        return nil
      }
      return .literal(hoursText(duration))
    }
    if let name = smallUnits[lowercased] { return .tooSmall(name) }
    // A near miss of a long spelling (`secnds`); short units are too close to one another for
    // an edit to say which was meant (`d` is one edit from `s`, `m` and `h`).
    guard unit.unicodeScalars.count >= 3 else { return nil }
    let spellings = sameMagnitude.keys.filter { $0.count >= 3 }.sorted()
    guard let nearest = Suggestion.nearest(to: lowercased, in: spellings) else { return nil }
    return sameMagnitude[nearest].map { .unit($0) }
  }

  /// `duration` in whole hours (`48h`), else in the language's own notation (`864s`).
  private static func hoursText(_ duration: Duration) -> String {
    let (seconds, attoseconds) = duration.components
    guard attoseconds == 0, seconds % 3600 == 0 else { return duration.policyText }
    return "\(seconds / 3600)h"
  }

  /// Spellings of the language's units.
  private static let sameMagnitude: [String: String] = [
    "sec": "s", "secs": "s", "second": "s", "seconds": "s",
    "min": "m", "mins": "m", "minute": "m", "minutes": "m",
    "hr": "h", "hrs": "h", "hour": "h", "hours": "h",
    "msec": "ms", "msecs": "ms", "millis": "ms", "millisecond": "ms", "milliseconds": "ms",
  ]

  /// Units above the largest the language has, with their length in hours.
  private static let longUnits: [String: Int64] = [
    "d": 24, "day": 24, "days": 24, "w": 168, "wk": 168, "week": 168, "weeks": 168,
  ]

  /// Units below the smallest the language has, with what they measure.
  private static let smallUnits: [String: String] = [
    "us": "microseconds", "µs": "microseconds", "μs": "microseconds", "usec": "microseconds",
    "micros": "microseconds", "microsecond": "microseconds", "microseconds": "microseconds",
    "ns": "nanoseconds", "nsec": "nanoseconds", "nanos": "nanoseconds",
    "nanosecond": "nanoseconds", "nanoseconds": "nanoseconds",
  ]
}

extension DurationUnit {
  /// The unit spelt by `bytes`, if any.
  init?(_ bytes: UnsafeBufferPointer<UInt8>) {
    switch (bytes.count, bytes.first) {
    case (1, UInt8(ascii: "s")?): self = .seconds
    case (1, UInt8(ascii: "m")?): self = .minutes
    case (1, UInt8(ascii: "h")?): self = .hours
    case (2, UInt8(ascii: "m")?) where bytes[1] == UInt8(ascii: "s"): self = .milliseconds
    default: return nil
    }
  }

  /// The nanoseconds in one unit.
  var nanoseconds: Int64 {
    switch self {
    case .milliseconds: 1_000_000
    case .seconds: 1_000_000_000
    case .minutes: 60_000_000_000
    case .hours: 3_600_000_000_000
    }
  }
}
