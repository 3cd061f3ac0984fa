// The syntax tree of policy text. Every node keeps its source range.
//
// The tree is what the parser produces and the canonical printer prints; it records what was
// written, not what it means. Meaning (defaults, conflicts, limits) is the checker's business.
// Data flows one way: text → tokens → this tree → checked and compiled policy.

/// A whole policy file: named policies and the comments between them.
package struct SourceFileSyntax: Sendable, Hashable {
  /// The policies, in the order of the file.
  package var policies: [PolicyDeclarationSyntax]
  /// Every comment of the file, in order, for the formatter.
  package var comments: [CommentSyntax]
  /// The whole text.
  package var range: SourceRange

  package init(policies: [PolicyDeclarationSyntax], comments: [CommentSyntax], range: SourceRange) {
    self.policies = policies
    self.comments = comments
    self.range = range
  }
}

/// `# text` to the end of a line.
package struct CommentSyntax: Sendable, Hashable {
  /// The comment's text, from `#` to the end of the line, without the line end.
  package var text: String
  /// Where the comment stands.
  package var range: SourceRange

  package init(text: String, range: SourceRange) {
    self.text = text
    self.range = range
  }
}

/// `policy NAME = LINE` or `policy NAME { LINES }`.
package struct PolicyDeclarationSyntax: Sendable, Hashable {
  /// How the policy was written.
  package enum Form: Sendable, Hashable {
    /// `policy NAME = retry …` on one line.
    case line
    /// `policy NAME { … }` over several lines.
    case block
  }

  /// The policy's name.
  package var name: NameSyntax
  /// How the policy was written.
  package var form: Form
  /// The rules and policy-wide clauses.
  package var body: PolicyBodySyntax
  /// From `policy` to the end of the line or the closing brace.
  package var range: SourceRange
  /// Whether the parser reported an error while reading this declaration (so the policy
  /// cannot compile, and checks that rest on a missing part would mislead).
  package var hasSyntaxErrors: Bool

  package init(
    name: NameSyntax, form: Form, body: PolicyBodySyntax, range: SourceRange,
    hasSyntaxErrors: Bool = false
  ) {
    self.name = name
    self.form = form
    self.body = body
    self.range = range
    self.hasSyntaxErrors = hasSyntaxErrors
  }
}

/// The lines of a policy: what `compile(policy:)` reads, and what a block holds.
///
/// Each line is a rule (it starts with `retry`) or holds only policy-wide clauses
/// (`within`, `timeout`, `budget`). Policy-wide clauses may also end a rule's line.
package struct PolicyBodySyntax: Sendable, Hashable {
  /// The lines, in order; blank and comment-only lines are not kept.
  package var lines: [LineSyntax]
  /// From the first line to the last.
  package var range: SourceRange

  package init(lines: [LineSyntax], range: SourceRange) {
    self.lines = lines
    self.range = range
  }
}

/// One line of a policy body: `retry N` and clauses, or policy-wide clauses alone.
package struct LineSyntax: Sendable, Hashable {
  /// `retry N` or `retry forever`; nil on a line of policy-wide clauses.
  package var head: RetryHeadSyntax?
  /// The clauses after the head, in the order written.
  package var clauses: [ClauseSyntax]
  /// The whole line without its comment.
  package var range: SourceRange
  /// Whether the parser reported an error on this line (so a clause may be missing from
  /// `clauses`, and checks that rest on a clause's absence would mislead).
  package var hasSyntaxErrors: Bool

  package init(
    head: RetryHeadSyntax?, clauses: [ClauseSyntax], range: SourceRange,
    hasSyntaxErrors: Bool = false
  ) {
    self.head = head
    self.clauses = clauses
    self.range = range
    self.hasSyntaxErrors = hasSyntaxErrors
  }
}

/// `retry N` or `retry forever`.
package struct RetryHeadSyntax: Sendable, Hashable {
  /// The count as written.
  package enum Count: Sendable, Hashable {
    /// `retry N`; nil when the number was too large to read (already diagnosed).
    case times(Int?)
    /// `retry forever`.
    case forever
  }

  /// The count.
  package var count: Count
  /// The range of the count (the number or `forever`).
  package var countRange: SourceRange
  /// From `retry` to the end of the count.
  package var range: SourceRange

  package init(count: Count, countRange: SourceRange, range: SourceRange) {
    self.count = count
    self.countRange = countRange
    self.range = range
  }
}

/// One clause of a line: its entry in the clause table and its arguments as written.
package struct ClauseSyntax: Sendable, Hashable {
  /// The clause, as the clause table names it.
  package var clause: Clause
  /// The value of the entry's first argument; most clauses have one argument, kept here.
  private var first: ArgumentSyntax?
  /// The values of the entry's other arguments, in order, without the omitted ones at the
  /// end: a clause of one argument holds no array.
  private var rest: [ArgumentSyntax?] = []
  /// The range of the clause's keyword (`backoff`), where diagnostics about it point.
  package var keywordRange: SourceRange
  /// From the keyword to the end of the last argument.
  package var range: SourceRange

  /// A clause without its arguments yet (see `setArgument(_:at:)`).
  package init(clause: Clause, keywordRange: SourceRange, range: SourceRange) {
    self.clause = clause
    self.keywordRange = keywordRange
    self.range = range
  }

  /// A clause with one value for each argument of its entry, in the entry's order; nil for
  /// an optional argument left out.
  package init(
    clause: Clause, arguments: [ArgumentSyntax?], keywordRange: SourceRange, range: SourceRange
  ) {
    self.init(clause: clause, keywordRange: keywordRange, range: range)
    for (index, value) in arguments.enumerated() where value != nil {
      setArgument(value, at: index)
    }
  }

  /// One value for each argument of the clause's entry (`clause.arguments`), in the entry's
  /// order; nil for an optional argument left out.
  package var arguments: [ArgumentSyntax?] {
    (0..<clause.arguments.count).map(argument)
  }

  /// The value of the argument at `index` of the clause's entry, if given.
  package func argument(_ index: Int) -> ArgumentSyntax? {
    if index == 0 { return first }
    return index - 1 < rest.count ? rest[index - 1] : nil
  }

  /// Whether the argument at `index` of the clause's entry is given.
  package func hasArgument(_ index: Int) -> Bool {
    if index == 0 { return first != nil }
    return index - 1 < rest.count && rest[index - 1] != nil
  }

  /// Sets the value of the argument at `index` of the clause's entry.
  package mutating func setArgument(_ value: ArgumentSyntax?, at index: Int) {
    guard index > 0 else {
      first = value
      return
    }
    while rest.count < index { rest.append(nil) }
    rest[index - 1] = value
  }

  /// The clause's keyword as written in the language, such as `backoff`.
  package var keyword: String { clause.text }

  /// Whether the clause belongs to the whole policy rather than to one rule.
  package var isPolicyWide: Bool { clause.isPolicyWide }

  /// The duration at `index`, if given.
  package func duration(_ index: Int) -> DurationLiteralSyntax? {
    if case .duration(let literal)? = argument(index) { literal } else { nil }
  }

  /// The names at `index` (`on`, `except`), empty if none.
  package func names(_ index: Int) -> [NameSyntax] {
    if case .names(let names)? = argument(index) { names } else { [] }
  }

  /// The number at `index` (a count, a percentage, a factor or a rate's count), if given.
  package func number(_ index: Int) -> NumberLiteralSyntax? {
    switch argument(index) {
    case .count(let number)?, .percent(let number)?, .factor(let number)?, .rate(let number, _)?:
      number
    case .word?, .duration?, .durations?, .increment?, .names?, .name?, .jitter?, nil: nil
    }
  }
}

/// The value of one argument of a clause, by its shape (`ArgumentShape`).
package enum ArgumentSyntax: Sendable, Hashable {
  /// A word alone, such as `retry-after` of `honoring retry-after`.
  case word
  /// A whole number: `20`.
  case count(NumberLiteralSyntax)
  /// A duration: `5s`.
  case duration(DurationLiteralSyntax)
  /// Durations: `1s, 5s`.
  case durations([DurationLiteralSyntax])
  /// A percentage, without its `%`: `10`.
  case percent(NumberLiteralSyntax)
  /// A backoff factor, without its `x`: `1.5`.
  case factor(NumberLiteralSyntax)
  /// A linear backoff increment, without its `+`: `2s`.
  case increment(DurationLiteralSyntax)
  /// Names: error classes.
  case names([NameSyntax])
  /// A name: a hook.
  case name(NameSyntax)
  /// The argument of `jitter`.
  case jitter(JitterSyntax)
  /// A rate: its count and its period, `50/s`.
  case rate(NumberLiteralSyntax, per: RatePeriod)

  /// The value as written, as messages quote it: `1.5`, `5s`, `10` (a percentage without
  /// `%`), `serverError, 503`.
  package var text: String {
    switch self {
    case .word: ""
    case .count(let number), .percent(let number), .factor(let number): number.text
    case .duration(let literal), .increment(let literal): literal.text
    case .durations(let literals): literals.map(\.text).joined(separator: ", ")
    case .names(let names): names.map(\.text).joined(separator: ", ")
    case .name(let name): name.text
    case .rate(let number, let period): number.text + "/" + period.rawValue
    case .jitter(let jitter):
      switch jitter.kind {
      case .percent(let number): number.text
      case .full: Keyword.full.text
      case .equal: Keyword.equal.text
      case .decorrelated: Keyword.decorrelated.text
      }
    }
  }

  /// A count's value as a whole number; nil for other values or one too large to read.
  package var wholeNumber: Int? {
    if case .count(let number) = self, let value = number.value { Int(exactly: value) } else { nil }
  }
}

/// The period of a rate: `s` of `50/s`, `m` of `30/m`.
package enum RatePeriod: String, Sendable, Hashable {
  /// Per second: `/s`.
  case second = "s"
  /// Per minute: `/m`.
  case minute = "m"

  /// The period's length.
  package var duration: Duration {
    switch self {
    case .second: .seconds(1)
    case .minute: .seconds(60)
    }
  }
}

/// The argument of `jitter`.
package struct JitterSyntax: Sendable, Hashable {
  /// The kind of jitter written.
  package enum Kind: Sendable, Hashable {
    /// `P%`.
    case percent(NumberLiteralSyntax)
    /// `full`.
    case full
    /// `equal`.
    case equal
    /// `decorrelated`.
    case decorrelated
  }

  /// The kind of jitter written.
  package var kind: Kind
  /// The range of the argument.
  package var range: SourceRange

  package init(kind: Kind, range: SourceRange) {
    self.kind = kind
    self.range = range
  }
}

/// An ASCII identifier: a policy, error class or hook name.
package struct NameSyntax: Sendable, Hashable {
  /// The name.
  package var text: String
  /// Where it stands.
  package var range: SourceRange

  package init(text: String, range: SourceRange) {
    self.text = text
    self.range = range
  }
}

/// A plain number, integer or decimal: a factor (`1.5`) or a percentage (`10`).
package struct NumberLiteralSyntax: Sendable, Hashable {
  /// The digits as written, kept without a `String` (see ``LiteralText``).
  var digits: LiteralText
  /// The value; nil when the number was too large to read (already diagnosed).
  package var value: Double?
  /// Where it stands (without any `%` or `x`).
  package var range: SourceRange

  package init(text: String, value: Double?, range: SourceRange) {
    self.init(digits: LiteralText(text), value: value, range: range)
  }

  init(digits: LiteralText, value: Double?, range: SourceRange) {
    self.digits = digits
    self.value = value
    self.range = range
  }

  /// The digits as written, such as `1.50`.
  package var text: String {
    get { digits.string }
    set { digits = LiteralText(newValue) }
  }
}

/// A duration unit.
package enum DurationUnit: String, Sendable, Hashable, CaseIterable {
  /// Milliseconds.
  case milliseconds = "ms"
  /// Seconds.
  case seconds = "s"
  /// Minutes.
  case minutes = "m"
  /// Hours.
  case hours = "h"
}

/// A number directly followed by a unit: `250ms`, `1.5s`, `2m`, `1h`.
package struct DurationLiteralSyntax: Sendable, Hashable {
  /// The number as written, kept without a `String` (see ``LiteralText``).
  var digits: LiteralText
  /// The unit.
  package var unit: DurationUnit
  /// The exact duration; nil when it is too large to represent (already diagnosed).
  package var duration: Duration?
  /// Where it stands.
  package var range: SourceRange

  package init(number: String, unit: DurationUnit, duration: Duration?, range: SourceRange) {
    self.init(digits: LiteralText(number), unit: unit, duration: duration, range: range)
  }

  init(digits: LiteralText, unit: DurationUnit, duration: Duration?, range: SourceRange) {
    self.digits = digits
    self.unit = unit
    self.duration = duration
    self.range = range
  }

  /// The number as written, such as `1.5`.
  package var number: String {
    get { digits.string }
    set { digits = LiteralText(newValue) }
  }

  /// The literal as written: `1.5s`.
  package var text: String { number + unit.rawValue }
}
