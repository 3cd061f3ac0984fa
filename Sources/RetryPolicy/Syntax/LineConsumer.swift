// What the parser hands its lines and declarations to as it reads them: the tree builder
// below, or (in the compiler) the checker itself, so that compiling needs no tree.

/// Where a clause stands: its keyword's range and the whole clause's.
struct ClausePlace {
  /// The range of the clause's keyword (`honoring` for `honoring retry-after`).
  var keyword: SourceRange
  /// The range of the whole clause.
  var clause: SourceRange
}

/// What the parser hands each line of a policy to, piece by piece, as it reads it: the tree
/// builder (``LineCollector``), or the checker itself when no tree is wanted.
///
/// Each kind of clause has a method of its own that takes the clause's parts: a clause value
/// (`ClauseSyntax`) is built only by the tree builder, so that checking a file does not build,
/// copy and take apart a clause value for every clause.
protocol LineConsumer {
  /// A line starts; `head` is its `retry N`, nil on a line of policy-wide clauses.
  mutating func beginLine(head: RetryHeadSyntax?)
  /// `on` (or `except` when `isExcept`) and its error classes: a slice of the line's names,
  /// which `endLine` hands on whole.
  mutating func consumeClasses(
    _ names: ArraySlice<NameSyntax>, isExcept: Bool, at place: ClausePlace)
  /// `immediately`.
  mutating func consumeImmediately(at place: ClausePlace)
  /// A clause of one duration: `delay`, `max`, `within` or `timeout`, named by `keyword`.
  mutating func consumeDuration(
    _ keyword: Keyword, _ literal: consuming DurationLiteralSyntax, at place: ClausePlace)
  /// `backoff` and its growth.
  mutating func consumeBackoff(
    _ literal: consuming DurationLiteralSyntax, _ growth: consuming BackoffGrowthSyntax?,
    at place: ClausePlace)
  /// `delays` and its durations.
  mutating func consumeDelays(_ literals: [DurationLiteralSyntax], at place: ClausePlace)
  /// `jitter`.
  mutating func consumeJitter(_ syntax: JitterSyntax, at place: ClausePlace)
  /// `after` and its hook.
  mutating func consumeHook(_ name: NameSyntax, at place: ClausePlace)
  /// `honoring retry-after`.
  mutating func consumeHonoringRetryAfter(at place: ClausePlace)
  /// `budget`.
  mutating func consumeBudget(_ number: NumberLiteralSyntax, at place: ClausePlace)
  /// `hedge`.
  mutating func consumeHedge(_ syntax: HedgeSyntax, at place: ClausePlace)
  /// The line ends; `hasSyntaxErrors` says whether the parser reported an error on it, and
  /// `names` holds the names of its `on` and `except` clauses, in order (the slices that
  /// `consumeClasses` was given are slices of it).
  mutating func endLine(range: SourceRange, hasSyntaxErrors: Bool, names: [NameSyntax])
}

/// What the parser hands a file's declarations to: a ``LineConsumer`` that also hears where
/// each declaration starts and ends.
protocol DeclarationConsumer: LineConsumer {
  /// A declaration starts: the lines that follow are its body.
  mutating func beginDeclaration()
  /// The lines of the current declaration the consumer keeps, which it then forgets (none
  /// when it builds no tree).
  mutating func takeLines() -> [LineSyntax]
  /// The declaration ends; its body holds the lines `takeLines()` gave.
  mutating func endDeclaration(_ declaration: PolicyDeclarationSyntax)
}

/// Builds the syntax tree from what the parser hands on.
struct LineCollector: DeclarationConsumer {
  private var declarations: [PolicyDeclarationSyntax] = []
  private var lines: [LineSyntax] = []
  private var head: RetryHeadSyntax?
  private var clauses: [ClauseSyntax] = []

  mutating func beginLine(head: RetryHeadSyntax?) {
    self.head = head
    clauses = []
  }

  private mutating func append(_ kind: ClauseSyntax.Kind, at place: ClausePlace) {
    clauses.append(ClauseSyntax(kind: kind, keywordRange: place.keyword, range: place.clause))
  }

  mutating func consumeClasses(
    _ names: ArraySlice<NameSyntax>, isExcept: Bool, at place: ClausePlace
  ) {
    let names = Array(names)
    append(isExcept ? .except(names) : .on(names), at: place)
  }

  mutating func consumeImmediately(at place: ClausePlace) { append(.immediately, at: place) }

  mutating func consumeDuration(
    _ keyword: Keyword, _ literal: consuming DurationLiteralSyntax, at place: ClausePlace
  ) {
    switch keyword {
    case .within: append(.within(literal), at: place)
    case .timeout: append(.timeout(literal), at: place)
    case .max: append(.max(literal), at: place)
    default: append(.delay(literal), at: place)
    }
  }

  mutating func consumeBackoff(
    _ literal: consuming DurationLiteralSyntax, _ growth: consuming BackoffGrowthSyntax?,
    at place: ClausePlace
  ) {
    append(.backoff(literal, growth), at: place)
  }

  mutating func consumeDelays(_ literals: [DurationLiteralSyntax], at place: ClausePlace) {
    append(.delays(literals), at: place)
  }

  mutating func consumeJitter(_ syntax: JitterSyntax, at place: ClausePlace) {
    append(.jitter(syntax), at: place)
  }

  mutating func consumeHook(_ name: NameSyntax, at place: ClausePlace) {
    append(.after(name), at: place)
  }

  mutating func consumeHonoringRetryAfter(at place: ClausePlace) {
    append(.honoringRetryAfter, at: place)
  }

  mutating func consumeBudget(_ number: NumberLiteralSyntax, at place: ClausePlace) {
    append(.budget(number), at: place)
  }

  mutating func consumeHedge(_ syntax: HedgeSyntax, at place: ClausePlace) {
    append(.hedge(syntax), at: place)
  }

  mutating func endLine(range: SourceRange, hasSyntaxErrors: Bool, names: [NameSyntax]) {
    // A line where nothing could be recorded is not kept.
    if head == nil && clauses.isEmpty { return }
    // The tree keeps the array: no more room than its clauses take (a reserved eight clauses
    // a line made the tree of a 10 MB file hundreds of megabytes larger).
    lines.append(
      LineSyntax(
        head: head, clauses: Array(clauses[...]), range: range, hasSyntaxErrors: hasSyntaxErrors))
    head = nil
    clauses = []
  }

  mutating func beginDeclaration() {
    lines = []
  }

  /// The lines completed so far, which the collector forgets.
  mutating func takeLines() -> [LineSyntax] {
    defer { lines = [] }
    return lines
  }

  mutating func endDeclaration(_ declaration: PolicyDeclarationSyntax) {
    declarations.append(declaration)
  }

  /// The declarations completed so far, which the collector forgets.
  mutating func takeDeclarations() -> [PolicyDeclarationSyntax] {
    defer { declarations = [] }
    return declarations
  }
}
