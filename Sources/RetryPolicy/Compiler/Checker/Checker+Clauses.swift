// The checker at the level of one clause: its arguments checked against the limits of its
// entry in the clause table, then its meaning kept in the rule's (or the policy's) state. See
// `Checker+Rule.swift` for the rule as a whole and `Checker.swift` for the policy.

extension PolicyChecker {
  /// Checks one clause of a line: its limits, from the table, then its meaning.
  ///
  /// `names` collects the line's error class names: the first `on` and `except` are slices of
  /// it.
  mutating func check(_ clause: ClauseSyntax, names: inout [NameSyntax]) {
    let place = ClausePlace(keyword: clause.keywordRange, clause: clause.range)
    // A rule clause on a line without `retry` is already reported by the parser.
    guard clause.isPolicyWide || isReadingRule else {
      isIncomplete = true
      return
    }
    let isInLimits = checkLimits(of: clause)
    switch clause.clause {
    case .on, .except:
      let list = clause.names(0)
      // The line's first list is shared, not copied.
      if names.isEmpty { names = list } else { names += list }
      checkClasses(
        names[(names.count - list.count)...], isExcept: clause.clause == .except, at: place)
    case .immediately:
      recordDelayClause(.immediately, at: place.keyword, shape: .immediate)
    case .delay:
      noteHedgeConflict(.delay, at: place.keyword)
      var shape: DelayShape?
      if isInLimits, let literal = clause.duration(0), let delay = literal.duration {
        if delay == .zero { report(.zeroDelay(literal.text), at: place.keyword) }
        shape = .delayed(delay)
      }
      recordDelayClause(.delay, at: place.keyword, shape: shape)
    case .backoff:
      noteHedgeConflict(.backoff, at: place.keyword)
      recordDelayClause(.backoff, at: place.keyword, shape: backoffShape(clause, isInLimits))
    case .delays:
      noteHedgeConflict(.delays, at: place.keyword)
      var shape: DelayShape?
      if isInLimits, case .durations(let literals)? = clause.argument(0) {
        shape = .custom(literals.compactMap(\.duration))
      }
      recordDelayClause(.delays, at: place.keyword, shape: shape)
    case .jitter:
      noteHedgeConflict(.jitter, at: place.keyword)
      if isFirst(.jitter, at: place.keyword, after: rule.jitterRange) {
        rule.jitterRange = place.keyword
        if isInLimits, case .jitter(let syntax)? = clause.argument(0) {
          rule.jitter = Self.jitter(syntax)
        }
      }
    case .max:
      noteHedgeConflict(.max, at: place.keyword)
      if isFirst(.max, at: place.keyword, after: rule.maxClause?.range),
        let literal = clause.duration(0)
      {
        rule.maxClause = DurationClause(place.keyword, literal)
        rule.cap = isInLimits ? literal.duration : nil
      }
    case .after:
      noteHedgeConflict(.after, at: place.keyword)
      guard case .name(let name)? = clause.argument(0) else { return }
      checkHook(name)
      if isFirst(.after, at: place.keyword, after: rule.afterRange) {
        rule.afterRange = place.keyword
        rule.hook = name.text
      }
    case .honoringRetryAfter:
      noteHedgeConflict(.honoring, at: place.keyword)
      if isFirst(.honoring, at: place.keyword, after: rule.honoringRange) {
        rule.honoringRange = place.keyword
      }
    case .within:
      if isFirst(.within, at: place.keyword, after: withinClause?.range),
        let literal = clause.duration(0)
      {
        withinClause = DurationClause(place.keyword, literal)
        deadline = isInLimits ? literal.duration : nil
      }
    case .timeout:
      if isFirst(.timeout, at: place.keyword, after: timeoutClause?.range),
        let literal = clause.duration(0)
      {
        timeoutClause = DurationClause(place.keyword, literal)
        attemptTimeout = isInLimits ? literal.duration : nil
      }
    case .budget:
      if isFirst(.budget, at: place.keyword, after: budgetClause) {
        budgetClause = place.keyword
        budgetRatio = isInLimits ? clause.number(0)?.value.map { $0 / 100 } : nil
      }
    case .hedge:
      if isFirst(.hedge, at: place.keyword, after: hedgeClause) {
        hedgeClause = place.keyword
        if isInLimits, let count = clause.argument(0)?.wholeNumber,
          let delay = clause.duration(1)?.duration
        {
          hedge = HedgePolicy(count: count, delay: delay)
        }
      }
    case .breaker:
      if isFirst(.breaker, at: place.keyword, after: breakerClause) {
        breakerClause = place.keyword
        if isInLimits { breaker = Self.breaker(clause) }
      }
    case .limit:
      if isFirst(.limit, at: place.keyword, after: limitClause) {
        limitClause = place.keyword
        let form = checkLimitForm(clause, at: place.keyword)
        if isInLimits { limit = form }
      }
    case .throttle:
      if isFirst(.throttle, at: place.keyword, after: throttleClause) {
        throttleClause = place.keyword
        if isInLimits, case .factor(let number)? = clause.argument(0), let factor = number.value {
          throttle = ThrottlePolicy(
            factor: factor, window: clause.duration(1)?.duration ?? ThrottlePolicy.defaultWindow)
        }
      }
    case .rate:
      if isFirst(.rate, at: place.keyword, after: rateClause) {
        rateClause = place.keyword
        if isInLimits, case .rate(let number, let period)? = clause.argument(0),
          let count = number.value.flatMap({ Int(exactly: $0) })
        {
          rate = RatePolicy(
            count: count, per: period.duration, burst: clause.argument(1)?.wholeNumber)
        }
      }
    }
  }

  /// Checks that a `limit` clause is `limit N [queue M]` or `limit adaptive [min A] [max B]`
  /// with A ≤ B; returns its value, settings left out taking their defaults.
  mutating func checkLimitForm(_ clause: ClauseSyntax, at range: SourceRange)
    -> ConcurrencyLimitPolicy?
  {
    let count = clause.argument(0)?.wholeNumber
    let isAdaptive = clause.argument(1) != nil
    let queue = clause.argument(2)
    let minimum = clause.argument(3)
    let maximum = clause.argument(4)
    if clause.argument(0) != nil, isAdaptive {
      report(.limitForm("'limit' takes a number or 'adaptive', not both"), at: range)
      return nil
    }
    if clause.argument(0) == nil, !isAdaptive {
      report(
        .limitForm("'limit' needs a number or 'adaptive': 'limit 16' or 'limit adaptive'"),
        at: range)
      return nil
    }
    if isAdaptive {
      if queue != nil {
        report(.limitForm("'queue' goes with 'limit N', not with 'limit adaptive'"), at: range)
        return nil
      }
      let low = minimum?.wholeNumber ?? ConcurrencyLimitPolicy.defaultAdaptiveMinimum
      let high = maximum?.wholeNumber ?? ConcurrencyLimitPolicy.defaultAdaptiveMaximum
      guard low <= high else {
        report(
          .limitForm("limit 'min' \(low) is above 'max' \(high); it must be at most 'max'"),
          at: range)
        return nil
      }
      return .adaptive(minimum: low, maximum: high)
    }
    if minimum != nil || maximum != nil {
      report(.limitForm("'min' and 'max' go with 'limit adaptive', not with 'limit N'"), at: range)
      return nil
    }
    guard let count else { return nil }
    return .fixed(limit: count, queue: queue?.wholeNumber ?? 0)
  }

  /// The delays of a `backoff` clause whose limits were checked; nil when one is wrong.
  mutating func backoffShape(_ clause: ClauseSyntax, _ isInLimits: Bool) -> DelayShape? {
    guard let literal = clause.duration(0) else { return nil }
    switch clause.argument(1) {
    case .factor(let number)?:
      // A factor of exactly 1 is a constant delay: a warning.
      if let factor = number.value,
        Literals.order(of: number.digits, value: factor, comparedWith: PolicyLimits.smallestFactor)
          == .equal
      {
        report(.factorOfOne(initial: literal.text), at: number.range)
      }
      guard isInLimits, let initial = literal.duration, let factor = number.value else {
        return nil
      }
      return .exponential(initial, multiplier: factor)
    case .increment(let step)?:
      guard isInLimits, let initial = literal.duration, let increment = step.duration else {
        return nil
      }
      return .linear(initial, increment: increment)
    case nil, .word?, .count?, .duration?, .durations?, .percent?, .names?, .name?, .jitter?,
      .rate?:
      guard isInLimits, let initial = literal.duration else { return nil }
      return .exponential(initial, multiplier: 2)
    }
  }

  /// The jitter a `jitter` argument within its limits gives.
  static func jitter(_ syntax: JitterSyntax) -> Jitter? {
    switch syntax.kind {
    case .full: .full
    case .equal: .equal
    case .decorrelated: .decorrelated
    case .percent(let number): number.value.map { .proportional(fraction: $0 / 100) }
    }
  }

  /// The breaker a `breaker` clause within its limits gives; an omitted setting takes its
  /// default.
  static func breaker(_ clause: ClauseSyntax) -> CircuitBreakerPolicy? {
    guard let percent = clause.number(0)?.value.flatMap({ Int(exactly: $0) }) else { return nil }
    return CircuitBreakerPolicy(
      failurePercent: percent,
      window: clause.duration(1)?.duration ?? CircuitBreakerPolicy.defaultWindow,
      minimumAttempts: clause.argument(2)?.wholeNumber
        ?? CircuitBreakerPolicy.defaultMinimumAttempts,
      openDuration: clause.duration(3)?.duration ?? CircuitBreakerPolicy.defaultOpenDuration)
  }

  // MARK: Rule clauses

  mutating func checkClasses(
    _ names: ArraySlice<NameSyntax>, isExcept: Bool, at place: ClausePlace
  ) {
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
}
