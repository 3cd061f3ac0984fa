// What the parser hands its lines and declarations to as it reads them: the tree builder
// below, or (in the compiler) the checker itself, so that compiling needs no tree.

/// What the parser hands each line of a policy to, piece by piece, as it reads it: the tree
/// builder (``LineCollector``), or the checker itself when no tree is wanted.
protocol LineConsumer {
  /// A line starts; `head` is its `retry N`, nil on a line of policy-wide clauses.
  mutating func beginLine(head: RetryHeadSyntax?)
  /// The next clause of the line, in the order written.
  mutating func consume(_ clause: ClauseSyntax)
  /// The line ends; `hasSyntaxErrors` says whether the parser reported an error on it.
  mutating func endLine(range: SourceRange, hasSyntaxErrors: Bool)
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

  mutating func consume(_ clause: ClauseSyntax) {
    clauses.append(clause)
  }

  mutating func endLine(range: SourceRange, hasSyntaxErrors: Bool) {
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
