import Foundation

// The compile API: text → parser → checker → compiled policies, with every diagnostic.

/// Compiles the text of one policy: a `retry` rule, with policy-wide clauses, or several
/// lines of them.
///
/// Throws ``PolicyCompileError`` carrying every diagnostic of the text (warnings too) when it
/// has an error; a policy that compiles with warnings is returned, and its warnings are not
/// shown.
///
///     let policy = try compile(policy: "retry 5 on serverError backoff 1s x1.5 jitter 10%")
public func compile(policy source: String, vocabulary: Vocabulary = .open) throws -> CompiledPolicy
{
  let (body, _, syntaxDiagnostics) = Parser.parsePolicy(source)
  let hasSyntaxErrors = syntaxDiagnostics.contains { $0.severity == .error }
  var checker = PolicyChecker(vocabulary: vocabulary)
  let policy = checker.compile(
    body, name: nil, emptyRange: body.range, hasSyntaxErrors: hasSyntaxErrors)
  if let policy { return policy }
  throw PolicyCompileError(
    diagnostics: PolicyChecker.sortedByPosition(syntaxDiagnostics + checker.diagnostics),
    sourceName: "<policy>")
}

/// Compiles a policy file's text: named policies, each `policy NAME = …` or a block.
///
/// Throws ``PolicyCompileError`` carrying every diagnostic of the file, reported under
/// `sourceName`, when any policy of it has an error.
public func compile(
  policyFile source: String, sourceName: String = "<file>", vocabulary: Vocabulary = .open
) throws -> PolicyFile {
  let analysis = analyze(policyFile: source, vocabulary: vocabulary)
  guard !analysis.hasErrors else {
    throw PolicyCompileError(diagnostics: analysis.diagnostics, sourceName: sourceName)
  }
  return PolicyFile(policies: analysis.policies)
}

/// The compiled policies of one policy file, by name.
///
///     let file = try PolicyFile(contentsOf: URL(fileURLWithPath: "payments.retry"))
///     let payments = file["payments"]
public struct PolicyFile: Sendable, Equatable {
  /// The policies in the order of the file.
  public var policies: [CompiledPolicy]

  /// Reads and compiles the policy file at `url`.
  ///
  /// The bytes are decoded as UTF-8, invalid sequences replaced. Throws the reading error
  /// when the file cannot be read, and ``PolicyCompileError`` (naming the file by its path)
  /// when it has an error.
  public init(contentsOf url: URL, vocabulary: Vocabulary = .open) throws {
    let data = try Data(contentsOf: url)
    let source = String(decoding: data, as: UTF8.self)
    let sourceName = url.isFileURL ? url.path : url.absoluteString
    self = try compile(policyFile: source, sourceName: sourceName, vocabulary: vocabulary)
  }

  /// Creates a file from compiled policies.
  public init(policies: [CompiledPolicy]) {
    self.policies = policies
  }

  /// The policy of that name, if the file has one.
  public subscript(name: String) -> CompiledPolicy? {
    policies.first { $0.name == name }
  }
}

/// Everything the tools need from one text, errors or not: the tree, every diagnostic, and
/// the policies that compiled.
package struct PolicyAnalysis: Sendable {
  /// The syntax tree (as far as it could be read).
  package var syntax: SourceFileSyntax
  /// Every diagnostic, errors, warnings and notes, in the order of the text.
  package var diagnostics: [Diagnostic]
  /// The policies without errors, in the order of the text.
  package var policies: [CompiledPolicy]

  /// Whether any diagnostic is an error.
  package var hasErrors: Bool { diagnostics.contains { $0.severity == .error } }
}

/// Parses, checks and compiles a policy file's text without throwing.
///
/// A policy with an error of its own (in its range, or a duplicate name) is left out of
/// `policies`; the others compile.
package func analyze(policyFile source: String, vocabulary: Vocabulary = .open) -> PolicyAnalysis {
  let (syntax, syntaxDiagnostics) = Parser.parseFile(source)
  var diagnostics = syntaxDiagnostics
  let isDuplicate = PolicyChecker.checkNames(of: syntax.policies, into: &diagnostics)
  var policies: [CompiledPolicy] = []
  for (index, declaration) in syntax.policies.enumerated() {
    let start = declaration.range.start.offset
    let end = declaration.range.end.offset
    let hasSyntaxErrors = syntaxDiagnostics.contains {
      $0.severity == .error && $0.range.start.offset >= start && $0.range.start.offset <= end
    }
    var checker = PolicyChecker(vocabulary: vocabulary)
    let policy = checker.compile(
      declaration.body, name: declaration.name.text, emptyRange: declaration.name.range,
      hasSyntaxErrors: hasSyntaxErrors)
    diagnostics += checker.diagnostics
    if let policy, !isDuplicate[index] { policies.append(policy) }
  }
  return PolicyAnalysis(
    syntax: syntax, diagnostics: PolicyChecker.sortedByPosition(diagnostics),
    policies: policies)
}

/// Parses, checks and compiles the text of one policy without throwing; the result's syntax
/// holds one unnamed declaration.
package func analyze(policy source: String, vocabulary: Vocabulary = .open) -> PolicyAnalysis {
  let (body, comments, syntaxDiagnostics) = Parser.parsePolicy(source)
  let hasSyntaxErrors = syntaxDiagnostics.contains { $0.severity == .error }
  var checker = PolicyChecker(vocabulary: vocabulary)
  let policy = checker.compile(
    body, name: nil, emptyRange: body.range, hasSyntaxErrors: hasSyntaxErrors)
  let name = NameSyntax(text: "", range: body.range)
  let declaration = PolicyDeclarationSyntax(name: name, form: .block, body: body, range: body.range)
  return PolicyAnalysis(
    syntax: SourceFileSyntax(policies: [declaration], comments: comments, range: body.range),
    diagnostics: PolicyChecker.sortedByPosition(syntaxDiagnostics + checker.diagnostics),
    policies: policy.map { [$0] } ?? [])
}
