// The checker at the level of one clause: each clause as the parser hands it on, its
// arguments checked where they stand and its value kept in the rule's (or the policy's)
// state. See `Checker+Rule.swift` for the rule as a whole and `Checker.swift` for the policy.
//
// The parser calls one method per kind of clause with the clause's parts, so that no clause
// value is built, copied and taken apart again for every clause of a file.

extension PolicyChecker {
  // MARK: Rule clauses

  mutating func checkClasses(
    _ names: ArraySlice<NameSyntax>, isExcept: Bool, at place: ClausePlace
  ) {
    guard isReadingRule else {
      isIncomplete = true
      return
    }
    checkErrorClasses(names)
    if isExcept {
      if isFirst(.except, at: place.keyword, after: rule.exceptRange) {
        rule.exceptRange = place.keyword
        rule.exceptNames = names.indices
        rule.excludedClasses = Self.texts(of: names)
      }
    } else if isFirst(.on, at: place.keyword, after: rule.onRange) {
      rule.onRange = place.keyword
      rule.onNames = names.indices
      rule.errorClasses = Self.texts(of: names)
    }
  }

  mutating func checkImmediately(at place: ClausePlace) {
    guard isReadingRule else {
      isIncomplete = true
      return
    }
    recordDelayClause(.immediately, at: place.keyword, shape: .immediate)
  }

  mutating func checkDuration(
    _ keyword: Keyword, _ literal: consuming DurationLiteralSyntax, at place: ClausePlace
  ) {
    switch keyword {
    case .within:
      let checked = checkDuration(literal, of: Keyword.within.text, mustBePositive: true)
      if isFirst(.within, at: place.keyword, after: withinClause?.range) {
        withinClause = DurationClause(place.keyword, literal)
        deadline = checked
      }
    case .timeout:
      let checked = checkDuration(literal, of: Keyword.timeout.text, mustBePositive: true)
      if isFirst(.timeout, at: place.keyword, after: timeoutClause?.range) {
        timeoutClause = DurationClause(place.keyword, literal)
        attemptTimeout = checked
      }
    case .max:
      guard isReadingRule else {
        isIncomplete = true
        return
      }
      noteHedgeConflict(.max, at: place.keyword)
      let checked = checkDuration(literal, of: Keyword.max.text, mustBePositive: true)
      if isFirst(.max, at: place.keyword, after: rule.maxClause?.range) {
        rule.maxClause = DurationClause(place.keyword, literal)
        rule.cap = checked
      }
    default:  // `delay`
      guard isReadingRule else {
        isIncomplete = true
        return
      }
      noteHedgeConflict(.delay, at: place.keyword)
      var shape: DelayShape?
      if let delay = checkDuration(literal, of: Keyword.delay.text, mustBePositive: false) {
        if delay == .zero { report(.zeroDelay(literal.text), at: place.keyword) }
        shape = .delayed(delay)
      }
      recordDelayClause(.delay, at: place.keyword, shape: shape)
    }
  }

  mutating func checkBackoff(
    _ literal: consuming DurationLiteralSyntax, _ growth: consuming BackoffGrowthSyntax?,
    at place: ClausePlace
  ) {
    guard isReadingRule else {
      isIncomplete = true
      return
    }
    noteHedgeConflict(.backoff, at: place.keyword)
    let initial = checkDuration(literal, of: Keyword.backoff.text, mustBePositive: true)
    var shape: DelayShape?
    switch growth {
    case nil:
      shape = initial.map { .exponential($0, multiplier: 2) }
    case .factor(let number)?:
      let factor = checkFactor(number, initial: literal)
      if let initial, let factor { shape = .exponential(initial, multiplier: factor) }
    case .increment(let step)?:
      let increment = checkDuration(step, of: Keyword.backoff.text, mustBePositive: false)
      if let initial, let increment { shape = .linear(initial, increment: increment) }
    }
    recordDelayClause(.backoff, at: place.keyword, shape: shape)
  }

  mutating func checkDelays(_ literals: [DurationLiteralSyntax], at place: ClausePlace) {
    guard isReadingRule else {
      isIncomplete = true
      return
    }
    noteHedgeConflict(.delays, at: place.keyword)
    var delays: [Duration] = []
    delays.reserveCapacity(literals.count)
    var isValid = !literals.isEmpty
    if literals.isEmpty { isIncomplete = true }  // the parser reports the missing duration
    for literal in literals {
      if let delay = checkDuration(literal, of: Keyword.delays.text, mustBePositive: false) {
        delays.append(delay)
      } else {
        isValid = false
      }
    }
    recordDelayClause(.delays, at: place.keyword, shape: isValid ? .custom(delays) : nil)
  }

  mutating func checkJitter(_ syntax: JitterSyntax, at place: ClausePlace) {
    guard isReadingRule else {
      isIncomplete = true
      return
    }
    noteHedgeConflict(.jitter, at: place.keyword)
    let checked = checkJitter(syntax)
    if isFirst(.jitter, at: place.keyword, after: rule.jitterRange) {
      rule.jitterRange = place.keyword
      rule.jitter = checked
    }
  }

  mutating func checkHook(_ name: NameSyntax, at place: ClausePlace) {
    guard isReadingRule else {
      isIncomplete = true
      return
    }
    noteHedgeConflict(.after, at: place.keyword)
    checkHook(name)
    if isFirst(.after, at: place.keyword, after: rule.afterRange) {
      rule.afterRange = place.keyword
      rule.hook = name.text
    }
  }

  mutating func checkHonoringRetryAfter(at place: ClausePlace) {
    guard isReadingRule else {
      isIncomplete = true
      return
    }
    noteHedgeConflict(.honoring, at: place.keyword)
    if isFirst(.honoring, at: place.keyword, after: rule.honoringRange) {
      rule.honoringRange = place.keyword
    }
  }

  /// Records a delay clause (`immediately`, `delay`, `backoff`, `delays`) of the rule being
  /// read, whose arguments were checked into `shape` (nil when one is wrong): the first sets
  /// the rule's delays, a later one is a duplicate or a conflict.
  mutating func recordDelayClause(_ keyword: Keyword, at range: SourceRange, shape: DelayShape?) {
    guard let first = rule.delayClause else {
      rule.shape = shape
      rule.delayClause = (keyword, range)
      if keyword != .immediately { rule.retriesImmediately = false }
      return
    }
    if first.keyword == keyword {
      _ = isFirst(keyword, at: range, after: first.range)
    } else {
      let firstKeyword = first.keyword.rawValue
      report(
        .conflictingDelay(keyword.rawValue, with: firstKeyword), at: range,
        notes: [Diagnostic(.firstGivenHere(firstKeyword), at: first.range)])
    }
  }

  /// Keeps a rule clause that has no meaning under `hedge`, reported at the policy's end when
  /// it has `hedge`, which may come later.
  mutating func noteHedgeConflict(_ keyword: Keyword, at range: SourceRange) {
    hedgeConflicts.append(keyword, at: range)
  }

  // MARK: Policy-wide clauses

  mutating func checkBudget(_ number: NumberLiteralSyntax, at place: ClausePlace) {
    var checked: Double?
    if let percent = number.value {
      if Self.isPercentInRange(number.digits, value: percent) {
        checked = percent / 100
      } else {
        report(.budgetOutOfRange(number.text), at: number.range)
      }
    } else {
      isIncomplete = true
    }
    if isFirst(.budget, at: place.keyword, after: budgetClause) {
      budgetClause = place.keyword
      budgetRatio = checked
    }
  }

  mutating func checkHedge(_ syntax: HedgeSyntax, at place: ClausePlace) {
    var checked: HedgePolicy?
    let delay = checkDuration(syntax.delay, of: Keyword.hedge.text, mustBePositive: false)
    if let count = syntax.count {
      if count < 1 || count > PolicyLimits.largestHedgeCount {
        report(.hedgeCountOutOfRange(count), at: syntax.countRange)
      } else if let delay {
        checked = HedgePolicy(count: count, delay: delay)
      }
    } else {
      isIncomplete = true
    }
    if isFirst(.hedge, at: place.keyword, after: hedgeClause) {
      hedgeClause = place.keyword
      hedge = checked
    }
  }
}
