// The semantic checks and the compiler: from a policy's syntax tree to a `CompiledPolicy`.
// This file holds the policy level; `Checker+Rule.swift` checks each rule, and
// `Checker+File.swift` what concerns a whole file.
//
// One pass over the lines. Each clause's arguments are checked where they stand, each rule is
// checked as a whole at its line's end, and what needs the whole policy (`retry forever` needs
// `within`, `timeout` against `within`, a policy with no rule) at the policy's end. Everything
// is reported; nothing stops at the first error. The policy compiles only when nothing is wrong.
//
// No arithmetic here can trap: counts and durations are compared, never computed with, and
// percentages and factors are `Double`s.

/// The first clause of a kind that takes a duration: its keyword's range and its duration.
///
/// A struct, not a tuple: an optional tuple of these is read through the runtime's generic
/// tuple functions, a struct directly.
struct DurationClause {
  var range: SourceRange
  var digits: LiteralText
  var unit: DurationUnit

  init(_ range: SourceRange, _ literal: DurationLiteralSyntax) {
    self.range = range
    digits = literal.digits
    unit = literal.unit
  }

  /// The duration as written: `1.5s`.
  var text: String { digits.string + unit.rawValue }
}

/// Checks one policy body and compiles it when it has no error.
struct PolicyChecker {
  /// The host's names for error classes and hooks.
  let vocabulary: Vocabulary
  /// Every diagnostic found, in the order found (sort before showing).
  private(set) var diagnostics = DiagnosticList()
  /// Whether an error was reported.
  private(set) var hasErrors = false
  /// Whether something was missing that an earlier stage already reported (a number too
  /// large to read, a clause the parser could not finish): the policy cannot compile.
  var isIncomplete = false

  // Policy-wide state.
  /// The first `within`: its keyword's range and its duration as written.
  var withinClause: DurationClause?
  var deadline: Duration?
  /// The first `timeout`: its keyword's range and its duration as written.
  var timeoutClause: DurationClause?
  var attemptTimeout: Duration?
  /// The range of the first `budget` keyword.
  var budgetClause: SourceRange?
  var budgetRatio: Double?
  /// The range of the first `hedge` keyword.
  var hedgeClause: SourceRange?
  var hedge: HedgePolicy?
  /// The range of the first `breaker` keyword.
  var breakerClause: SourceRange?
  var breaker: CircuitBreakerPolicy?
  /// The range of the first `limit` keyword.
  var limitClause: SourceRange?
  var limit: ConcurrencyLimitPolicy?
  /// The range of the first `throttle` keyword.
  var throttleClause: SourceRange?
  var throttle: ThrottlePolicy?
  /// The range of the first `rate` keyword.
  var rateClause: SourceRange?
  var rate: RatePolicy?
  /// The rule clauses that have no meaning under `hedge`, reported when the policy has it:
  /// their keywords (`honoring` for `honoring retry-after`) and ranges, plain data.
  var hedgeConflicts = HedgeConflicts()
  /// The counts of `retry forever` heads, checked against `within` at the end.
  var foreverCounts: [SourceRange] = []
  /// The line of the first rule that takes every error.
  var catchAllLine: Int?
  /// The rules with `on` and without `except`, by line, which take every error they name
  /// before later rules do (see `hiddenRuleLine`); at most 64 are kept.
  var namingRules: [(line: Int, classes: [String])] = []
  /// The number of rules (`retry` lines) checked.
  var ruleCount = 0
  var rules: [RetryRule] = []
  /// The rule being read, between `beginLine` and `endLine`, when `isReadingRule`.
  var rule = RuleState()
  /// Whether the current line is a rule (it has `retry N`).
  var isReadingRule = false

  init(vocabulary: Vocabulary) {
    self.vocabulary = vocabulary
  }

  /// Makes the checker as new, in place, for the next policy of a file.
  ///
  /// A checker is large, and making a new one for each declaration copied it twice. Every
  /// stored property but `vocabulary` is set back to its initial value; the hedge conflicts
  /// and `forever` counts keep their room.
  mutating func reset() {
    // What holds references is set back only when it is not empty already: destroying an
    // empty value still costs its value witnesses.
    if diagnostics.foundCount > 0 { diagnostics = DiagnosticList() }
    hasErrors = false
    isIncomplete = false
    if withinClause != nil { withinClause = nil }
    deadline = nil
    if timeoutClause != nil { timeoutClause = nil }
    attemptTimeout = nil
    budgetClause = nil
    budgetRatio = nil
    hedgeClause = nil
    hedge = nil
    breakerClause = nil
    breaker = nil
    limitClause = nil
    limit = nil
    throttleClause = nil
    throttle = nil
    rateClause = nil
    rate = nil
    if hedgeConflicts.count > 0 { hedgeConflicts.removeAll() }
    if !foreverCounts.isEmpty { foreverCounts.removeAll(keepingCapacity: true) }
    catchAllLine = nil
    if !namingRules.isEmpty { namingRules.removeAll(keepingCapacity: true) }
    ruleCount = 0
    if !rules.isEmpty { rules = [] }
    // Outside a rule the rule's state is already empty (`finishRule` empties it).
    if isReadingRule { rule = RuleState() }
    isReadingRule = false
  }

  /// Checks a policy body and returns its compiled form, or nil when anything is wrong.
  ///
  /// - Parameters:
  ///   - name: the policy's name in its file, nil for a single policy text.
  ///   - emptyRange: where `empty-policy` points when the body has no rule.
  ///   - hasSyntaxErrors: whether the parser reported an error in this body; the checks still
  ///     run, but the policy does not compile and a missing rule is not reported again.
  mutating func compile(
    _ body: PolicyBodySyntax, name: String?, emptyRange: SourceRange, hasSyntaxErrors: Bool
  ) -> CompiledPolicy? {
    for line in body.lines { check(line) }
    return finish(name: name, emptyRange: emptyRange, hasSyntaxErrors: hasSyntaxErrors)
  }

  /// Checks one line of a policy body, in the order of the body.
  mutating func check(_ line: LineSyntax) {
    beginLine(head: line.head)
    var names: [NameSyntax] = []
    for clause in line.clauses { check(clause, names: &names) }
    endLine(range: line.range, hasSyntaxErrors: line.hasSyntaxErrors, names: names)
  }

  /// Finishes the checks of a body whose lines were given to `check(_:)`, and returns its
  /// compiled form, or nil when anything is wrong; the parameters are those of `compile`.
  mutating func finish(name: String?, emptyRange: SourceRange, hasSyntaxErrors: Bool)
    -> CompiledPolicy?
  {
    if hasSyntaxErrors { isIncomplete = true }
    finishPolicy(name: name, emptyRange: emptyRange, hasSyntaxErrors: hasSyntaxErrors)
    guard !hasErrors, !isIncomplete, !rules.isEmpty else { return nil }
    return CompiledPolicy(
      name: name, rules: rules, deadline: deadline, attemptTimeout: attemptTimeout,
      budgetRatio: budgetRatio, hedge: hedge, breaker: breaker, limit: limit,
      throttle: throttle, rate: rate)
  }

  // MARK: Lines

  /// Starts a line: a rule when it has a head, else a line of policy-wide clauses.
  mutating func beginLine(head: RetryHeadSyntax?) {
    if let head { beginRule(head) }
  }

  /// Ends the current line; `hasSyntaxErrors` says whether the parser reported an error on it.
  mutating func endLine(range: SourceRange, hasSyntaxErrors: Bool, names: [NameSyntax]) {
    finishRule(isComplete: !hasSyntaxErrors, names: names)
  }

  // MARK: Reporting

  mutating func report(
    _ message: DiagnosticMessage, at range: SourceRange, notes: [Diagnostic] = []
  ) {
    if message.severity == .error { hasErrors = true }
    diagnostics.append(Diagnostic(message, at: range, notes: notes))
  }

  /// Whether the clause whose keyword is `keyword`, at `range`, is the first of its kind:
  /// otherwise reports `duplicate-clause` with a note at the first.
  mutating func isFirst(_ keyword: Keyword, at range: SourceRange, after first: SourceRange?)
    -> Bool
  {
    guard let first else { return true }
    let written = keyword.clause?.text ?? keyword.text
    report(
      .duplicateClause(written, isPolicyWide: keyword.clause?.isPolicyWide ?? false), at: range,
      notes: [Diagnostic(.firstGivenHere(written), at: first)])
    return false
  }

  mutating func finishPolicy(name: String?, emptyRange: SourceRange, hasSyntaxErrors: Bool) {
    if withinClause == nil {
      for range in foreverCounts { report(.foreverWithoutWithin, at: range) }
    }
    if let attemptTimeout, let deadline, attemptTimeout >= deadline,
      let timeoutClause, let withinClause
    {
      report(
        .timeoutNotBelowDeadline(
          timeout: timeoutClause.text, deadline: withinClause.text),
        at: timeoutClause.range)
    }
    if hedgeClause != nil {
      for conflict in hedgeConflicts.all {
        let keyword =
          conflict.keyword.clause?.text ?? conflict.keyword.text
        report(.hedgeConflict(keyword), at: conflict.range)
      }
    }
    if ruleCount == 0 && !hasSyntaxErrors {
      report(.policyWithoutRule(named: name), at: emptyRange)
    }
  }
}

/// Where a clause stands: its keyword's range and the whole clause's.
struct ClausePlace {
  /// The range of the clause's keyword (`honoring` for `honoring retry-after`).
  var keyword: SourceRange
  /// The range of the whole clause.
  var clause: SourceRange
}
