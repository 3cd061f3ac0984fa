// The checker at the level of one rule: a `retry` line's clauses, each checked where it
// stands, then the rule as a whole. See `Checker.swift` for the policy level.

extension PolicyChecker {
  /// The texts of names, for a compiled rule.
  static func texts(of names: ArraySlice<NameSyntax>) -> [String] {
    var texts: [String] = []
    texts.reserveCapacity(names.count)
    for name in names { texts.append(name.text) }
    return texts
  }

  // MARK: Rules

  /// The delay clause of a rule, checked, before the count is attached.
  enum DelayShape {
    case immediate
    case delayed(Duration)
    case exponential(Duration, multiplier: Double)
    case linear(Duration, increment: Duration)
    case custom([Duration])

    func behavior(maxCount: Int?) -> RepeatBehavior {
      switch self {
      case .immediate: .immediate(maxCount: maxCount)
      case .delayed(let delay): .delayed(maxCount: maxCount, delay: delay)
      case .exponential(let initial, let multiplier):
        .exponential(maxCount: maxCount, initial: initial, multiplier: multiplier)
      case .linear(let initial, let increment):
        .linear(maxCount: maxCount, initial: initial, increment: increment)
      case .custom(let delays): .customTimerDelayed(maxCount: maxCount, delays: delays)
      }
    }

    /// The delay before the first retry, without jitter or cap.
    var firstDelay: Duration {
      switch self {
      case .immediate: .zero
      case .delayed(let delay): delay
      case .exponential(let initial, _), .linear(let initial, _): initial
      case .custom(let delays): delays.first ?? .zero
      }
    }

    /// Whether every delay of the shape is zero.
    var isAlwaysZero: Bool {
      switch self {
      case .immediate: true
      case .delayed(let delay): delay == .zero
      case .custom(let delays): delays.allSatisfy { $0 == .zero }
      case .exponential, .linear: false  // their first delay is positive
      }
    }
  }

  /// What the checker knows of the rule being read: its count, and its first clause of each kind.
  ///
  /// Clauses are checked one at a time, as the parser reads them.
  struct RuleState {
    var head: RetryHeadSyntax?
    var maxCount: Int?
    var shape: DelayShape?
    var jitter: Jitter?
    var cap: Duration?
    /// The classes of the first `on`, and where its names stand among the line's names.
    var errorClasses: [String] = []
    var onNames: Range<Int>?
    /// The classes of the first `except`, and where its names stand among the line's names.
    var excludedClasses: [String] = []
    var exceptNames: Range<Int>?
    var hook: String?
    /// The first delay clause's keyword and its range.
    var delayClause: (keyword: Keyword, range: SourceRange)?
    var onRange: SourceRange?
    var exceptRange: SourceRange?
    var jitterRange: SourceRange?
    /// The first `max`'s keyword range and its duration as written.
    var maxClause: DurationClause?
    var afterRange: SourceRange?
    var honoringRange: SourceRange?
    var retriesImmediately = true
  }

  /// Starts checking the rule that `head` begins.
  mutating func beginRule(_ head: RetryHeadSyntax) {
    ruleCount += 1
    // Outside a rule the state is already empty (`finishRule` empties it): only the head is
    // set, so that no empty state is destroyed and made again for every rule.
    if isReadingRule { rule = RuleState() }
    rule.head = head
    isReadingRule = true
    switch head.count {
    case .times(let count?):
      if count > PolicyLimits.largestCount {
        report(.countTooLarge(count), at: head.countRange)
      } else {
        rule.maxCount = Swift.max(0, count)
      }
    case .times(nil):
      isIncomplete = true
    case .forever:
      foreverCounts.append(head.countRange)
    }
  }

  /// Finishes the rule being read: the checks of the rule as a whole, then its compiled form.
  ///
  /// `isComplete` says whether its line parsed without an error (otherwise a clause may be
  /// missing, and checks that rest on a clause's absence would mislead).
  mutating func finishRule(isComplete: Bool, names: [NameSyntax]) {
    guard isReadingRule, let head = rule.head else { return }
    isReadingRule = false
    // Read in place, not moved out (the state is large), and emptied for the next rule.
    defer { rule = RuleState() }
    let errorClasses = rule.errorClasses
    let excludedClasses = rule.excludedClasses
    // `names` holds the line's names: the first `on` and `except` are slices of it.
    if let onNames = rule.onNames, let exceptNames = rule.exceptNames,
      onNames.upperBound <= names.count, exceptNames.upperBound <= names.count
    {
      // Where each class of `on` is first given: one pass over each list, however long.
      var firsts: [String: SourceRange] = [:]
      firsts.reserveCapacity(onNames.count)
      for name in names[onNames] where firsts[name.text] == nil {
        firsts[name.text] = name.range
      }
      for name in names[exceptNames] {
        guard let first = firsts[name.text] else { continue }
        report(
          .classInOnAndExcept(name.text), at: name.range,
          notes: [Diagnostic(.firstGivenHere(name.text), at: first)])
      }
    }

    // On a line with a syntax error the delay clause may be the broken one: saying that the
    // rule has no delay would only mislead.
    if let jitterRange = rule.jitterRange, rule.retriesImmediately, isComplete {
      report(.jitterWithoutDelay, at: jitterRange)
    }
    if let maxClause = rule.maxClause {
      if (rule.retriesImmediately && isComplete) || rule.shape?.isAlwaysZero == true {
        report(.capWithoutDelay, at: maxClause.range)
      } else if let cap = rule.cap, let first = rule.shape?.firstDelay, cap < first {
        report(
          .capBelowFirstDelay(
            cap: maxClause.text, firstDelay: first.policyText),
          at: maxClause.range)
      }
    }

    // A rule that names an error takes it before any rule without `on` (see
    // `RetryStateMachine.takingRule`): a catch-all hides only later catch-alls, and a rule
    // hides a later one whose every class it names.
    if rule.onRange == nil || errorClasses.contains("any") {
      if let catchAllLine {
        report(.unreachableRule(catchAllLine: catchAllLine), at: head.range)
      } else if rule.exceptRange == nil {
        catchAllLine = head.range.start.line
      }
    } else if let line = hiddenRuleLine(errorClasses) {
      report(.hiddenRule(namingLine: line), at: head.range)
    } else if rule.exceptRange == nil, namingRules.count < 64 {
      namingRules.append((head.range.start.line, errorClasses))
    }

    // A missing value here was reported above (or by the parser): nothing to compile.
    guard rule.maxCount != nil || head.count == .forever else { return }
    if rule.delayClause != nil && rule.shape == nil { return }
    if rule.jitterRange != nil && rule.jitter == nil { return }
    if rule.maxClause != nil && rule.cap == nil { return }
    let compiled = RetryRule(
      behavior: (rule.shape ?? .immediate).behavior(maxCount: rule.maxCount),
      errorClasses: errorClasses, excludedClasses: excludedClasses, jitter: rule.jitter,
      maxDelay: rule.cap, hook: rule.hook, honorsRetryAfter: rule.honoringRange != nil)
    rules.append(consume compiled)
  }

  /// Checks a duration against the limits; nil when it is wrong or was unreadable.
  mutating func checkDuration(
    _ literal: DurationLiteralSyntax, of keyword: Keyword, mustBePositive: Bool
  ) -> Duration? {
    guard let duration = literal.duration else {
      isIncomplete = true
      return nil
    }
    // Fractions only add to a duration, so one below the longest is no longer as written;
    // at the longest, the digits say whether it is above (`10000.0000000000001h`).
    if duration > PolicyLimits.longestDuration
      || (duration == PolicyLimits.longestDuration
        && Literals.order(
          of: literal.digits, comparedWith: PolicyLimits.longestDuration(in: literal.unit))
          == .above)
    {
      report(.durationTooLong(literal.text), at: literal.range)
      return nil
    }
    if duration < .zero || (mustBePositive && duration == .zero) {
      report(.zeroDuration(keyword.text), at: literal.range)
      return nil
    }
    return duration
  }

  /// Whether a percentage as written is above 0 and at most 100, compared exactly.
  static func isPercentInRange(_ text: LiteralText, value: Double) -> Bool {
    Literals.order(of: text, value: value, comparedWith: 0) == .above
      && Literals.order(of: text, value: value, comparedWith: PolicyLimits.largestPercent)
        != .above
  }

  // MARK: Names

  mutating func checkErrorClasses(_ names: ArraySlice<NameSyntax>) {
    for name in names where HTTPErrorClasses.isStatusForm(name.text) {
      checkStatusForm(name)
    }
    guard let known = vocabulary.errorClasses else { return }
    var candidates: [String]?  // sorted once per list, and only when a name is unknown
    for name in names
    where !known.contains(name.text) && !Vocabulary.builtInErrorClasses.contains(name.text)
      && !HTTPErrorClasses.isStatusForm(name.text)
    {
      let sorted = candidates ?? Vocabulary.builtInErrorClasses.sorted() + known.sorted()
      candidates = sorted
      let suggestion = Suggestion.nearest(to: name.text, in: sorted)
      report(.unknownErrorClass(name.text, suggestion: suggestion), at: name.range)
    }
  }

  /// Reports a status code outside 100–599 or a status class other than `1xx` … `5xx`.
  mutating func checkStatusForm(_ name: NameSyntax) {
    guard HTTPErrorClasses.statuses(of: name.text) == nil else { return }
    let suggestion = HTTPErrorClasses.suggestion(forStatus: name.text)
    if name.text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
      report(.invalidStatusCode(name.text, suggestion: suggestion), at: name.range)
    } else {
      report(.invalidStatusClass(name.text, suggestion: suggestion), at: name.range)
    }
  }

  mutating func checkHook(_ name: NameSyntax) {
    guard let known = vocabulary.hooks, !known.contains(name.text) else { return }
    let suggestion = Suggestion.nearest(to: name.text, in: known.sorted())
    report(.unknownHook(name.text, suggestion: suggestion), at: name.range)
  }

  /// The line of an earlier rule (with `on`, without `except`) that names every class of
  /// `classes`, so that it takes every error a rule with these classes would; nil if none.
  func hiddenRuleLine(_ classes: [String]) -> Int? {
    guard !classes.isEmpty else { return nil }
    for earlier in namingRules
    where classes.allSatisfy({ inner in
      earlier.classes.contains { HTTPErrorClasses.covers($0, inner) }
    }) {
      return earlier.line
    }
    return nil
  }
}
