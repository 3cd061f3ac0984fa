import Foundation

/// Reads the value of an HTTP `Retry-After` header (RFC 9110 §10.2.3): delay-seconds, or an
/// HTTP-date in any of its three forms (§5.6.7: IMF-fixdate, and the obsolete RFC 850 and
/// asctime forms a recipient must accept).
///
/// Nothing traps: a malformed or negative value is no delay (nil), a date in the past is
/// zero, and delay-seconds saturate at 10^9 s (the runtime's largest delay; `max` caps it
/// anyway).
package enum RetryAfterHeader {
  /// The largest delay read, in seconds: the runtime's saturation point.
  static let largestSeconds: Int64 = 1_000_000_000

  /// The delay a `Retry-After` value asks for, a date being measured from `now` (seconds
  /// since 1970); nil when the value is neither form.
  package static func delay(_ value: String, now: Int64) -> Duration? {
    var value = value
    return value.withUTF8 { bytes -> Duration? in
      var start = 0
      var end = bytes.count
      while start < end, bytes[start] == .space || bytes[start] == .tab { start += 1 }
      while end > start, bytes[end - 1] == .space || bytes[end - 1] == .tab { end -= 1 }
      guard start < end else { return nil }
      let trimmed = UnsafeBufferPointer(rebasing: bytes[start..<end])
      if let seconds = delaySeconds(trimmed) { return .seconds(seconds) }
      guard let date = HTTPDate.seconds(trimmed, now: now) else { return nil }
      let delay = date.subtractingReportingOverflow(now)
      guard !delay.overflow else { return nil }
      return .seconds(Swift.min(Swift.max(delay.partialValue, 0), largestSeconds))
    }
  }

  /// The delay a `Retry-After` value asks for, a date being measured from the response's
  /// `Date` header when it has one (the server's own clock), from this machine's clock
  /// otherwise.
  package static func delay(_ value: String, dateHeader: String?) -> Duration? {
    let now =
      dateHeader.flatMap { HTTPDate.seconds($0, now: currentSeconds()) } ?? currentSeconds()
    return delay(value, now: now)
  }

  /// This machine's time, in whole seconds since 1970.
  static func currentSeconds() -> Int64 {
    Int64(Date().timeIntervalSince1970.rounded(.down))
  }

  /// `1*DIGIT`, saturating; nil when anything else is there.
  private static func delaySeconds(_ bytes: UnsafeBufferPointer<UInt8>) -> Int64? {
    var value: Int64 = 0
    for byte in bytes {
      guard byte >= .zero, byte <= .nine else { return nil }
      if value < largestSeconds { value = value * 10 + Int64(byte - .zero) }
    }
    return Swift.min(value, largestSeconds)
  }
}

/// Reads an HTTP-date (RFC 9110 §5.6.7) as seconds since 1970.
///
/// It takes the three forms:
///
///     Sun, 06 Nov 1994 08:49:37 GMT    IMF-fixdate
///     Sunday, 06-Nov-94 08:49:37 GMT   RFC 850 (a two-digit year more than 50 years ahead
///                                      of `now` is the latest past year of those digits)
///     Sun Nov  6 08:49:37 1994         asctime
package enum HTTPDate {
  /// The seconds since 1970 of an HTTP-date, or nil when the text is not one.
  package static func seconds(_ text: String, now: Int64) -> Int64? {
    var text = text
    return text.withUTF8 { seconds($0, now: now) }
  }

  static func seconds(_ bytes: UnsafeBufferPointer<UInt8>, now: Int64) -> Int64? {
    var reader = Reader(bytes: bytes)
    guard reader.skipLetters() >= 3 else { return nil }  // the day name
    if reader.take(.comma) {
      guard reader.take(.space), let day = reader.number(digits: 2) else { return nil }
      if reader.take(.space) {  // IMF-fixdate
        guard let month = reader.month(), reader.take(.space),
          let year = reader.number(digits: 4), reader.take(.space),
          let time = reader.time(), reader.gmtAtEnd()
        else { return nil }
        return epochSeconds(year: year, month: month, day: day, time: time)
      }
      guard reader.take(.hyphen), let month = reader.month(), reader.take(.hyphen),
        let shortYear = reader.number(digits: 2), reader.take(.space),
        let time = reader.time(), reader.gmtAtEnd()
      else { return nil }
      return epochSeconds(
        year: fullYear(shortYear, now: now), month: month, day: day, time: time)
    }
    // asctime: `Sun Nov  6 08:49:37 1994`
    guard reader.take(.space), let month = reader.month(), reader.take(.space) else {
      return nil
    }
    let day: Int
    if reader.take(.space) {
      guard let digit = reader.number(digits: 1) else { return nil }
      day = digit
    } else {
      guard let digits = reader.number(digits: 2) else { return nil }
      day = digits
    }
    guard reader.take(.space), let time = reader.time(), reader.take(.space),
      let year = reader.number(digits: 4), reader.isAtEnd
    else { return nil }
    return epochSeconds(year: year, month: month, day: day, time: time)
  }

  /// A two-digit year in the century that puts it at most 50 years after `now`'s year.
  static func fullYear(_ twoDigits: Int, now: Int64) -> Int {
    let currentYear = civilYear(ofDay: now / 86_400)
    var year = currentYear - currentYear % 100 + twoDigits
    if year > currentYear + 50 { year -= 100 }
    return year
  }

  /// Seconds since 1970 of a date and time in UTC; nil for a day the month does not have.
  static func epochSeconds(year: Int, month: Int, day: Int, time: Int) -> Int64? {
    let lengths = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
    let isLeap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
    let length = month == 2 && isLeap ? 29 : lengths[month - 1]
    guard day >= 1, day <= length else { return nil }
    return Int64(daysFromCivil(year: year, month: month, day: day)) * 86_400 + Int64(time)
  }

  /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
  static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
    let y = month <= 2 ? year - 1 : year
    let era = (y >= 0 ? y : y - 399) / 400
    let yearOfEra = y - era * 400
    let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
    let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
    return era * 146_097 + dayOfEra - 719_468
  }

  /// The year of a day counted from 1970-01-01 (the inverse of ``daysFromCivil``, year only).
  static func civilYear(ofDay days: Int64) -> Int {
    let z = Int(clamping: days) + 719_468
    let era = (z >= 0 ? z : z - 146_096) / 146_097
    let dayOfEra = z - era * 146_097
    let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
    let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
    let monthIndex = (5 * dayOfYear + 2) / 153
    return yearOfEra + era * 400 + (monthIndex >= 10 ? 1 : 0)
  }

  /// A cursor over the bytes of a date.
  struct Reader {
    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0

    var isAtEnd: Bool { index == bytes.count }

    mutating func take(_ byte: UInt8) -> Bool {
      guard index < bytes.count, bytes[index] == byte else { return false }
      index += 1
      return true
    }

    /// Moves past ASCII letters; returns how many.
    mutating func skipLetters() -> Int {
      let start = index
      while index < bytes.count, (bytes[index] | 0x20) >= .lowerA, (bytes[index] | 0x20) <= .lowerZ
      {
        index += 1
      }
      return index - start
    }

    /// Exactly `digits` ASCII digits.
    mutating func number(digits: Int) -> Int? {
      guard index + digits <= bytes.count else { return nil }
      var value = 0
      for offset in 0..<digits {
        let byte = bytes[index + offset]
        guard byte >= .zero, byte <= .nine else { return nil }
        value = value * 10 + Int(byte - .zero)
      }
      index += digits
      return value
    }

    /// A month name, `Jan` … `Dec` (case-sensitive, as the grammar has it), from 1.
    mutating func month() -> Int? {
      guard index + 3 <= bytes.count else { return nil }
      let name =
        (UInt32(bytes[index]) << 16) | (UInt32(bytes[index + 1]) << 8)
        | UInt32(bytes[index + 2])
      guard let month = Self.months.firstIndex(of: name) else { return nil }
      index += 3
      return month + 1
    }

    private static let months: [UInt32] = [
      "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ].map { name in name.utf8.reduce(UInt32(0)) { $0 << 8 | UInt32($1) } }

    /// `hh:mm:ss` as seconds of the day (a leap second, `:60`, is allowed).
    mutating func time() -> Int? {
      guard let hours = number(digits: 2), hours < 24, take(.colon),
        let minutes = number(digits: 2), minutes < 60, take(.colon),
        let seconds = number(digits: 2), seconds <= 60
      else { return nil }
      return hours * 3600 + minutes * 60 + seconds
    }

    /// ` GMT` and nothing after it.
    mutating func gmtAtEnd() -> Bool {
      take(.space) && take(UInt8(ascii: "G")) && take(UInt8(ascii: "M"))
        && take(UInt8(ascii: "T")) && isAtEnd
    }
  }
}

extension UInt8 {
  fileprivate static let space = UInt8(ascii: " ")
  fileprivate static let tab = UInt8(ascii: "\t")
  fileprivate static let comma = UInt8(ascii: ",")
  fileprivate static let hyphen = UInt8(ascii: "-")
  fileprivate static let colon = UInt8(ascii: ":")
  fileprivate static let zero = UInt8(ascii: "0")
  fileprivate static let nine = UInt8(ascii: "9")
  fileprivate static let lowerA = UInt8(ascii: "a")
  fileprivate static let lowerZ = UInt8(ascii: "z")
}
