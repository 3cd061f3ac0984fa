// The fast path of `compile(policy:)`: one well-formed line, compiled straight from its bytes.
//
// Most policies handed to `compile(policy:)` are one correct line, such as
// `retry 5 on serverError backoff 1s x1.5 jitter 10% max 30s`. For those the full front end
// (tokens with source ranges, a syntax tree with strings and arrays, the checker, the sorted
// diagnostics) does work whose only purpose is to explain a mistake that is not there.
//
// This recognizer reads such a line in one pass over its bytes and builds the `CompiledPolicy`
// directly. It accepts only what it is sure the front end compiles without any diagnostic,
// warnings included, and to the same value; on anything else (a second line, a comment, a
// vocabulary, a non-ASCII or unexpected byte, a duplicate or conflicting clause, a value out of
// range, anything that would warn) it gives up and returns nil, and `compile(policy:)` runs the
// full front end, which is the reference and reports every diagnostic. Giving up is always
// safe; the tests and the fuzzer compare the two paths.
//
// Every byte is looked at a bounded number of times; no arithmetic can trap (integers are read
// with overflow checks, durations and numbers with the parser's own readers).

/// Compiles one well-formed policy line without building tokens or a tree; nil when the line is
/// anything but plainly valid (the full front end then decides).
struct OneLineCompiler {
  /// The text.
  private let bytes: UnsafeBufferPointer<UInt8>
  /// The next byte to read.
  private var index = 0

  private init(bytes: UnsafeBufferPointer<UInt8>) {
    self.bytes = bytes
  }

  /// The compiled policy of `source` when it is one plainly valid line and `vocabulary` is open;
  /// nil otherwise.
  static func compile(_ source: String, vocabulary: Vocabulary) -> CompiledPolicy? {
    guard vocabulary.errorClasses == nil, vocabulary.hooks == nil else { return nil }
    let result = source.utf8.withContiguousStorageIfAvailable { bytes in
      var compiler = OneLineCompiler(bytes: bytes)
      return compiler.compileLine()
    }
    return result ?? nil
  }

  // MARK: Bytes

  @inline(__always)
  private func byte(at position: Int) -> UInt8? {
    position < bytes.count ? bytes[position] : nil
  }

  @inline(__always)
  private static func isDigit(_ byte: UInt8) -> Bool {
    byte &- UInt8(ascii: "0") < 10
  }

  /// `a`–`z`, `A`–`Z`, `0`–`9` or `_`.
  @inline(__always)
  private static func isIdentifierByte(_ byte: UInt8) -> Bool {
    (byte | 0x20) &- UInt8(ascii: "a") < 26 || byte &- UInt8(ascii: "0") < 10
      || byte == UInt8(ascii: "_")
  }

  /// Whether `byte` would make the lexer continue a word or a unit past its ASCII identifier
  /// bytes (a hyphen, or a byte of a non-ASCII character): such text is left to the front end.
  @inline(__always)
  private static func continuesWord(_ byte: UInt8?) -> Bool {
    guard let byte else { return false }
    return byte == UInt8(ascii: "-") || byte >= 0x80
  }

  @inline(__always)
  private mutating func skipBlanks() {
    while index < bytes.count, bytes[index] == UInt8(ascii: " ") || bytes[index] == 0x09 {
      index += 1
    }
  }

  private func slice(_ start: Int, _ end: Int) -> UnsafeBufferPointer<UInt8> {
    UnsafeBufferPointer(rebasing: bytes[start..<end])
  }

  // MARK: Tokens

  /// A word that is an ASCII identifier, as the lexer would read it; nil when the next token is
  /// not such a word.
  private mutating func word() -> (start: Int, end: Int, keyword: Keyword?)? {
    let start = index
    guard let first = byte(at: start), Self.isIdentifierByte(first), !Self.isDigit(first) else {
      return nil
    }
    // The lexer reads `x` before digits as the keyword alone (`x1.5`), but `x509Error` as a
    // name: the factor sign is `x` followed by an identifier run of digits only.
    if first == UInt8(ascii: "x"), let next = byte(at: start + 1), Self.isDigit(next) {
      var runEnd = start + 1
      while runEnd < bytes.count, Self.isDigit(bytes[runEnd]) { runEnd += 1 }
      if !(runEnd < bytes.count && Self.isIdentifierByte(bytes[runEnd])) {
        index = start + 1
        return (start, start + 1, .x)
      }
    }
    var end = start + 1
    while end < bytes.count, Self.isIdentifierByte(bytes[end]) { end += 1 }
    if Self.continuesWord(byte(at: end)) { return nil }
    index = end
    return (start, end, Keyword.matching(slice(start, end)))
  }

  /// A number with no unit; nil when the next token is anything else.
  private mutating func number() -> (start: Int, end: Int, hasFraction: Bool)? {
    let start = index
    var end = start
    while end < bytes.count, Self.isDigit(bytes[end]) { end += 1 }
    guard end > start else { return nil }
    var hasFraction = false
    if byte(at: end) == UInt8(ascii: ".") {
      guard let next = byte(at: end + 1), Self.isDigit(next) else { return nil }
      hasFraction = true
      end += 1
      while end < bytes.count, Self.isDigit(bytes[end]) { end += 1 }
    }
    if let next = byte(at: end), Self.isIdentifierByte(next) || Self.continuesWord(next) {
      return nil
    }
    index = end
    return (start, end, hasFraction)
  }

  /// The value of a plain number, read as the parser reads it; nil for a long one the parser
  /// would read by another way.
  private mutating func numberValue() -> Double? {
    guard let number = number(), number.end - number.start <= 16 else { return nil }
    return PolicyParser.doubleValue(slice(number.start, number.end), text: "")
  }

  /// `P%` with 0 < P ≤ 100, as a fraction.
  private mutating func percentFraction() -> Double? {
    guard let percent = numberValue(), percent > 0, percent <= 100 else { return nil }
    skipBlanks()
    guard byte(at: index) == UInt8(ascii: "%") else { return nil }
    index += 1
    return percent / 100
  }

  /// A duration literal within the checker's limits: positive when `mustBePositive`.
  private mutating func duration(mustBePositive: Bool) -> Duration? {
    let start = index
    var end = start
    // Up to 18 digits cannot overflow `Int64`.
    var whole: Int64 = 0
    while end < bytes.count, Self.isDigit(bytes[end]) {
      whole = whole &* 10 &+ Int64(bytes[end] &- UInt8(ascii: "0"))
      end += 1
    }
    guard end > start, end - start <= 18 else { return nil }
    var hasFraction = false
    if byte(at: end) == UInt8(ascii: ".") {
      guard let next = byte(at: end + 1), Self.isDigit(next) else { return nil }
      hasFraction = true
      end += 1
      while end < bytes.count, Self.isDigit(bytes[end]) { end += 1 }
    }
    let unitStart = end
    while end < bytes.count, Self.isIdentifierByte(bytes[end]) { end += 1 }
    guard !Self.continuesWord(byte(at: end)), let unit = DurationUnit(slice(unitStart, end))
    else { return nil }
    let duration: Duration
    if hasFraction {
      guard
        let exact = PolicyParser.duration(
          slice(start, unitStart), nanosecondsPerUnit: unit.nanoseconds)
      else { return nil }
      duration = exact
    } else {
      // What `PolicyParser.duration` computes for a whole number of units.
      let (nanoseconds, overflow) = whole.multipliedReportingOverflow(by: unit.nanoseconds)
      guard !overflow else { return nil }
      duration = .nanoseconds(nanoseconds)
    }
    guard duration <= PolicyChecker.longestDuration, !mustBePositive || duration != .zero
    else { return nil }
    index = end
    return duration
  }

  /// A name of `on`, `except` or `after`.
  private mutating func name(acceptsTimeout: Bool) -> (start: Int, end: Int)? {
    guard let word = word() else { return nil }
    switch word.keyword {
    case nil: return (word.start, word.end)
    case .timeout? where acceptsTimeout: return (word.start, word.end)
    default: return nil
    }
  }

  /// `A, B, …` after `on` or `except`.
  private mutating func names() -> [String]? {
    guard let first = name(acceptsTimeout: true) else { return nil }
    var names = [text(first)]
    while true {
      let before = index
      skipBlanks()
      guard byte(at: index) == UInt8(ascii: ",") else {
        index = before
        return names
      }
      index += 1
      skipBlanks()
      guard let next = name(acceptsTimeout: true) else { return nil }
      names.append(text(next))
    }
  }

  private func text(_ range: (start: Int, end: Int)) -> String {
    String(decoding: slice(range.start, range.end), as: UTF8.self)
  }

  // MARK: The line

  /// The delay clause of the rule.
  private enum Delay {
    case immediate
    case delayed(Duration)
    case exponential(Duration, multiplier: Double)
    case linear(Duration, increment: Duration)
    case custom([Duration])
  }

  /// Reads the whole text as one rule line; nil at the first thing it does not accept.
  private mutating func compileLine() -> CompiledPolicy? {
    skipBlanks()
    guard let retry = word(), retry.keyword == .retry else { return nil }
    skipBlanks()
    var maxCount: Int?
    if let count = number() {
      guard !count.hasFraction else { return nil }
      var value = 0
      for byte in slice(count.start, count.end) {
        let (times, overflow) = value.multipliedReportingOverflow(by: 10)
        let (sum, carry) = times.addingReportingOverflow(Int(byte &- UInt8(ascii: "0")))
        guard !overflow, !carry else { return nil }
        value = sum
      }
      guard value <= PolicyChecker.largestCount else { return nil }
      maxCount = value
    } else {
      guard let forever = word(), forever.keyword == .forever else { return nil }
    }

    var onNames: [String]?
    var exceptNames: [String]?
    var delay: Delay?
    var jitter: Jitter?
    var cap: Duration?
    var hook: (start: Int, end: Int)?
    var honorsRetryAfter = false
    var deadline: Duration?
    var attemptTimeout: Duration?
    var budgetRatio: Double?

    while true {
      skipBlanks()
      if index == bytes.count { break }
      guard let clause = word(), let keyword = clause.keyword else { return nil }
      skipBlanks()
      switch keyword {
      case .on:
        guard onNames == nil, let names = names() else { return nil }
        onNames = names
      case .except:
        guard exceptNames == nil, let names = names() else { return nil }
        exceptNames = names
      case .immediately:
        guard delay == nil else { return nil }
        delay = .immediate
      case .delay:
        // A zero delay warns: left to the front end.
        guard delay == nil, let value = duration(mustBePositive: true) else { return nil }
        delay = .delayed(value)
      case .backoff:
        guard delay == nil, let initial = duration(mustBePositive: true) else { return nil }
        delay = .exponential(initial, multiplier: 2)
        let before = index
        skipBlanks()
        if byte(at: index) == UInt8(ascii: "+") {
          index += 1
          skipBlanks()
          guard let increment = duration(mustBePositive: false) else { return nil }
          delay = .linear(initial, increment: increment)
        } else if let growth = word() {
          guard growth.keyword == .x else {
            index = before
            break
          }
          skipBlanks()
          // A factor of exactly 1 warns: left to the front end.
          guard let factor = numberValue(), factor > 1, factor <= PolicyChecker.largestFactor
          else { return nil }
          delay = .exponential(initial, multiplier: factor)
        } else {
          index = before
        }
      case .delays:
        guard delay == nil, let first = duration(mustBePositive: false) else { return nil }
        var delays = [first]
        while true {
          let before = index
          skipBlanks()
          guard byte(at: index) == UInt8(ascii: ",") else {
            index = before
            break
          }
          index += 1
          skipBlanks()
          guard let next = duration(mustBePositive: false) else { return nil }
          delays.append(next)
        }
        delay = .custom(delays)
      case .jitter:
        guard jitter == nil else { return nil }
        if let kind = word() {
          switch kind.keyword {
          case .full?: jitter = .full
          case .equal?: jitter = .equal
          case .decorrelated?: jitter = .decorrelated
          default: return nil
          }
        } else {
          guard let fraction = percentFraction() else { return nil }
          jitter = .proportional(fraction: fraction)
        }
      case .max:
        guard cap == nil, let value = duration(mustBePositive: true) else { return nil }
        cap = value
      case .after:
        guard hook == nil, let name = name(acceptsTimeout: false) else { return nil }
        hook = name
      case .honoring:
        guard !honorsRetryAfter, readRetryAfter() else { return nil }
        honorsRetryAfter = true
      case .within:
        guard deadline == nil, let value = duration(mustBePositive: true) else { return nil }
        deadline = value
      case .timeout:
        guard attemptTimeout == nil, let value = duration(mustBePositive: true) else {
          return nil
        }
        attemptTimeout = value
      case .budget:
        guard budgetRatio == nil, let ratio = percentFraction() else { return nil }
        budgetRatio = ratio
      case .policy, .retry, .forever, .full, .equal, .decorrelated, .retryAfter, .x:
        return nil
      }
    }

    // What the checker reports about the rule and the policy as a whole.
    if maxCount == nil && deadline == nil { return nil }  // `retry forever` needs `within`
    if let attemptTimeout, let deadline, attemptTimeout >= deadline { return nil }
    let behavior: RepeatBehavior
    let firstDelay: Duration
    var isAlwaysZero = false
    switch delay {
    case nil, .immediate?:
      // Jitter or a cap on a rule that retries immediately warns.
      if jitter != nil || cap != nil { return nil }
      behavior = .immediate(maxCount: maxCount)
      firstDelay = .zero
    case .delayed(let value)?:
      behavior = .delayed(maxCount: maxCount, delay: value)
      firstDelay = value
    case .exponential(let initial, let multiplier)?:
      behavior = .exponential(maxCount: maxCount, initial: initial, multiplier: multiplier)
      firstDelay = initial
    case .linear(let initial, let increment)?:
      behavior = .linear(maxCount: maxCount, initial: initial, increment: increment)
      firstDelay = initial
    case .custom(let delays)?:
      behavior = .customTimerDelayed(maxCount: maxCount, delays: delays)
      firstDelay = delays.first ?? .zero
      isAlwaysZero = delays.allSatisfy { $0 == .zero }
    }
    if let cap, isAlwaysZero || cap < firstDelay { return nil }

    // A class both in `on` and in `except` is an error.
    if let onNames, let exceptNames, exceptNames.contains(where: onNames.contains) { return nil }
    let rule = RetryRule(
      behavior: behavior, errorClasses: onNames ?? [], excludedClasses: exceptNames ?? [],
      jitter: jitter, maxDelay: cap, hook: hook.map { text($0) },
      honorsRetryAfter: honorsRetryAfter)
    return CompiledPolicy(
      name: nil, rules: [rule], deadline: deadline, attemptTimeout: attemptTimeout,
      budgetRatio: budgetRatio)
  }

  /// `retry-after` after `honoring`.
  private mutating func readRetryAfter() -> Bool {
    let spelling: StaticString = "retry-after"
    let length = spelling.utf8CodeUnitCount
    guard index + length <= bytes.count else { return false }
    let matches = spelling.withUTF8Buffer { literal in
      var position = 0
      while position < length {
        if literal[position] != bytes[index + position] { return false }
        position += 1
      }
      return true
    }
    guard matches else { return false }
    let end = index + length
    if let next = byte(at: end), Self.isIdentifierByte(next) || Self.continuesWord(next) {
      return false
    }
    index = end
    return true
  }
}
