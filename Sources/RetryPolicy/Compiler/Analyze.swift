// The one pipeline from text to compiled policies: parser → syntax tree → checker → compiled
// policies with their sources, and every diagnostic. `analyze` runs it; `compile` is the same
// pipeline, then a throw when there is an error. Every tool (check, fmt, explain, the REPL,
// the language server, generate, export, import, storm) reads the result: nothing downstream
// parses the text again.

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
  public var policies: [CompiledPolicy] { checked.map(\.policy) }
  /// The policies without errors with the ranges they came from, in the order of the text.
  package var checked: [CheckedPolicy]
  /// The syntax tree, comments included, for the tools.
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

  package init(diagnostics: [Diagnostic], checked: [CheckedPolicy], syntax: SourceFileSyntax) {
    self.diagnostics = diagnostics
    self.checked = checked
    self.syntax = syntax
  }
}

/// Parses, checks and compiles a policy file's text, reporting every diagnostic.
///
/// A policy with an error of its own (a syntax or semantic error in it, or a name an earlier
/// policy has) is left out of `policies`; the others compile.
///
///     let analysis = analyze(policyFile: text)
///     if !analysis.hasErrors { use(analysis.policies) }
public func analyze(policyFile source: String, vocabulary: Vocabulary = .open) -> PolicyAnalysis {
  let (file, syntaxDiagnostics) = Parser.parseFile(text: source)
  return check(file, syntaxDiagnostics: syntaxDiagnostics, vocabulary: vocabulary)
}

/// Parses, checks and compiles the text of one policy, reporting every diagnostic.
///
/// `policies` holds the compiled policy when the text has no error, and is empty otherwise.
///
///     let analysis = analyze(policy: "retry 3 backoff 1s x1")
///     analysis.warnings.first?.message
///     // "a factor of 1 keeps the delay constant; write 'delay 1s'"
public func analyze(policy source: String, vocabulary: Vocabulary = .open) -> PolicyAnalysis {
  let (body, comments, syntaxDiagnostics) = Parser.parsePolicy(text: source)
  var checker = PolicyChecker(vocabulary: vocabulary)
  let policy = checker.compile(
    body, name: nil, emptyRange: body.range, hasSyntaxErrors: !syntaxDiagnostics.isEmpty)
  // The text of one policy is an unnamed declaration of the whole body.
  let declaration = PolicyDeclarationSyntax(
    name: NameSyntax(text: "", range: body.range), form: .block, body: body, range: body.range)
  let checked = policy.map {
    [CheckedPolicy(policy: $0, declaration: declaration, isNamed: false)]
  }
  return finished(
    syntaxDiagnostics, checker.diagnostics, checked: checked ?? [],
    syntax: SourceFileSyntax(policies: [declaration], comments: comments, range: body.range))
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
  let (file, syntaxDiagnostics) = bytes.withUnsafeBufferPointer { Parser.parseFile(bytes: $0) }
  return check(file, syntaxDiagnostics: syntaxDiagnostics, vocabulary: vocabulary)
}

/// The checker over a file's tree: each declaration checked and compiled, names checked
/// across the file, and the parser's diagnostics merged with the checker's.
func check(_ file: SourceFileSyntax, syntaxDiagnostics: DiagnosticList, vocabulary: Vocabulary)
  -> PolicyAnalysis
{
  var checker = FileChecker(vocabulary: vocabulary)
  checker.reserveCapacity(file.policies.count)
  for declaration in file.policies { checker.check(declaration) }
  return finished(
    syntaxDiagnostics, checker.diagnostics, checked: checker.policies, syntax: file)
}

/// The analysis of a checked tree: the parser's diagnostics and the checker's together, in the
/// order of the text, capped at the first 100 errors and 100 warnings, with the counts of the
/// rest.
private func finished(
  _ syntaxDiagnostics: DiagnosticList, _ checkerDiagnostics: DiagnosticList,
  checked: [CheckedPolicy], syntax: SourceFileSyntax
) -> PolicyAnalysis {
  let (diagnostics, omittedErrors, omittedWarnings) = DiagnosticList.merged(
    syntaxDiagnostics, checkerDiagnostics
  ).finished()
  var analysis = PolicyAnalysis(diagnostics: diagnostics, checked: checked, syntax: syntax)
  analysis.omittedErrorCount = omittedErrors
  analysis.omittedWarningCount = omittedWarnings
  return analysis
}
