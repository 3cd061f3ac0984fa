// The one pipeline from text to compiled policies: parser → checker → compiled policies, with
// every diagnostic. `analyze` runs it; `compile` is `analyze`, then a throw when there is an
// error. Declarations and lines are checked as the parser reads them, so no tree of the whole
// text is kept unless a tool asks for it.

/// What analyzing policy text finds: every diagnostic, warnings included, and the policies
/// that compiled.
///
/// `analyze` never throws: a text with errors still gives its diagnostics, and in a file the
/// policies without an error of their own still compile. Use it to show warnings, which
/// `compile` only returns beside a successful result.
///
///     let analysis = analyze(policy: "retry 3 delay 0s")
///     for warning in analysis.warnings { print(warning) }
///     // 1:9: warning: 'delay 0s' waits no time; write 'immediately'
public struct PolicyAnalysis: Sendable {
  /// Every diagnostic, errors, warnings and notes, in the order of the text.
  public var diagnostics: [Diagnostic]
  /// The policies without errors, in the order of the text.
  public var policies: [CompiledPolicy]
  /// The syntax tree, for the tools; empty unless asked for.
  package var syntax: SourceFileSyntax
  /// The errors found beyond the first 100, which `diagnostics` leaves out (its last
  /// diagnostic is then a `diagnostics-omitted` note that says how many).
  public var omittedErrorCount = 0
  /// The warnings found beyond the first 100, which `diagnostics` leaves out.
  public var omittedWarningCount = 0

  /// Whether any diagnostic is an error.
  public var hasErrors: Bool { diagnostics.contains { $0.severity == .error } }

  /// The diagnostics of severity warning.
  public var warnings: [Diagnostic] { diagnostics.filter { $0.severity == .warning } }

  package init(diagnostics: [Diagnostic], policies: [CompiledPolicy], syntax: SourceFileSyntax) {
    self.diagnostics = diagnostics
    self.policies = policies
    self.syntax = syntax
  }
}

/// Parses, checks and compiles a policy file's text, reporting every diagnostic.
///
/// A policy with an error of its own (a syntax or semantic error in it, or a name an earlier
/// policy has) is left out of `policies`; the others compile.
///
/// A file of more than 1 MiB is read in parts on up to eight cores (each part starts at a
/// line that starts with `policy`); the result is the one a single pass gives.
///
///     let analysis = analyze(policyFile: text)
///     if !analysis.hasErrors { use(analysis.policies) }
public func analyze(policyFile source: String, vocabulary: Vocabulary = .open) -> PolicyAnalysis {
  analyze(policyFile: source, vocabulary: vocabulary, keepingSyntax: false)
}

/// Parses, checks and compiles the text of one policy, reporting every diagnostic.
///
/// `policies` holds the compiled policy when the text has no error, and is empty otherwise.
///
///     let analysis = analyze(policy: "retry 3 backoff 1s x1")
///     analysis.warnings.first?.message
///     // "a factor of 1 keeps the delay constant; write 'delay 1s'"
public func analyze(policy source: String, vocabulary: Vocabulary = .open) -> PolicyAnalysis {
  analyze(policy: source, vocabulary: vocabulary, keepingSyntax: false)
}

/// Parses, checks and compiles a policy file given as its bytes, as read from the disk.
///
/// The same as ``analyze(policyFile:vocabulary:)-(String,_)``, and bytes that are not UTF-8
/// (anywhere, comments included) are `invalid-utf8` errors at their line and column, where a
/// `String` would have turned them into U+FFFD unseen. A UTF-8 byte order mark at the start
/// is skipped. Render the diagnostics with ``DiagnosticRenderer/init(bytes:sourceName:usesColor:)``.
///
///     let analysis = analyze(policyFile: Array(try Data(contentsOf: url)))
public func analyze(policyFile bytes: [UInt8], vocabulary: Vocabulary = .open) -> PolicyAnalysis {
  analyze(policyFile: bytes, vocabulary: vocabulary, keepingSyntax: false)
}

/// ``analyze(policyFile:vocabulary:)-([UInt8],_)``, keeping the syntax tree and its comments
/// for the tools when `keepingSyntax` is true.
package func analyze(policyFile bytes: [UInt8], vocabulary: Vocabulary, keepingSyntax: Bool)
  -> PolicyAnalysis
{
  bytes.withUnsafeBufferPointer { buffer in
    analyze(policyFile: .bytes(buffer), vocabulary: vocabulary, keepingSyntax: keepingSyntax)
  }
}

/// ``analyze(policyFile:vocabulary:)``, keeping the syntax tree and its comments for the tools
/// when `keepingSyntax` is true.
package func analyze(policyFile source: String, vocabulary: Vocabulary, keepingSyntax: Bool)
  -> PolicyAnalysis
{
  analyze(policyFile: .text(source), vocabulary: vocabulary, keepingSyntax: keepingSyntax)
}

/// A policy file's text: a string, or bytes that may not be UTF-8.
private enum FileText {
  case text(String)
  case bytes(UnsafeBufferPointer<UInt8>)

  /// The length of the text in UTF-8 bytes.
  var byteCount: Int {
    switch self {
    case .text(let source): source.utf8.count
    case .bytes(let bytes): bytes.count
    }
  }

  /// Calls `body` with the text's bytes; nil for a string whose bytes are not contiguous.
  func withBytes<Result>(_ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result? {
    switch self {
    case .text(let source): source.utf8.withContiguousStorageIfAvailable(body)
    case .bytes(let bytes): body(bytes)
    }
  }

  func parse<Consumer: DeclarationConsumer>(keepsComments: Bool, into consumer: inout Consumer)
    -> (SourceRange, [CommentSyntax], DiagnosticList)
  {
    switch self {
    case .text(let source):
      Parser.parseFile(source, keepsComments: keepsComments, into: &consumer)
    case .bytes(let bytes):
      Parser.parseFile(bytes: bytes, keepsComments: keepsComments, into: &consumer)
    }
  }
}

/// ``analyze(policyFile:vocabulary:)``, keeping the comments (in `syntax.comments`) but no
/// tree: what a tool needs to compare a text's comments without the memory of its tree.
package func analyze(policyFile source: String, vocabulary: Vocabulary, keepingComments: Bool)
  -> PolicyAnalysis
{
  analyze(
    policyFile: .text(source), vocabulary: vocabulary, keepingSyntax: false,
    keepingComments: keepingComments)
}

/// ``analyze(policyFile:vocabulary:)``, reading the file in at most `maximumParts` parts of at
/// least `minimumPartBytes` bytes each (one part: a single pass); for the tests and the
/// benchmarks, which compare the two.
package func analyze(
  policyFile source: String, vocabulary: Vocabulary, maximumParts: Int, minimumPartBytes: Int
) -> PolicyAnalysis {
  analyze(
    policyFile: .text(source), vocabulary: vocabulary, keepingSyntax: false,
    parting: FileParting(maximumParts: maximumParts, minimumPartBytes: minimumPartBytes))
}

private func analyze(
  policyFile source: FileText, vocabulary: Vocabulary, keepingSyntax: Bool,
  keepingComments: Bool = false, parting: FileParting = .automatic
) -> PolicyAnalysis {
  // A large file is read in parts, on several cores, when no tree or comment is kept.
  if !keepingSyntax && !keepingComments, parting.maximumParts > 1,
    let analysis = source.withBytes({
      analyzeInParts($0, vocabulary: vocabulary, parting: parting)
    }) ?? nil
  {
    return analysis
  }
  var checker = FileChecker(vocabulary: vocabulary)
  checker.reserveCapacity(forFileOf: source.byteCount)
  let range: SourceRange
  let comments: [CommentSyntax]
  let syntaxDiagnostics: DiagnosticList
  var declarations: [PolicyDeclarationSyntax] = []
  if keepingSyntax {
    // The tree first, then the checker over its declarations: the same checks in the same
    // order.
    var collector = LineCollector()
    (range, comments, syntaxDiagnostics) = source.parse(keepsComments: true, into: &collector)
    declarations = collector.takeDeclarations()
    for declaration in declarations { checker.check(declaration) }
  } else {
    // Each declaration is checked and compiled as the parser reads it, and no tree is built:
    // memory stays bounded by the largest declaration.
    (range, comments, syntaxDiagnostics) = source.parse(
      keepsComments: keepingComments, into: &checker)
  }
  let (diagnostics, omittedErrors, omittedWarnings) = merged(
    syntaxDiagnostics, checker.diagnostics)
  var analysis = PolicyAnalysis(
    diagnostics: diagnostics, policies: checker.policies,
    syntax: SourceFileSyntax(policies: declarations, comments: comments, range: range))
  analysis.omittedErrorCount = omittedErrors
  analysis.omittedWarningCount = omittedWarnings
  return analysis
}

/// ``analyze(policy:vocabulary:)``, keeping the syntax tree (one unnamed declaration) and its
/// comments for the tools when `keepingSyntax` is true.
package func analyze(policy source: String, vocabulary: Vocabulary, keepingSyntax: Bool)
  -> PolicyAnalysis
{
  let (policy, checked, range, lines, comments) = checkPolicy(
    source, vocabulary: vocabulary, keepingSyntax: keepingSyntax)
  let (diagnostics, omittedErrors, omittedWarnings) = checked
  let body = PolicyBodySyntax(lines: lines, range: range)
  let name = NameSyntax(text: "", range: range)
  let declaration = PolicyDeclarationSyntax(name: name, form: .block, body: body, range: range)
  var analysis = PolicyAnalysis(
    diagnostics: diagnostics, policies: policy.map { [$0] } ?? [],
    syntax: SourceFileSyntax(policies: [declaration], comments: comments, range: range))
  analysis.omittedErrorCount = omittedErrors
  analysis.omittedWarningCount = omittedWarnings
  return analysis
}

/// The pipeline for the text of one policy: the checker takes each line as the parser reads
/// it; returns the compiled policy (nil on any error), the diagnostics in the order of the
/// text (capped, with the counts left out), the body's range, and the tree's lines and
/// comments when `keepingSyntax`.
func checkPolicy(_ source: String, vocabulary: Vocabulary, keepingSyntax: Bool = false)
  -> (
    CompiledPolicy?, (diagnostics: [Diagnostic], omittedErrors: Int, omittedWarnings: Int),
    SourceRange, [LineSyntax], [CommentSyntax]
  )
{
  var checker = PolicyChecker(vocabulary: vocabulary)
  var lines: [LineSyntax] = []
  let range: SourceRange
  let comments: [CommentSyntax]
  let syntaxDiagnostics: DiagnosticList
  if keepingSyntax {
    // The tree first, then the checker over its lines: the same checks in the same order.
    var collector = LineCollector()
    (range, comments, syntaxDiagnostics) = Parser.parsePolicy(
      source, keepsComments: true, into: &collector)
    lines = collector.takeLines()
    for line in lines { checker.check(line) }
  } else {
    (range, comments, syntaxDiagnostics) = Parser.parsePolicy(source, into: &checker)
  }
  let policy = checker.finish(
    name: nil, emptyRange: range, hasSyntaxErrors: !syntaxDiagnostics.isEmpty)
  return (policy, merged(syntaxDiagnostics, checker.diagnostics), range, lines, comments)
}

/// The parser's diagnostics and the checker's together, in the order of the text, capped at
/// the first 100 errors and 100 warnings, with the counts of the rest.
private func merged(_ syntaxDiagnostics: DiagnosticList, _ checkerDiagnostics: DiagnosticList)
  -> (diagnostics: [Diagnostic], omittedErrors: Int, omittedWarnings: Int)
{
  DiagnosticList.merged(syntaxDiagnostics, checkerDiagnostics).finished()
}
