// The checker at the level of a file: what concerns several policies together.

/// The names of a file's policies, declaration by declaration: reports every name an earlier
/// policy of the file already has.
struct PolicyNameChecker {
  /// Where each name was first given.
  private var firsts: [String: SourceRange] = [:]
  /// The `duplicate-policy` diagnostics, in the order of the file.
  private(set) var diagnostics = DiagnosticList()

  /// Makes room for `count` names, so that the table is not rehashed as it grows.
  mutating func reserveCapacity(_ count: Int) {
    firsts.reserveCapacity(count)
  }

  /// Records the next declaration's name; returns whether an earlier policy has it.
  mutating func isDuplicate(_ name: NameSyntax) -> Bool {
    guard !name.text.isEmpty else { return false }
    // One lookup for a new name (the common case); a duplicate puts the first place back.
    guard let first = firsts.updateValue(name.range, forKey: name.text) else { return false }
    firsts[name.text] = first
    diagnostics.append(
      Diagnostic(
        .duplicatePolicy(name.text), at: name.range,
        notes: [Diagnostic(.firstGivenHere(name.text), at: first)]))
    return true
  }
}

/// Checks and compiles a file's declarations, one at a time, as the parser reads them (or as
/// they are read back from a tree): each policy's lines go to a checker of its own, and names
/// are checked across the file.
struct FileChecker: DeclarationConsumer {
  /// The host's names for error classes and hooks.
  let vocabulary: Vocabulary
  /// The checker of the declaration being read.
  private var checker: PolicyChecker
  private var names = PolicyNameChecker()
  /// The checkers' diagnostics, in the order found.
  private var checkerDiagnostics = DiagnosticList()
  /// The policies without an error of their own, in the order of the file.
  private(set) var policies: [CompiledPolicy] = []
  /// Whether the names are checked here; when false, each declaration's name and compiled
  /// policy go to `declarations` instead, for a caller that checks the names of several
  /// parts of a file together (see `AnalyzeInParts.swift`).
  var checksNames = true
  /// Each declaration's name and its policy (nil when it has an error of its own), in order,
  /// when `checksNames` is false.
  private(set) var declarations: [(name: NameSyntax, policy: CompiledPolicy?)] = []
  /// The checkers' diagnostics alone, without those of the names.
  var policyDiagnostics: DiagnosticList { checkerDiagnostics }

  init(vocabulary: Vocabulary) {
    self.vocabulary = vocabulary
    checker = PolicyChecker(vocabulary: vocabulary)
  }

  /// Makes room for the policies and names of a file of `byteCount` bytes.
  ///
  /// Growing the name table rehashed every name at each doubling, a few percent of a large
  /// file's time. The estimate is one policy per 96 bytes (the benchmark's files have 111);
  /// room reserved and not used is never written.
  mutating func reserveCapacity(forFileOf byteCount: Int) {
    let estimate = byteCount / 96
    guard estimate > 16 else { return }
    guard checksNames else { return declarations.reserveCapacity(estimate) }
    names.reserveCapacity(estimate)
    policies.reserveCapacity(estimate)
  }

  /// The names' and the checkers' diagnostics, in the order found.
  var diagnostics: DiagnosticList { DiagnosticList.merged(names.diagnostics, checkerDiagnostics) }

  mutating func beginDeclaration() {
    checker.reset()
  }

  mutating func beginLine(head: RetryHeadSyntax?) { checker.beginLine(head: head) }

  mutating func consumeClasses(
    _ names: ArraySlice<NameSyntax>, isExcept: Bool, at place: ClausePlace
  ) {
    checker.consumeClasses(names, isExcept: isExcept, at: place)
  }

  mutating func consumeImmediately(at place: ClausePlace) { checker.consumeImmediately(at: place) }

  mutating func consumeDuration(
    _ keyword: Keyword, _ literal: consuming DurationLiteralSyntax, at place: ClausePlace
  ) {
    checker.consumeDuration(keyword, literal, at: place)
  }

  mutating func consumeBackoff(
    _ literal: consuming DurationLiteralSyntax, _ growth: consuming BackoffGrowthSyntax?,
    at place: ClausePlace
  ) {
    checker.consumeBackoff(literal, growth, at: place)
  }

  mutating func consumeDelays(_ literals: [DurationLiteralSyntax], at place: ClausePlace) {
    checker.consumeDelays(literals, at: place)
  }

  mutating func consumeJitter(_ syntax: JitterSyntax, at place: ClausePlace) {
    checker.consumeJitter(syntax, at: place)
  }

  mutating func consumeHook(_ name: NameSyntax, at place: ClausePlace) {
    checker.consumeHook(name, at: place)
  }

  mutating func consumeHonoringRetryAfter(at place: ClausePlace) {
    checker.consumeHonoringRetryAfter(at: place)
  }

  mutating func consumeBudget(_ number: NumberLiteralSyntax, at place: ClausePlace) {
    checker.consumeBudget(number, at: place)
  }

  mutating func consumeHedge(_ syntax: HedgeSyntax, at place: ClausePlace) {
    checker.consumeHedge(syntax, at: place)
  }

  mutating func endLine(range: SourceRange, hasSyntaxErrors: Bool, names: [NameSyntax]) {
    checker.endLine(range: range, hasSyntaxErrors: hasSyntaxErrors, names: names)
  }

  /// None: the lines went to the checker, and no tree is built.
  mutating func takeLines() -> [LineSyntax] { [] }

  mutating func endDeclaration(_ declaration: PolicyDeclarationSyntax) {
    let isDuplicate = checksNames && names.isDuplicate(declaration.name)
    let policy = checker.finish(
      name: declaration.name.text, emptyRange: declaration.name.range,
      hasSyntaxErrors: declaration.hasSyntaxErrors)
    checkerDiagnostics.append(contentsOf: checker.diagnostics)
    guard checksNames else { return declarations.append((declaration.name, policy)) }
    if let policy, !isDuplicate { policies.append(policy) }
  }

  /// Checks a declaration of a tree, as if the parser handed it on.
  mutating func check(_ declaration: PolicyDeclarationSyntax) {
    beginDeclaration()
    for line in declaration.body.lines { checker.check(line) }
    endDeclaration(declaration)
  }
}

extension PolicyChecker {
  /// Reports every policy whose name an earlier policy of the file already has; returns,
  /// for each declaration, whether it is such a duplicate.
  static func checkNames(
    of declarations: [PolicyDeclarationSyntax], into diagnostics: inout [Diagnostic]
  ) -> [Bool] {
    var names = PolicyNameChecker()
    let isDuplicate = declarations.map { names.isDuplicate($0.name) }
    diagnostics += names.diagnostics
    return isDuplicate
  }
}
