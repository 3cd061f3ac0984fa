// The parser's lines and rule heads. See `Parser.swift` for the parser's state and its entry
// points, and `Parser+Clauses.swift` for the clauses and their arguments.

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
    // Room for the few clauses a rule's line has, so that the array is not regrown as it
    // fills; a line of policy-wide clauses has one or two.
    if head != nil { clauses.reserveCapacity(PolicyParser.clausesPerRule) }
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
      if parseClause(clause) {
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
}
