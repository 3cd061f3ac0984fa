// The parser's clauses and their arguments. See `Parser.swift` for the parser's state and its
// entry points, and `Parser+Lines.swift` for lines and rule heads.

extension PolicyParser {
  // MARK: Clauses

  /// Parses `clause`, at its keyword, into `clauses`; false after an error.
  ///
  /// The arguments are read by the shapes of the clause's entry in the table: the positional
  /// ones in order, then those after words of their own (`over D`), each at most once and in
  /// the entry's order; a word out of order or given twice is reported at the word. The
  /// words that messages quote are made only when a message is. The entry's arguments are
  /// named by their index and read in place (see `Clause.argumentSpec(_:)`).
  mutating func parseClause(_ clause: Clause) -> Bool {
    let argumentCount = clause.argumentCount
    let keywordRange = token.range
    advance()
    var syntax = ClauseSyntax(clause: clause, keywordRange: keywordRange, range: keywordRange)
    var index = 0
    // The positional arguments.
    while index < argumentCount, clause.argumentSpec(index).word == nil {
      if clause.argumentSpec(index).isOptional && !isAtValue(of: clause.argumentSpec(index).shape) {
        index += 1
        continue
      }
      guard let value = parseValue(index, of: clause, after: clause.keyword.text) else {
        return false
      }
      syntax.setArgument(value, at: index)
      index += 1
    }
    // The arguments after words of their own.
    let firstWorded = index
    var written: [(index: Int, range: SourceRange)] = []
    while let found = wordedArgument(of: clause, from: firstWorded) {
      let wordRange = token.range
      // A keyword given again starts its own clause, unless a value of this clause follows
      // (`hedge 2 after 1s after refreshToken` has an `after` clause; `… after 1s after 2s`
      // repeats `after`).
      if syntax.hasArgument(found), isStartingOwnClause(clause.argumentSpec(found).shape) { break }
      advance()
      if syntax.hasArgument(found) {
        report(.repeatedWord(clause.argumentSpec(found).word ?? "", in: clause.text), at: wordRange)
      } else if let later = written.first(where: { $0.index > found }) {
        guard
          let value = parseValue(found, of: clause, after: clause.argumentSpec(found).word ?? "")
        else {
          return false
        }
        syntax.setArgument(value, at: found)
        reportMisplaced(
          clause.argumentSpec(found).word ?? "",
          before: clause.argumentSpec(later.index).word ?? "",
          in: clause.text, at: wordRange, after: later.range)
        written.append((found, wordRange))
        continue
      }
      guard let value = parseValue(found, of: clause, after: clause.argumentSpec(found).word ?? "")
      else {
        return false
      }
      if !syntax.hasArgument(found) {
        syntax.setArgument(value, at: found)
        written.append((found, wordRange))
      }
    }
    for offset in firstWorded..<argumentCount
    where !clause.argumentSpec(offset).isOptional && !syntax.hasArgument(offset) {
      if token.kind != .error {
        let argument = clause.argumentSpec(offset)
        report(
          argument.expectedWord ?? .expectedWord(argument.word ?? "", in: clause.text),
          at: token.range)
      }
      return false
    }
    syntax.range = SourceRange(start: keywordRange.start, end: previousEnd)
    clauses.append(consume syntax)
    return true
  }

  /// The index of the argument of `clause`'s entry, from `start` on, whose word the current
  /// token is.
  func wordedArgument(of clause: Clause, from start: Int) -> Int? {
    let count = clause.argumentCount
    guard token.kind == .word, start < count else { return nil }
    for index in start..<count {
      if let keyword = clause.argumentSpec(index).wordKeyword {
        if token.keyword == keyword { return index }
      } else if token.keyword == nil, let word = clause.argumentSpec(index).word,
        lexer.slice(token.start, token.end).elementsEqual(word.utf8)
      {
        return index
      }
    }
    return nil
  }

  /// Whether the current token, a keyword word of an argument given already whose value has
  /// `shape`, starts a clause of its own: it starts one, and what follows it is no value of
  /// that shape.
  func isStartingOwnClause(_ shape: ArgumentShape) -> Bool {
    guard token.clause != nil else { return false }
    var lookahead = lexer
    return !Self.isValue(lookahead.next(), of: shape)
  }

  /// Reports `word` written after `before`, at `wordRange`, with the move as a fix-it: the
  /// text from `before` to the end of the misplaced argument, reordered.
  mutating func reportMisplaced(
    _ word: String, before: String, in clause: String, at wordRange: SourceRange,
    after laterRange: SourceRange
  ) {
    let moved = lexer.text(wordRange.start.offset, previousEnd.offset)
    var between = lexer.text(laterRange.start.offset, wordRange.start.offset)
    while between.last == " " || between.last == "\t" { between.removeLast() }
    let fixIt = FixIt(
      range: SourceRange(start: laterRange.start, end: previousEnd),
      replacement: moved + " " + between)
    report(.misplacedWord(word, before: before, in: clause), at: wordRange, fixIts: [fixIt])
  }

  /// Whether the current token can start a value of `shape`: an optional positional argument
  /// (a backoff's growth) is read only where its value stands.
  func isAtValue(of shape: ArgumentShape) -> Bool {
    Self.isValue(token, of: shape)
  }

  /// Whether `token` can start a value of `shape`.
  static func isValue(_ token: Token, of shape: ArgumentShape) -> Bool {
    switch shape {
    case .growth: token.keyword == .x || token.kind == .plus
    case .factor: token.keyword == .x
    case .count, .percent, .rate: token.kind == .number
    case .duration, .durations: token.kind == .duration || token.kind == .number
    case .errorClasses: token.kind == .word || token.kind == .number || token.kind == .duration
    case .hook: token.kind == .word && token.keyword == nil
    case .jitter: token.kind == .number || token.kind == .word
    case .none: false
    }
  }

  /// Parses the value of the argument at `index` of `clause`'s entry, written after `word`,
  /// by its shape; nil (and a diagnostic) when it is missing or malformed.
  mutating func parseValue(
    _ index: Int, of clause: Clause, after word: @autoclosure () -> String
  ) -> ArgumentSyntax? {
    switch clause.argumentSpec(index).shape {
    case .none:
      return .word
    case .count:
      guard token.kind == .number, !token.hasFraction else {
        if token.kind != .error {
          report(
            clause.argumentSpec(index).expectedValue ?? .expectedWholeNumber(after: word()),
            at: token.range)
        }
        // A count that is no whole number: the rest of the clause is skipped, not read as
        // another clause (`hedge 1.5 after 1s`).
        if token.kind == .number {
          advance()
          skipWords(of: clause)
        }
        return nil
      }
      return .count(takeWholeNumber())
    case .duration:
      return parseDuration(after: word()).map(ArgumentSyntax.duration)
    case .durations:
      guard let first = parseDuration(after: word()) else { return nil }
      var durations = [first]
      while token.kind == .comma {
        advance()
        guard let next = parseDuration(after: ",") else { return nil }
        durations.append(next)
      }
      return .durations(durations)
    case .percent:
      return parsePercent(after: word()).map(ArgumentSyntax.percent)
    case .growth:
      return parseGrowth()
    case .factor:
      guard token.keyword == .x else {
        if token.kind != .error { report(.expectedFactor(), at: token.range) }
        return nil
      }
      return parseGrowth()
    case .errorClasses:
      return parseNames(after: word()).map(ArgumentSyntax.names)
    case .hook:
      let name = parseName(
        "a hook name", after: word(), example: "refreshToken", acceptsTimeout: false)
      return name.map(ArgumentSyntax.name)
    case .jitter:
      return parseJitter().map(ArgumentSyntax.jitter)
    case .rate:
      return parseRate(after: word())
    }
  }

  /// Takes the whole number under the cursor (a count, or a rate's N); a value too large for
  /// an `Int` is reported and kept as its digits, without a value.
  mutating func takeWholeNumber() -> NumberLiteralSyntax {
    let digits = lexer.slice(token.start, token.end)
    let count = Literals.integer(digits)
    if count == nil { report(.numberTooLarge(text), at: token.range) }
    let number = NumberLiteralSyntax(
      digits: LiteralText(digits), value: count.map(Double.init), range: token.range)
    advance()
    return number
  }

  /// Parses a rate, `N/s` or `N/m`: a whole number, `/` and the period, three tokens.
  mutating func parseRate(after word: @autoclosure () -> String) -> ArgumentSyntax? {
    guard token.kind == .number, !token.hasFraction else {
      if token.kind != .error { report(.expectedRate(after: word()), at: token.range) }
      return nil
    }
    let number = takeWholeNumber()
    guard token.kind == .slash else {
      report(.missingRatePeriod(number.text), at: SourceRange(start: previousEnd, end: previousEnd))
      return nil
    }
    advance()
    guard token.kind == .word, let period = RatePeriod(rawValue: text) else {
      if token.kind == .word {
        report(.unknownRatePeriod(text), at: token.range)
      } else if token.kind != .error {
        report(.missingRatePeriod(number.text), at: token.range)
      }
      return nil
    }
    advance()
    return .rate(number, per: period)
  }

  /// Parses `xF` or `+I`, at `x` or `+`.
  mutating func parseGrowth() -> ArgumentSyntax? {
    if token.keyword == .x {
      advance()
      guard token.kind == .number else {
        if token.kind != .error { report(.expectedFactor(), at: token.range) }
        return nil
      }
      return .factor(parseNumber())
    }
    advance()
    guard token.kind == .duration || token.kind == .number else {
      if token.kind != .error { report(.expectedIncrement(), at: token.range) }
      return nil
    }
    return parseDuration(after: "+").map(ArgumentSyntax.increment)
  }

  /// Skips the words of `clause`'s arguments that are keywords (`after` of `hedge`) and the
  /// values after them, which would otherwise be read as clauses of their own.
  mutating func skipWords(of clause: Clause) {
    while let index = wordedArgument(of: clause, from: 0),
      clause.argumentSpec(index).wordKeyword != nil
    {
      advance()
      if token.kind == .number || token.kind == .duration { advance() }
    }
  }

  /// Parses the names of `on` or `except`.
  mutating func parseNames(after keyword: @autoclosure () -> String) -> [NameSyntax]? {
    guard let first = parseClassName(after: keyword()) else { return nil }
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
  mutating func parseClassName(after keyword: @autoclosure () -> String) -> NameSyntax? {
    if token.kind == .number || (token.kind == .duration && isStatusClassUnit) {
      let name = NameSyntax(text: text, range: token.range)
      advance()
      return name
    }
    return parseName(
      "an error class name", after: keyword(), example: "serverError", acceptsTimeout: true)
  }

  /// Whether the duration token's unit is letters `x` only (`5xx`, `5XX`): a status class.
  private var isStatusClassUnit: Bool {
    let unit = lexer.slice(token.unitStart, token.end)
    return !unit.isEmpty && unit.allSatisfy { $0 == UInt8(ascii: "x") || $0 == UInt8(ascii: "X") }
  }

  /// Parses a name; `timeout` is also the built-in error class of that name.
  mutating func parseName(
    _ kind: String, after keyword: @autoclosure () -> String, example: String,
    acceptsTimeout: Bool
  ) -> NameSyntax? {
    switch token.kind {
    case .word:
      if token.isIdentifier || (acceptsTimeout && token.keyword == .timeout) {
        let name = NameSyntax(text: text, range: token.range)
        advance()
        return name
      }
      if token.keyword != nil {
        report(.keywordIsNotAName(text, after: keyword()), at: token.range)
      } else {
        report(.invalidName(text), at: token.range)
      }
    case .error:
      break
    default:
      report(.expectedName(kind, after: keyword(), example: example), at: token.range)
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

  mutating func parsePercent(after keyword: @autoclosure () -> String) -> NumberLiteralSyntax? {
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
      report(.expectedPercent(after: keyword()), at: token.range)
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
  mutating func parseDuration(after keyword: @autoclosure () -> String) -> DurationLiteralSyntax? {
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
      report(.expectedDuration(after: keyword()), at: token.range)
      return nil
    }
  }
}
