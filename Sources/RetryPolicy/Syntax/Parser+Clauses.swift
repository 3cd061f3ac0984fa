// The parser's lines, rule heads, clauses and their arguments. See `Parser.swift` for the
// parser's state and its entry points.

extension PolicyParser {
  // MARK: Lines

  /// Parses one line, up to (not including) its end, into `lines`; returns its range, or nil
  /// when nothing could be recorded.
  mutating func parseLine(isPolicyText: Bool) -> SourceRange? {
    let start = token.range.start
    let diagnosticsBefore = diagnosticCount
    var head: RetryHeadSyntax?
    var clauseCount = 0
    // Once the line's start is diagnosed, a missing `retry` is not reported again.
    var isStartDiagnosed = false
    if token.keyword == .retry {
      head = parseHead()
    } else if !isAtClause {
      reportUnexpected(atLineStart: true, isPolicyText: isPolicyText)
      isStartDiagnosed = true
      skipToClause()
    }
    clauses = []
    while !isAtLineEnd {
      guard token.kind == .word, let keyword = token.keyword, let clause = token.clause else {
        reportUnexpected(atLineStart: false, isPolicyText: isPolicyText)
        skipToClause()
        continue
      }
      if head == nil && !clause.isPolicyWide && !isStartDiagnosed {
        report(.expectedRetry(before: keyword.rawValue), at: token.range)
        isStartDiagnosed = true
      }
      if parseClause(keyword) {
        clauseCount += 1
      } else {
        skipToClause()
      }
    }
    let range = SourceRange(start: start, end: previousEnd)
    // A line where nothing could be recorded is not kept.
    if head == nil && clauseCount == 0 { return nil }
    lines.append(
      LineSyntax(
        head: head, clauses: clauses, range: range,
        hasSyntaxErrors: diagnosticCount > diagnosticsBefore))
    clauses = []
    return range
  }

  /// Reports the current token where a clause (or a line) was expected.
  mutating func reportUnexpected(atLineStart: Bool, isPolicyText: Bool) {
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
        let suggestion = Suggestion.nearest(to: text, in: ClauseTable.clauseWords)
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
  mutating func parseHead() -> RetryHeadSyntax {
    let start = token.range.start
    let retryRange = token.range
    advance()
    var count = RetryHeadSyntax.Count.times(nil)
    var countRange = retryRange
    switch token.kind {
    case .number where !token.hasFraction:
      countRange = token.range
      if let value = Literals.integer(lexer.slice(token.start, token.end)) {
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

  /// Parses the clause that starts with `keyword`, at its keyword, into `clauses`; false
  /// after an error.
  mutating func parseClause(_ keyword: Keyword) -> Bool {
    let keywordRange = token.range
    let word = keyword.rawValue
    advance()
    switch keyword {
    case .on, .except:
      guard let names = parseNames(after: word) else { return false }
      append(keyword == .except ? .except(names) : .on(names), at: keywordRange)
      return true
    case .immediately:
      append(.immediately, at: keywordRange)
      return true
    case .delay:
      guard let duration = parseDuration(after: word) else { return false }
      append(.delay(duration), at: keywordRange)
      return true
    case .max:
      guard let duration = parseDuration(after: word) else { return false }
      append(.max(duration), at: keywordRange)
      return true
    case .within:
      guard let duration = parseDuration(after: word) else { return false }
      append(.within(duration), at: keywordRange)
      return true
    case .timeout:
      guard let duration = parseDuration(after: word) else { return false }
      append(.timeout(duration), at: keywordRange)
      return true
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
      append(.backoff(duration, growth), at: keywordRange)
      return true
    case .delays:
      guard let first = parseDuration(after: word) else { return false }
      var durations = [first]
      while token.kind == .comma {
        advance()
        guard let next = parseDuration(after: ",") else { return false }
        durations.append(next)
      }
      append(.delays(durations), at: keywordRange)
      return true
    case .jitter:
      guard let jitter = parseJitter() else { return false }
      append(.jitter(jitter), at: keywordRange)
      return true
    case .after:
      guard
        let name = parseName(
          "a hook name", after: word, example: "refreshToken", acceptsTimeout: false)
      else { return false }
      append(.after(name), at: keywordRange)
      return true
    case .honoring:
      guard token.keyword == .retryAfter else {
        if token.kind != .error { report(.expectedRetryAfter(), at: token.range) }
        return false
      }
      advance()
      append(.honoringRetryAfter, at: keywordRange)
      return true
    case .budget:
      guard let percent = parsePercent(after: word) else { return false }
      append(.budget(percent), at: keywordRange)
      return true
    case .hedge:
      guard let hedge = parseHedge() else { return false }
      append(.hedge(hedge), at: keywordRange)
      return true
    case .breaker:
      guard let breaker = parseBreaker() else { return false }
      append(.breaker(breaker), at: keywordRange)
      return true
    case .policy, .retry, .forever, .full, .equal, .decorrelated, .retryAfter, .x:
      return false
    }
  }

  /// Parses `N after D` after `hedge`.
  mutating func parseHedge() -> HedgeSyntax? {
    guard token.kind == .number, !token.hasFraction else {
      if token.kind != .error { report(.expectedHedge(), at: token.range) }
      // A count that is no whole number: the rest of the clause is skipped, not read as `after`.
      if token.kind == .number {
        advance()
        if token.keyword == .after { advance() }
        if token.kind == .duration { advance() }
      }
      return nil
    }
    let countRange = token.range
    let count = Literals.integer(lexer.slice(token.start, token.end))
    if count == nil { report(.numberTooLarge(text), at: token.range) }
    advance()
    guard token.keyword == .after else {
      if token.kind != .error { report(.expectedHedge(), at: token.range) }
      return nil
    }
    advance()
    guard let delay = parseDuration(after: Keyword.after.text) else { return nil }
    return HedgeSyntax(count: count, countRange: countRange, delay: delay)
  }

  /// Parses `P% [over D] [min N] [for D]` after `breaker`; `over`, `min` and `for` are words
  /// of this clause only, read in this order.
  mutating func parseBreaker() -> BreakerSyntax? {
    guard let percent = parsePercent(after: Keyword.breaker.text) else { return nil }
    var breaker = BreakerSyntax(percent: percent)
    if isBreakerWord(.over) {
      advance()
      guard let window = parseDuration(after: BreakerWord.over.text) else { return nil }
      breaker.window = window
    }
    if isBreakerWord(.min) {
      advance()
      guard token.kind == .number, !token.hasFraction else {
        if token.kind != .error { report(.expectedBreakerMinimum(), at: token.range) }
        if token.kind == .number { advance() }
        return nil
      }
      breaker.minimum = parseNumber()
    }
    if isBreakerWord(.for) {
      advance()
      guard let open = parseDuration(after: BreakerWord.for.text) else { return nil }
      breaker.openDuration = open
    }
    return breaker
  }

  /// Whether the current token is `word`, a word of the `breaker` clause.
  func isBreakerWord(_ word: BreakerWord) -> Bool {
    token.kind == .word && token.keyword == nil && text == word.text
  }

  /// Appends a clause whose keyword stands at `keywordRange` and which ends with the last
  /// token read.
  mutating func append(_ kind: ClauseSyntax.Kind, at keywordRange: SourceRange) {
    clauses.append(
      ClauseSyntax(
        kind: kind, keywordRange: keywordRange,
        range: SourceRange(start: keywordRange.start, end: previousEnd)))
  }

  /// Parses the names of `on` or `except`.
  mutating func parseNames(after keyword: String) -> [NameSyntax]? {
    guard let first = parseClassName(after: keyword) else { return nil }
    var names = [first]
    while token.kind == .comma {
      advance()
      guard let next = parseClassName(after: ",") else { return nil }
      names.append(next)
    }
    return names
  }

  /// Parses an error class: a name, or an HTTP status form (`503`, `5xx`), which the lexer
  /// reads as a number or as a number with the unit `xx`; the checker validates the form.
  mutating func parseClassName(after keyword: String) -> NameSyntax? {
    if token.kind == .number || (token.kind == .duration && isStatusClassUnit) {
      let name = NameSyntax(text: text, range: token.range)
      advance()
      return name
    }
    return parseName(
      "an error class name", after: keyword, example: "serverError", acceptsTimeout: true)
  }

  /// Whether the duration token's unit is letters `x` only (`5xx`, `5XX`): a status class.
  private var isStatusClassUnit: Bool {
    let unit = lexer.slice(token.unitStart, token.end)
    return !unit.isEmpty && unit.allSatisfy { $0 == UInt8(ascii: "x") || $0 == UInt8(ascii: "X") }
  }

  /// Parses a name; `timeout` is also the built-in error class of that name.
  mutating func parseName(
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

  mutating func parseJitter() -> JitterSyntax? {
    let start = token.range.start
    switch token.kind {
    case .number:
      guard let number = parsePercent(after: Keyword.jitter.text) else { return nil }
      return JitterSyntax(
        kind: .percent(number), range: SourceRange(start: start, end: previousEnd))
    case .word:
      let kind: JitterSyntax.Kind
      switch token.keyword {
      case .full?: kind = .full
      case .equal?: kind = .equal
      case .decorrelated?: kind = .decorrelated
      default:
        let suggestion = Suggestion.nearest(to: text, in: LanguageWords.jitterKinds)
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

  mutating func parsePercent(after keyword: String) -> NumberLiteralSyntax? {
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
  mutating func parseNumber() -> NumberLiteralSyntax {
    let digits = lexer.slice(token.start, token.end)
    let value = Literals.double(digits)
    if value == nil { report(.numberTooLarge(text), at: token.range) }
    let number = NumberLiteralSyntax(
      digits: LiteralText(digits), value: value, range: token.range)
    advance()
    return number
  }

  /// Reads a duration where one is expected; nil (and a diagnostic) when there is none.
  mutating func parseDuration(after keyword: String) -> DurationLiteralSyntax? {
    switch token.kind {
    case .duration:
      guard let unit = DurationUnit(lexer.slice(token.unitStart, token.end)) else {
        let unitText = lexer.text(token.unitStart, token.end)
        // The number before the unit is ASCII: the unit's column follows from its offset.
        let unitStart = token.location(at: token.unitStart)
        let suggestion = Literals.suggestion(
          forUnit: unitText, digits: lexer.slice(token.start, token.unitStart))
        // The same duration in another unit (`2d` → `48h`) replaces the number too.
        var fixIts: [FixIt]?
        if case .literal(let literal)? = suggestion {
          fixIts = [FixIt(range: token.range, replacement: literal)]
        }
        report(
          .unknownUnit(unitText, suggestion: suggestion),
          at: SourceRange(start: unitStart, end: token.range.end), fixIts: fixIts)
        return nil
      }
      let duration = Literals.duration(
        lexer.slice(token.start, token.unitStart), nanosecondsPerUnit: unit.nanoseconds)
      // Too large to represent is also above the longest duration a policy takes.
      if duration == nil { report(.durationTooLong(text), at: token.range) }
      let literal = DurationLiteralSyntax(
        digits: LiteralText(lexer.slice(token.start, token.unitStart)), unit: unit,
        duration: duration, range: token.range)
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
}
