// The semantic checks and the compiler: from a policy's syntax tree to a `CompiledPolicy`.
//
// One pass over the lines. Each clause's arguments are checked where they stand, each rule is
// checked as a whole at its line's end, and what needs the whole policy (`retry forever` needs
// `within`, `timeout` against `within`, a policy with no rule) at the policy's end. Everything
// is reported; nothing stops at the first error. The policy compiles only when nothing is wrong.
//
// No arithmetic here can trap: counts and durations are compared, never computed with, and
// percentages and factors are `Double`s.

/// Checks one policy body and compiles it when it has no error.
struct PolicyChecker {
  /// The largest count `retry N` accepts.
  static let largestCount = 10_000
  /// The largest backoff factor `backoff D xF` accepts.
  static let largestFactor = 1000.0
  /// ``largestFactor`` as the messages write it.
  static let largestFactorText = "1000"
  /// The longest duration any clause accepts: 10000 hours.
  static let longestDuration = Duration.seconds(36_000_000)

  /// The host's names for error classes and hooks.
  let vocabulary: Vocabulary
  /// Every diagnostic found, in the order found (sort before showing).
  private(set) var diagnostics: [Diagnostic] = []
  /// Whether an error was reported.
  private(set) var hasErrors = false
  /// Whether something was missing that an earlier stage already reported (a number too
  /// large to read, a clause the parser could not finish): the policy cannot compile.
  private var isIncomplete = false

  // Policy-wide state.
  /// The first `within`: its keyword's range and its duration as written.
  private var withinClause: (keywordRange: SourceRange, literal: DurationLiteralSyntax)?
  private var deadline: Duration?
  /// The first `timeout`: its keyword's range and its duration as written.
  private var timeoutClause: (keywordRange: SourceRange, literal: DurationLiteralSyntax)?
  private var attemptTimeout: Duration?
  /// The range of the first `budget` keyword.
  private var budgetClause: SourceRange?
  private var budgetRatio: Double?
  /// The counts of `retry forever` heads, checked against `within` at the end.
  private var foreverCounts: [SourceRange] = []
  /// The line of the first rule that takes every error.
  private var catchAllLine: Int?
  /// The number of rules (`retry` lines) checked.
  private(set) var ruleCount = 0
  private var rules: [RetryRule] = []

  init(vocabulary: Vocabulary) {
    self.vocabulary = vocabulary
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
    if let head = line.head {
      checkRule(head: head, clauses: line.clauses, isComplete: !line.hasSyntaxErrors)
    } else {
      for clause in line.clauses {
        if clause.isPolicyWide {
          checkPolicyWide(clause)
        } else {
          // Rule clauses without `retry`: the parser reports `expected-retry`.
          isIncomplete = true
        }
      }
    }
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
      budgetRatio: budgetRatio)
  }

  // MARK: Reporting

  private mutating func report(
    _ message: DiagnosticMessage, at range: SourceRange, notes: [Diagnostic] = []
  ) {
    if message.severity == .error { hasErrors = true }
    diagnostics.append(Diagnostic(message, at: range, notes: notes))
  }

  /// Whether `clause` is the first of its kind: otherwise reports `duplicate-clause` with a
  /// note at the first.
  private mutating func isFirst(_ clause: ClauseSyntax, after first: SourceRange?) -> Bool {
    guard let first else { return true }
    let keyword = clause.keyword
    report(
      .duplicateClause(keyword, isPolicyWide: clause.isPolicyWide), at: clause.keywordRange,
      notes: [Diagnostic(.firstGivenHere(keyword), at: first)])
    return false
  }

  /// Whether `clauses[index]` is the first of its kind, `clauses[first]` being the first
  /// seen, if any: otherwise reports `duplicate-clause` with a note at the first.
  private mutating func isFirst(_ clauses: [ClauseSyntax], _ index: Int, after first: Int?)
    -> Bool
  {
    guard let first else { return true }
    return isFirst(clauses[index], after: clauses[first].keywordRange)
  }

  /// The texts of names, for a compiled rule.
  private static func texts(of names: [NameSyntax]) -> [String] {
    var texts: [String] = []
    texts.reserveCapacity(names.count)
    for name in names { texts.append(name.text) }
    return texts
  }

  // MARK: Rules

  /// The delay clause of a rule, checked, before the count is attached.
  private enum DelayShape {
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

  private mutating func checkRule(
    head: RetryHeadSyntax, clauses: [ClauseSyntax], isComplete: Bool
  ) {
    ruleCount += 1
    var maxCount: Int?
    switch head.count {
    case .times(let count?):
      if count > Self.largestCount {
        report(.countTooLarge(count), at: head.countRange)
      } else {
        maxCount = Swift.max(0, count)
      }
    case .times(nil):
      isIncomplete = true
    case .forever:
      foreverCounts.append(head.countRange)
    }

    // Clauses are referred to by their index in `clauses`, not copied: a clause is a large
    // value, and this runs for every rule of every policy.
    var onIndex: Int?
    var exceptIndex: Int?
    var delayIndex: Int?
    var jitterIndex: Int?
    var maxIndex: Int?
    var afterIndex: Int?
    var honoringIndex: Int?
    var shape: DelayShape?
    var jitter: Jitter?
    var cap: Duration?
    var onNames: [NameSyntax]?
    var exceptNames: [NameSyntax]?
    var hook: String?
    var retriesImmediately = true

    for index in clauses.indices {
      switch clauses[index].kind {
      case .within, .timeout, .budget:
        checkPolicyWide(clauses[index])
      case .on(let names):
        checkErrorClasses(names)
        if isFirst(clauses, index, after: onIndex) {
          onIndex = index
          onNames = names
        }
      case .except(let names):
        checkErrorClasses(names)
        if isFirst(clauses, index, after: exceptIndex) {
          exceptIndex = index
          exceptNames = names
        }
      case .immediately, .delay, .backoff, .delays:
        let checked = checkDelayClause(clauses[index])
        if let first = delayIndex {
          let keyword = clauses[index].keyword
          let firstKeyword = clauses[first].keyword
          if firstKeyword == keyword {
            _ = isFirst(clauses, index, after: first)
          } else {
            report(
              .conflictingDelay(keyword, with: firstKeyword), at: clauses[index].keywordRange,
              notes: [Diagnostic(.firstGivenHere(firstKeyword), at: clauses[first].keywordRange)]
            )
          }
        } else {
          delayIndex = index
          shape = checked
          if case .immediately = clauses[index].kind {} else { retriesImmediately = false }
        }
      case .jitter(let syntax):
        let checked = checkJitter(syntax)
        if isFirst(clauses, index, after: jitterIndex) {
          jitterIndex = index
          jitter = checked
        }
      case .max(let literal):
        let checked = checkDuration(literal, of: "max", mustBePositive: true)
        if isFirst(clauses, index, after: maxIndex) {
          maxIndex = index
          cap = checked
        }
      case .after(let name):
        checkHook(name)
        if isFirst(clauses, index, after: afterIndex) {
          afterIndex = index
          hook = name.text
        }
      case .honoringRetryAfter:
        if isFirst(clauses, index, after: honoringIndex) { honoringIndex = index }
      }
    }

    var errorClasses: [String] = []
    var excludedClasses: [String] = []
    if let onNames { errorClasses = Self.texts(of: onNames) }
    if let exceptNames {
      excludedClasses = Self.texts(of: exceptNames)
      if let included = onNames {
        for name in exceptNames {
          guard let first = included.first(where: { $0.text == name.text }) else { continue }
          report(
            .classInOnAndExcept(name.text), at: name.range,
            notes: [Diagnostic(.firstGivenHere(name.text), at: first.range)])
        }
      }
    }

    // On a line with a syntax error the delay clause may be the broken one: saying that the
    // rule has no delay would only mislead.
    if let jitterIndex, retriesImmediately, isComplete {
      report(.jitterWithoutDelay, at: clauses[jitterIndex].keywordRange)
    }
    if let maxIndex {
      if (retriesImmediately && isComplete) || shape?.isAlwaysZero == true {
        report(.capWithoutDelay, at: clauses[maxIndex].keywordRange)
      } else if let cap, let first = shape?.firstDelay, cap < first,
        case .max(let literal) = clauses[maxIndex].kind
      {
        report(
          .capBelowFirstDelay(cap: literal.text, firstDelay: first.policyText),
          at: clauses[maxIndex].keywordRange)
      }
    }

    if let catchAllLine {
      report(.unreachableRule(catchAllLine: catchAllLine), at: head.range)
    } else if exceptIndex == nil, onIndex == nil || errorClasses.contains("any") {
      catchAllLine = head.range.start.line
    }

    // A missing value here was reported above (or by the parser): nothing to compile.
    guard maxCount != nil || head.count == .forever else { return }
    if delayIndex != nil && shape == nil { return }
    if jitterIndex != nil && jitter == nil { return }
    if maxIndex != nil && cap == nil { return }
    rules.append(
      RetryRule(
        behavior: (shape ?? .immediate).behavior(maxCount: maxCount),
        errorClasses: errorClasses, excludedClasses: excludedClasses, jitter: jitter,
        maxDelay: cap, hook: hook, honorsRetryAfter: honoringIndex != nil))
  }

  /// Checks `immediately`, `delay`, `backoff` or `delays`; nil when an argument is wrong.
  private mutating func checkDelayClause(_ clause: ClauseSyntax) -> DelayShape? {
    switch clause.kind {
    case .delay(let literal):
      guard let delay = checkDuration(literal, of: "delay", mustBePositive: false) else {
        return nil
      }
      if delay == .zero { report(.zeroDelay(literal.text), at: clause.keywordRange) }
      return .delayed(delay)
    case .backoff(let literal, let growth):
      let initial = checkDuration(literal, of: "backoff", mustBePositive: true)
      switch growth {
      case nil:
        return initial.map { .exponential($0, multiplier: 2) }
      case .factor(let number)?:
        let factor = checkFactor(number, initial: literal)
        guard let initial, let factor else { return nil }
        return .exponential(initial, multiplier: factor)
      case .increment(let step)?:
        let increment = checkDuration(step, of: "backoff", mustBePositive: false)
        guard let initial, let increment else { return nil }
        return .linear(initial, increment: increment)
      }
    case .delays(let literals):
      var delays: [Duration] = []
      delays.reserveCapacity(literals.count)
      var isValid = !literals.isEmpty
      if literals.isEmpty { isIncomplete = true }  // the parser reports the missing duration
      for literal in literals {
        if let delay = checkDuration(literal, of: "delays", mustBePositive: false) {
          delays.append(delay)
        } else {
          isValid = false
        }
      }
      return isValid ? .custom(delays) : nil
    default:
      return .immediate
    }
  }

  /// Checks a duration against the limits; nil when it is wrong or was unreadable.
  private mutating func checkDuration(
    _ literal: DurationLiteralSyntax, of keyword: String, mustBePositive: Bool
  ) -> Duration? {
    guard let duration = literal.duration else {
      isIncomplete = true
      return nil
    }
    if duration > Self.longestDuration {
      report(.durationTooLong(literal.text), at: literal.range)
      return nil
    }
    if duration < .zero || (mustBePositive && duration == .zero) {
      report(.zeroDuration(keyword), at: literal.range)
      return nil
    }
    return duration
  }

  private mutating func checkFactor(
    _ number: NumberLiteralSyntax, initial: DurationLiteralSyntax
  ) -> Double? {
    guard let factor = number.value else {
      isIncomplete = true
      return nil
    }
    if factor < 1 {
      report(.factorBelowOne(number.text), at: number.range)
      return nil
    }
    guard factor <= Self.largestFactor else {  // also NaN
      report(.factorTooLarge(number.text), at: number.range)
      return nil
    }
    if factor == 1 { report(.factorOfOne(initial: initial.text), at: number.range) }
    return factor
  }

  private mutating func checkJitter(_ syntax: JitterSyntax) -> Jitter? {
    switch syntax.kind {
    case .full: return .full
    case .equal: return .equal
    case .decorrelated: return .decorrelated
    case .percent(let number):
      guard let percent = number.value else {
        isIncomplete = true
        return nil
      }
      guard percent > 0, percent <= 100 else {
        report(.jitterOutOfRange(number.text), at: number.range)
        return nil
      }
      return .proportional(fraction: percent / 100)
    }
  }

  // MARK: Names

  private mutating func checkErrorClasses(_ names: [NameSyntax]) {
    guard let known = vocabulary.errorClasses else { return }
    for name in names
    where !known.contains(name.text) && !Vocabulary.builtInErrorClasses.contains(name.text) {
      let candidates = Vocabulary.builtInErrorClasses.sorted() + known.sorted()
      let suggestion = Suggestion.nearest(to: name.text, in: candidates)
      report(.unknownErrorClass(name.text, suggestion: suggestion), at: name.range)
    }
  }

  private mutating func checkHook(_ name: NameSyntax) {
    guard let known = vocabulary.hooks, !known.contains(name.text) else { return }
    let suggestion = Suggestion.nearest(to: name.text, in: known.sorted())
    report(.unknownHook(name.text, suggestion: suggestion), at: name.range)
  }

  // MARK: Policy-wide clauses

  private mutating func checkPolicyWide(_ clause: ClauseSyntax) {
    switch clause.kind {
    case .within(let literal):
      let checked = checkDuration(literal, of: "within", mustBePositive: true)
      if isFirst(clause, after: withinClause?.keywordRange) {
        withinClause = (clause.keywordRange, literal)
        deadline = checked
      }
    case .timeout(let literal):
      let checked = checkDuration(literal, of: "timeout", mustBePositive: true)
      if isFirst(clause, after: timeoutClause?.keywordRange) {
        timeoutClause = (clause.keywordRange, literal)
        attemptTimeout = checked
      }
    case .budget(let number):
      var checked: Double?
      if let percent = number.value {
        if percent > 0, percent <= 100 {
          checked = percent / 100
        } else {
          report(.budgetOutOfRange(number.text), at: number.range)
        }
      } else {
        isIncomplete = true
      }
      if isFirst(clause, after: budgetClause) {
        budgetClause = clause.keywordRange
        budgetRatio = checked
      }
    default:
      break
    }
  }

  private mutating func finishPolicy(name: String?, emptyRange: SourceRange, hasSyntaxErrors: Bool)
  {
    if withinClause == nil {
      for range in foreverCounts { report(.foreverWithoutWithin, at: range) }
    }
    if let attemptTimeout, let deadline, attemptTimeout >= deadline,
      let timeoutClause, let withinClause
    {
      report(
        .timeoutNotBelowDeadline(
          timeout: timeoutClause.literal.text, deadline: withinClause.literal.text),
        at: timeoutClause.keywordRange)
    }
    if ruleCount == 0 && !hasSyntaxErrors {
      report(.policyWithoutRule(named: name), at: emptyRange)
    }
  }
}

// MARK: - Files

extension PolicyChecker {
  /// Reports every policy whose name an earlier policy of the file already has; returns,
  /// for each declaration, whether it is such a duplicate.
  static func checkNames(
    of declarations: [PolicyDeclarationSyntax], into diagnostics: inout [Diagnostic]
  ) -> [Bool] {
    var isDuplicate = [Bool](repeating: false, count: declarations.count)
    guard declarations.count > 1 else { return isDuplicate }
    var firsts: [String: NameSyntax] = [:]
    for (index, declaration) in declarations.enumerated() where !declaration.name.text.isEmpty {
      let name = declaration.name
      if let first = firsts[name.text] {
        isDuplicate[index] = true
        diagnostics.append(
          Diagnostic(
            .duplicatePolicy(name.text), at: name.range,
            notes: [Diagnostic(.firstGivenHere(name.text), at: first.range)]))
      } else {
        firsts[name.text] = name
      }
    }
    return isDuplicate
  }

  /// The diagnostics in the order of the text; diagnostics at one place keep their order.
  static func sortedByPosition(_ diagnostics: [Diagnostic]) -> [Diagnostic] {
    guard diagnostics.count > 1 else { return diagnostics }
    return diagnostics.enumerated().sorted { lhs, rhs in
      let (left, right) = (lhs.element.range.start.offset, rhs.element.range.start.offset)
      return left != right ? left < right : lhs.offset < rhs.offset
    }.map(\.element)
  }
}
