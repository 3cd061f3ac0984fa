/// Reads policy text into a syntax tree, reporting every error and recovering after each.
///
/// The parser records what was written, in order; it does not judge meaning (duplicate
/// clauses, conflicts, ranges), which is the checker's business. After an error it skips to
/// the next clause keyword on the line, else to the next line, else (at the top of a file) to
/// the next `policy`, so that one run reports every error of a text, one per broken clause.
package enum Parser {
  /// Parses a policy file: `policy NAME = …` and `policy NAME { … }` declarations.
  package static func parseFile(_ source: String) -> (SourceFileSyntax, [Diagnostic]) {
    withUTF8(source) { bytes in
      var parser = PolicyParser(bytes: bytes)
      let file = parser.parseFile()
      return (file, parser.finishedDiagnostics())
    }
  }

  /// Parses the text of one policy: lines of rules and policy-wide clauses, no `policy` keyword.
  package static func parsePolicy(_ source: String) -> (
    PolicyBodySyntax, [CommentSyntax], [Diagnostic]
  ) {
    withUTF8(source) { bytes in
      var parser = PolicyParser(bytes: bytes)
      let body = parser.parsePolicyText()
      return (body, parser.lexer.comments, parser.finishedDiagnostics())
    }
  }

  /// Parses a policy file and hands each declaration to `visit` as soon as it is read, in
  /// the order of the file, without keeping the tree or the comments; returns the
  /// diagnostics, as `parseFile(_:)` does.
  ///
  /// Memory stays bounded by the largest declaration, whatever the length of the file.
  package static func parseFile(
    _ source: String, visit: (PolicyDeclarationSyntax) -> Void
  ) -> [Diagnostic] {
    withUTF8(source) { bytes in
      var parser = PolicyParser(bytes: bytes, keepsComments: false)
      _ = parser.parseFile(visit: visit)
      return parser.finishedDiagnostics()
    }
  }

  /// Parses the text of one policy and hands each line to `visit` as soon as it is read,
  /// without keeping the tree or the comments; returns the body's range and the
  /// diagnostics, as `parsePolicy(_:)` does.
  package static func parsePolicy(
    _ source: String, visit: (LineSyntax) -> Void
  ) -> (SourceRange, [Diagnostic]) {
    withUTF8(source) { bytes in
      var parser = PolicyParser(bytes: bytes, keepsComments: false)
      let range = parser.parsePolicyText(visit: visit)
      return (range, parser.finishedDiagnostics())
    }
  }

  /// Runs `body` over the UTF-8 bytes of `source`, without copying them when possible.
  private static func withUTF8<Result>(
    _ source: String, _ body: (UnsafeBufferPointer<UInt8>) -> Result
  ) -> Result {
    if let result = source.utf8.withContiguousStorageIfAvailable(body) { return result }
    var copy = source
    copy.makeContiguousUTF8()
    if let result = copy.utf8.withContiguousStorageIfAvailable(body) { return result }
    return Array(source.utf8).withUnsafeBufferPointer(body)
  }
}

/// The state of one parse: the lexer, the current token, and where the last token ended.
///
/// Every loop of the parser consumes at least one token per iteration or exits, so parsing
/// ends, in time linear in the text.
struct PolicyParser {
  /// The lexer, which also holds the comments and the diagnostics.
  var lexer: Lexer
  /// The token the parser looks at.
  private var token: Token
  /// The end of the last token consumed.
  private var previousEnd = SourceLocation.start
  /// Whether `}` ends the current line (inside a block).
  private var isInBlock = false

  init(bytes: UnsafeBufferPointer<UInt8>, keepsComments: Bool = true) {
    lexer = Lexer(bytes: bytes)
    lexer.keepsComments = keepsComments
    token = lexer.next()
  }

  // MARK: Tokens

  private mutating func advance() {
    previousEnd = token.range.end
    token = lexer.next()
  }

  private var text: String { lexer.text(token.start, token.end) }

  /// Whether the current token ends a line: a line end, the end, or `}` in a block.
  private var isAtLineEnd: Bool {
    switch token.kind {
    case .newline, .end: true
    case .rightBrace: isInBlock
    default: false
    }
  }

  /// Whether the current token is a clause keyword.
  private var isAtClause: Bool {
    token.kind == .word && (token.keyword?.startsClause ?? false)
  }

  private mutating func report(
    _ message: DiagnosticMessage, at range: SourceRange, notes: [Diagnostic] = []
  ) {
    lexer.diagnostics.append(Diagnostic(message, at: range, notes: notes))
  }

  /// The diagnostics in the order of the text.
  mutating func finishedDiagnostics() -> [Diagnostic] {
    let diagnostics = lexer.diagnostics
    var isSorted = true
    var index = 1
    while index < diagnostics.count {
      if diagnostics[index].range.start < diagnostics[index - 1].range.start {
        isSorted = false
        break
      }
      index += 1
    }
    if isSorted { return diagnostics }
    return diagnostics.enumerated().sorted { lhs, rhs in
      lhs.element.range.start == rhs.element.range.start
        ? lhs.offset < rhs.offset : lhs.element.range.start < rhs.element.range.start
    }.map(\.element)
  }

  /// Skips to the next clause keyword of the line, or to the line's end.
  ///
  /// A word on the way that is a near miss of a clause keyword (`jiter`) is reported too, so
  /// one run shows every misspelt clause of a line, not only the first.
  private mutating func skipToClause() {
    while !isAtLineEnd && !isAtClause {
      if token.kind == .word, token.keyword == nil,
        lexer.diagnostics.last?.range.start != token.range.start,
        let suggestion = Suggestion.nearest(to: text, in: Keyword.clauseWords)
      {
        report(.unknownClause(text, suggestion: suggestion), at: token.range)
      }
      advance()
    }
  }

  /// Skips to the next line that starts with `policy`, or to the end.
  private mutating func skipToNextPolicy() {
    while true {
      while token.kind != .newline && token.kind != .end { advance() }
      while token.kind == .newline { advance() }
      if token.kind == .end || token.keyword == .policy { return }
    }
  }

  // MARK: Files

  /// Parses a whole file.
  mutating func parseFile() -> SourceFileSyntax {
    var policies: [PolicyDeclarationSyntax] = []
    let range = parseFile { policies.append($0) }
    return SourceFileSyntax(policies: policies, comments: lexer.comments, range: range)
  }

  /// Parses a whole file, handing each declaration to `visit`; returns the file's range.
  mutating func parseFile(visit: (PolicyDeclarationSyntax) -> Void) -> SourceRange {
    while true {
      while token.kind == .newline { advance() }
      if token.kind == .end { break }
      if token.keyword == .policy {
        if let declaration = parseDeclaration() { visit(declaration) }
      } else {
        if token.kind != .error {
          let suggestion =
            token.kind == .word ? Suggestion.nearest(to: text, in: ["policy"]) : nil
          report(.expectedPolicy(found: text, suggestion: suggestion), at: token.range)
        }
        skipToNextPolicy()
      }
    }
    return SourceRange(start: .start, end: token.range.end)
  }

  /// Parses `policy NAME = LINE` or `policy NAME { LINES }`; nil when it cannot be recorded.
  ///
  /// Ends at a line end, at the end, or at a `policy` that starts a line.
  private mutating func parseDeclaration() -> PolicyDeclarationSyntax? {
    let start = token.range.start
    advance()
    var name: NameSyntax?
    if token.kind == .word, token.isIdentifier {
      name = NameSyntax(text: text, range: token.range)
      advance()
    } else if token.kind == .equals || token.kind == .leftBrace {
      report(.expectedPolicyName(), at: token.range)
    } else {
      if token.kind == .word {
        if let keyword = token.keyword {
          report(.expectedPolicyName(keyword: keyword.rawValue), at: token.range)
        } else {
          report(.invalidName(text), at: token.range)
        }
        advance()
      } else if token.kind != .error {
        report(.expectedPolicyName(), at: token.range)
      }
      if token.kind != .equals && token.kind != .leftBrace {
        skipToNextPolicy()
        return nil
      }
    }
    let shownName = name?.text ?? ""
    let form: PolicyDeclarationSyntax.Form
    var lines: [LineSyntax] = []
    let bodyStart = token.range.end
    if token.kind == .equals {
      form = .line
      advance()
      if isAtLineEnd {
        report(.expectedPolicyLine(shownName), at: token.range)
      } else {
        parseLine(isPolicyText: false, into: &lines)
      }
    } else if token.kind == .leftBrace {
      form = .block
      let brace = token.range
      advance()
      isInBlock = true
      lines = parseBlockLines(name: shownName, brace: brace)
      isInBlock = false
    } else {
      if token.kind != .error {
        report(.expectedPolicyBody(shownName), at: token.range)
      }
      skipToNextPolicy()
      return nil
    }
    let bodyRange =
      lines.first.map { first in
        SourceRange(start: first.range.start, end: lines.last?.range.end ?? first.range.end)
      } ?? SourceRange(start: bodyStart, end: bodyStart)
    guard let name else { return nil }
    return PolicyDeclarationSyntax(
      name: name, form: form, body: PolicyBodySyntax(lines: lines, range: bodyRange),
      range: SourceRange(start: start, end: previousEnd))
  }

  /// Parses the lines of a block, after its `{`, through its `}`.
  private mutating func parseBlockLines(name: String, brace: SourceRange) -> [LineSyntax] {
    var lines: [LineSyntax] = []
    var isFirstLine = true
    while true {
      while token.kind == .newline {
        advance()
        isFirstLine = false
      }
      switch token.kind {
      case .rightBrace:
        advance()
        if token.kind != .newline && token.kind != .end {
          if token.kind != .error {
            report(.unexpectedToken(text, expected: "a line end after '}'"), at: token.range)
          }
          while token.kind != .newline && token.kind != .end { advance() }
        }
        return lines
      case .end:
        reportUnterminated(name: name, brace: brace)
        return lines
      default:
        if token.keyword == .policy && !isFirstLine {
          reportUnterminated(name: name, brace: brace)
          return lines
        }
        parseLine(isPolicyText: false, into: &lines)
        isFirstLine = false
      }
    }
  }

  private mutating func reportUnterminated(name: String, brace: SourceRange) {
    let note = Diagnostic(.blockOpensHere(name), at: brace)
    let here = SourceRange(start: token.range.start, end: token.range.start)
    report(.unterminatedBlock(name), at: here, notes: [note])
  }

  // MARK: Policy text

  mutating func parsePolicyText() -> PolicyBodySyntax {
    var lines: [LineSyntax] = []
    let range = parsePolicyText { lines.append($0) }
    return PolicyBodySyntax(lines: lines, range: range)
  }

  /// Parses the text of one policy, handing each line to `visit` as soon as it is read;
  /// returns the body's range: from the first line to the last, or empty at the end.
  mutating func parsePolicyText(visit: (LineSyntax) -> Void) -> SourceRange {
    var first: SourceLocation?
    var last = SourceLocation.start
    while true {
      while token.kind == .newline { advance() }
      if token.kind == .end { break }
      if let line = parseLine(isPolicyText: true) {
        if first == nil { first = line.range.start }
        last = line.range.end
        visit(line)
      }
    }
    if first == nil && lexer.diagnostics.isEmpty {
      report(.emptyPolicy(), at: SourceRange(start: .start, end: .start))
    }
    guard let first else {
      let here = token.range.end
      return SourceRange(start: here, end: here)
    }
    return SourceRange(start: first, end: last)
  }

  // MARK: Lines

  /// Parses one line, up to (not including) its end, and adds it to `lines` unless nothing
  /// could be recorded.
  private mutating func parseLine(isPolicyText: Bool, into lines: inout [LineSyntax]) {
    if let line = parseLine(isPolicyText: isPolicyText) { lines.append(line) }
  }

  /// Parses one line, up to (not including) its end; nil when nothing could be recorded.
  private mutating func parseLine(isPolicyText: Bool) -> LineSyntax? {
    let start = token.range.start
    let diagnosticsBefore = lexer.diagnostics.count
    var head: RetryHeadSyntax?
    var clauses: [ClauseSyntax] = []
    clauses.reserveCapacity(8)
    // Once the line's start is diagnosed, a missing `retry` is not reported again.
    var isStartDiagnosed = false
    if token.keyword == .retry {
      head = parseHead()
    } else if !isAtClause {
      reportUnexpected(atLineStart: true, isPolicyText: isPolicyText)
      isStartDiagnosed = true
      skipToClause()
    }
    while !isAtLineEnd {
      guard token.kind == .word, let keyword = token.keyword, keyword.startsClause else {
        reportUnexpected(atLineStart: false, isPolicyText: isPolicyText)
        skipToClause()
        continue
      }
      if head == nil && !keyword.isPolicyWide && !isStartDiagnosed {
        report(.expectedRetry(before: keyword.rawValue), at: token.range)
        isStartDiagnosed = true
      }
      if !parseClause(keyword, into: &clauses) {
        skipToClause()
      }
    }
    if head == nil && clauses.isEmpty { return nil }
    return LineSyntax(
      head: head, clauses: clauses, range: SourceRange(start: start, end: previousEnd),
      hasSyntaxErrors: lexer.diagnostics.count > diagnosticsBefore)
  }

  /// Reports the current token where a clause (or a line) was expected.
  private mutating func reportUnexpected(atLineStart: Bool, isPolicyText: Bool) {
    let expected =
      atLineStart
      ? "a rule such as 'retry 3' or a policy-wide clause such as 'within 1m'"
      : "a clause such as 'on', 'backoff', 'jitter' or 'max'"
    switch token.kind {
    case .error:
      return
    case .word:
      switch token.keyword {
      case nil:
        let suggestion = Suggestion.nearest(to: text, in: Keyword.clauseWords)
        report(.unknownClause(text, suggestion: suggestion), at: token.range)
      case .retry?:
        report(
          .unexpectedToken(text, expected: "a clause; each rule goes on a line of its own"),
          at: token.range)
      case .policy? where isPolicyText:
        report(
          .unexpectedToken(
            text, expected: "a rule such as 'retry 3'; 'policy' declarations belong in a file"),
          at: token.range)
      default:
        report(.unexpectedToken(text, expected: expected), at: token.range)
      }
    case .newline, .end:
      return
    default:
      report(.unexpectedToken(text, expected: expected), at: token.range)
    }
  }

  /// Parses `retry N` or `retry forever`, at `retry`.
  private mutating func parseHead() -> RetryHeadSyntax {
    let start = token.range.start
    let retryRange = token.range
    advance()
    var count = RetryHeadSyntax.Count.times(nil)
    var countRange = retryRange
    switch token.kind {
    case .number where !token.hasFraction:
      countRange = token.range
      if let value = parseInteger(token.start, token.end) {
        count = .times(value)
      } else {
        report(.numberTooLarge(text), at: token.range)
      }
      advance()
    case .word where token.keyword == .forever:
      count = .forever
      countRange = token.range
      advance()
    case .error:
      break
    default:
      if isAtLineEnd || isAtClause {
        report(.expectedCount(), at: token.range)
      } else {
        report(.expectedCount(found: text), at: token.range)
        advance()
        skipToClause()
      }
    }
    return RetryHeadSyntax(
      count: count, countRange: countRange, range: SourceRange(start: start, end: previousEnd))
  }

  // MARK: Clauses

  /// Parses the clause that starts with `keyword`, at its keyword, and adds it to `clauses`;
  /// false after an error.
  private mutating func parseClause(_ keyword: Keyword, into clauses: inout [ClauseSyntax]) -> Bool
  {
    let keywordRange = token.range
    let word = keyword.rawValue
    advance()
    switch keyword {
    case .on, .except:
      guard let names = parseNames(after: word) else { return false }
      return add(keyword == .on ? .on(names) : .except(names), keywordRange, to: &clauses)
    case .immediately:
      return add(.immediately, keywordRange, to: &clauses)
    case .delay:
      guard let duration = parseDuration(after: word) else { return false }
      return add(.delay(duration), keywordRange, to: &clauses)
    case .max:
      guard let duration = parseDuration(after: word) else { return false }
      return add(.max(duration), keywordRange, to: &clauses)
    case .within:
      guard let duration = parseDuration(after: word) else { return false }
      return add(.within(duration), keywordRange, to: &clauses)
    case .timeout:
      guard let duration = parseDuration(after: word) else { return false }
      return add(.timeout(duration), keywordRange, to: &clauses)
    case .backoff:
      guard let duration = parseDuration(after: word) else { return false }
      var growth: BackoffGrowthSyntax?
      if token.keyword == .x {
        advance()
        guard token.kind == .number else {
          if token.kind != .error { report(.expectedFactor(), at: token.range) }
          return false
        }
        growth = .factor(parseNumber())
      } else if token.kind == .plus {
        advance()
        guard token.kind == .duration || token.kind == .number else {
          if token.kind != .error { report(.expectedIncrement(), at: token.range) }
          return false
        }
        guard let increment = parseDuration(after: "+") else { return false }
        growth = .increment(increment)
      }
      return add(.backoff(duration, growth), keywordRange, to: &clauses)
    case .delays:
      guard let first = parseDuration(after: word) else { return false }
      var durations = [first]
      while token.kind == .comma {
        advance()
        guard let next = parseDuration(after: ",") else { return false }
        durations.append(next)
      }
      return add(.delays(durations), keywordRange, to: &clauses)
    case .jitter:
      guard let jitter = parseJitter() else { return false }
      return add(.jitter(jitter), keywordRange, to: &clauses)
    case .after:
      guard
        let name = parseName(
          "a hook name", after: word, example: "refreshToken", acceptsTimeout: false)
      else { return false }
      return add(.after(name), keywordRange, to: &clauses)
    case .honoring:
      guard token.keyword == .retryAfter else {
        if token.kind != .error { report(.expectedRetryAfter(), at: token.range) }
        return false
      }
      advance()
      return add(.honoringRetryAfter, keywordRange, to: &clauses)
    case .budget:
      guard let percent = parsePercent(after: word) else { return false }
      return add(.budget(percent), keywordRange, to: &clauses)
    case .policy, .retry, .forever, .full, .equal, .decorrelated, .retryAfter, .x:
      return false
    }
  }

  /// Adds a clause that ends with the last token read.
  private func add(
    _ kind: __owned ClauseSyntax.Kind, _ keywordRange: SourceRange,
    to clauses: inout [ClauseSyntax]
  ) -> Bool {
    clauses.append(
      ClauseSyntax(
        kind: kind, keywordRange: keywordRange,
        range: SourceRange(start: keywordRange.start, end: previousEnd)))
    return true
  }

  private mutating func parseNames(after keyword: String) -> [NameSyntax]? {
    guard
      let first = parseName(
        "an error class name", after: keyword, example: "serverError", acceptsTimeout: true)
    else { return nil }
    var names = [first]
    while token.kind == .comma {
      advance()
      guard
        let next = parseName(
          "an error class name", after: ",", example: "serverError", acceptsTimeout: true)
      else { return nil }
      names.append(next)
    }
    return names
  }

  /// Parses a name; `timeout` is also the built-in error class of that name.
  private mutating func parseName(
    _ kind: String, after keyword: String, example: String, acceptsTimeout: Bool
  ) -> NameSyntax? {
    switch token.kind {
    case .word:
      if token.isIdentifier || (acceptsTimeout && token.keyword == .timeout) {
        let name = NameSyntax(text: text, range: token.range)
        advance()
        return name
      }
      if token.keyword != nil {
        report(.keywordIsNotAName(text, after: keyword), at: token.range)
      } else {
        report(.invalidName(text), at: token.range)
      }
    case .error:
      break
    default:
      report(.expectedName(kind, after: keyword, example: example), at: token.range)
    }
    return nil
  }

  private mutating func parseJitter() -> JitterSyntax? {
    let start = token.range.start
    switch token.kind {
    case .number:
      guard let number = parsePercent(after: "jitter") else { return nil }
      return JitterSyntax(
        kind: .percent(number), range: SourceRange(start: start, end: previousEnd))
    case .word:
      let kind: JitterSyntax.Kind
      switch token.keyword {
      case .full?: kind = .full
      case .equal?: kind = .equal
      case .decorrelated?: kind = .decorrelated
      default:
        let suggestion = Suggestion.nearest(to: text, in: ["full", "equal", "decorrelated"])
        report(.expectedJitter(suggestion: suggestion), at: token.range)
        return nil
      }
      let range = token.range
      advance()
      return JitterSyntax(kind: kind, range: range)
    case .error:
      return nil
    default:
      report(.expectedJitter(suggestion: nil), at: token.range)
      return nil
    }
  }

  private mutating func parsePercent(after keyword: String) -> NumberLiteralSyntax? {
    switch token.kind {
    case .number:
      let number = parseNumber()
      guard token.kind == .percent else {
        report(
          .missingPercentSign(number.text),
          at: SourceRange(start: number.range.end, end: number.range.end))
        return nil
      }
      advance()
      return number
    case .error:
      return nil
    default:
      report(.expectedPercent(after: keyword), at: token.range)
      return nil
    }
  }

  // MARK: Literals

  /// Reads the current number token, reporting a number too large for a `Double`.
  private mutating func parseNumber() -> NumberLiteralSyntax {
    let literal = text
    let value = Self.doubleValue(lexer.slice(token.start, token.end), text: literal)
    if value == nil { report(.numberTooLarge(literal), at: token.range) }
    let number = NumberLiteralSyntax(text: literal, value: value, range: token.range)
    advance()
    return number
  }

  /// The value of a number's digits, or nil when it is not finite.
  static func doubleValue(_ digits: UnsafeBufferPointer<UInt8>, text: String) -> Double? {
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
      if mantissa < 1 << 53 {
        return Double(mantissa) / powersOfTen[fractionDigits]
      }
    }
    guard let value = Double(text), value.isFinite else { return nil }
    return value
  }

  private static let powersOfTen: [Double] = (0...16).map { exponent in
    var value = 1.0
    for _ in 0..<exponent { value *= 10 }
    return value
  }

  /// The value of a run of decimal digits, or nil when it overflows `Int`.
  private func parseInteger(_ start: Int, _ end: Int) -> Int? {
    var value = 0
    for byte in lexer.slice(start, end) {
      let (times, overflow) = value.multipliedReportingOverflow(by: 10)
      if overflow { return nil }
      let (sum, carry) = times.addingReportingOverflow(Int(byte &- UInt8(ascii: "0")))
      if carry { return nil }
      value = sum
    }
    return value
  }

  /// Reads a duration where one is expected; nil (and a diagnostic) when there is none.
  private mutating func parseDuration(after keyword: String) -> DurationLiteralSyntax? {
    switch token.kind {
    case .duration:
      guard let unit = DurationUnit(lexer.slice(token.unitStart, token.end)) else {
        let unitText = lexer.text(token.unitStart, token.end)
        // The number before the unit is ASCII: the unit's column follows from its offset.
        var unitStart = token.range.start
        unitStart.column += token.unitStart - token.start
        unitStart.offset = token.unitStart
        report(
          .unknownUnit(unitText, suggestion: Self.suggestedUnit(for: unitText)),
          at: SourceRange(start: unitStart, end: token.range.end))
        return nil
      }
      let duration = Self.duration(
        lexer.slice(token.start, token.unitStart), nanosecondsPerUnit: unit.nanoseconds)
      // Too large to represent is also above the longest duration a policy takes.
      if duration == nil { report(.durationTooLong(text), at: token.range) }
      let literal = DurationLiteralSyntax(
        number: lexer.text(token.start, token.unitStart), unit: unit, duration: duration,
        range: token.range)
      advance()
      return literal
    case .number:
      report(.missingUnit(text), at: token.range)
      return nil
    case .error:
      return nil
    default:
      report(.expectedDuration(after: keyword), at: token.range)
      return nil
    }
  }

  /// A unit for a misspelt one: common spellings first, then the nearest unit.
  static func suggestedUnit(for unit: String) -> String? {
    switch unit.lowercased() {
    case "sec", "secs", "second", "seconds": return "s"
    case "min", "mins", "minute", "minutes": return "m"
    case "hr", "hrs", "hour", "hours": return "h"
    case "msec", "msecs", "millis", "millisecond", "milliseconds": return "ms"
    default: return Suggestion.nearest(to: unit, in: ["ms", "s", "m", "h"])
    }
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
