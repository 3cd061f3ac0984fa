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

/// One clause of a line.
package struct ClauseSyntax: Sendable, Hashable {
  /// The clause and its arguments.
  package enum Kind: Sendable, Hashable {
    /// `on A, B`.
    case on([NameSyntax])
    /// `except A, B`.
    case except([NameSyntax])
    /// `immediately`.
    case immediately
    /// `delay D`.
    case delay(DurationLiteralSyntax)
    /// `backoff D`, `backoff D xF` or `backoff D +I`.
    case backoff(DurationLiteralSyntax, BackoffGrowthSyntax?)
    /// `delays D1, D2, …`.
    case delays([DurationLiteralSyntax])
    /// `jitter P%`, `jitter full`, `jitter equal`, `jitter decorrelated`.
    case jitter(JitterSyntax)
    /// `max D`.
    case max(DurationLiteralSyntax)
    /// `after NAME`.
    case after(NameSyntax)
    /// `honoring retry-after`.
    case honoringRetryAfter
    /// `within D` (policy-wide).
    case within(DurationLiteralSyntax)
    /// `timeout D` (policy-wide).
    case timeout(DurationLiteralSyntax)
    /// `budget P%` (policy-wide).
    case budget(NumberLiteralSyntax)
    /// `hedge N after D` (policy-wide).
    case hedge(HedgeSyntax)
    /// `breaker P% [over D] [min N] [for D]` (policy-wide).
    case breaker(BreakerSyntax)
  }

  /// The clause and its arguments.
  package var kind: Kind
  /// The range of the clause's keyword (`backoff`), where diagnostics about it point.
  package var keywordRange: SourceRange
  /// From the keyword to the end of the last argument.
  package var range: SourceRange

  package init(kind: Kind, keywordRange: SourceRange, range: SourceRange) {
    self.kind = kind
    self.keywordRange = keywordRange
    self.range = range
  }

  /// The clause, as the clause table names it.
  package var clause: Clause {
    switch kind {
    case .on: .on
    case .except: .except
    case .immediately: .immediately
    case .delay: .delay
    case .backoff: .backoff
    case .delays: .delays
    case .jitter: .jitter
    case .max: .max
    case .after: .after
    case .honoringRetryAfter: .honoringRetryAfter
    case .within: .within
    case .timeout: .timeout
    case .budget: .budget
    case .hedge: .hedge
    case .breaker: .breaker
    }
  }

  /// The clause's keyword as written in the language, such as `backoff`.
  package var keyword: String { clause.text }

  /// Whether the clause belongs to the whole policy rather than to one rule.
  package var isPolicyWide: Bool { clause.isPolicyWide }
}

/// The arguments of `hedge N after D`.
package struct HedgeSyntax: Sendable, Hashable {
  /// The number of extra attempts; nil when the number was too large to read (diagnosed).
  package var count: Int?
  /// Where the count stands.
  package var countRange: SourceRange
  /// The time between attempt starts.
  package var delay: DurationLiteralSyntax

  package init(count: Int?, countRange: SourceRange, delay: DurationLiteralSyntax) {
    self.count = count
    self.countRange = countRange
    self.delay = delay
  }
}

/// The arguments of `breaker P% [over D] [min N] [for D]`; an omitted setting is nil.
package struct BreakerSyntax: Sendable, Hashable {
  /// The failure percentage, `P`.
  package var percent: NumberLiteralSyntax
  /// `over D`: the window.
  package var window: DurationLiteralSyntax?
  /// `min N`: the fewest attempts; its number as written.
  package var minimum: NumberLiteralSyntax?
  /// `for D`: how long the circuit stays open.
  package var openDuration: DurationLiteralSyntax?

  package init(
    percent: NumberLiteralSyntax, window: DurationLiteralSyntax? = nil,
    minimum: NumberLiteralSyntax? = nil, openDuration: DurationLiteralSyntax? = nil
  ) {
    self.percent = percent
    self.window = window
    self.minimum = minimum
    self.openDuration = openDuration
  }
}

/// How a backoff grows: `xF` (exponential) or `+I` (linear).
package enum BackoffGrowthSyntax: Sendable, Hashable {
  /// `xF`: each delay is the previous times F.
  case factor(NumberLiteralSyntax)
  /// `+I`: each delay is the previous plus I.
  case increment(DurationLiteralSyntax)
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
