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
  // Each line is checked as soon as it is read: no tree of the whole text is built.
  var checker = PolicyChecker(vocabulary: vocabulary)
  let (bodyRange, syntaxDiagnostics) = Parser.parsePolicy(source) { checker.check($0) }
  let hasSyntaxErrors = syntaxDiagnostics.contains { $0.severity == .error }
  let policy = checker.finish(
    name: nil, emptyRange: bodyRange, hasSyntaxErrors: hasSyntaxErrors)
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
  // What `analyze(policyFile:)` does, declaration by declaration as the parser reads them,
  // so that no tree of the whole file is kept: each policy is checked and compiled, and its
  // tree dropped, before the next is read. Only whether a policy had a syntax error waits for
  // the end (a diagnostic can point at the start of the next declaration); the checker runs
  // as if it had none, and what a syntax error changes is undone at the end.
  var checked: [CheckedDeclaration] = []
  var checkerDiagnostics: [Diagnostic] = []
  var nameDiagnostics: [Diagnostic] = []
  var firsts: [String: SourceRange] = [:]
  let syntaxDiagnostics = Parser.parseFile(source) { declaration in
    let name = declaration.name
    var isDuplicate = false
    if !name.text.isEmpty {
      if let first = firsts[name.text] {
        isDuplicate = true
        nameDiagnostics.append(
          Diagnostic(
            .duplicatePolicy(name.text), at: name.range,
            notes: [Diagnostic(.firstGivenHere(name.text), at: first)]))
      } else {
        firsts[name.text] = name.range
      }
    }
    var checker = PolicyChecker(vocabulary: vocabulary)
    let policy = checker.compile(
      declaration.body, name: name.text, emptyRange: name.range, hasSyntaxErrors: false)
    checked.append(
      CheckedDeclaration(
        start: declaration.range.start.offset, end: declaration.range.end.offset,
        policy: isDuplicate ? nil : policy,
        withoutRuleIndex: checker.ruleCount == 0
          ? checkerDiagnostics.count + checker.diagnostics.count - 1 : nil))
    checkerDiagnostics += checker.diagnostics
  }
  // The offsets of syntax errors, in order, to find those within each declaration.
  var errorOffsets: [Int] = []
  for diagnostic in syntaxDiagnostics where diagnostic.severity == .error {
    errorOffsets.append(diagnostic.range.start.offset)
  }
  errorOffsets.sort()
  var policies: [CompiledPolicy] = []
  policies.reserveCapacity(checked.count)
  var removed: [Int] = []
  for declaration in checked {
    let hasSyntaxErrors =
      !errorOffsets.isEmpty
      && containsOffset(in: declaration.start...declaration.end, errorOffsets)
    if hasSyntaxErrors {
      // The checker does not report a missing rule in a policy the parser already faulted.
      if let index = declaration.withoutRuleIndex { removed.append(index) }
    } else if let policy = declaration.policy {
      policies.append(policy)
    }
  }
  if syntaxDiagnostics.isEmpty && nameDiagnostics.isEmpty && checkerDiagnostics.isEmpty {
    return PolicyFile(policies: policies)
  }
  for index in removed.reversed() { checkerDiagnostics.remove(at: index) }
  let diagnostics = PolicyChecker.sortedByPosition(
    syntaxDiagnostics + nameDiagnostics + checkerDiagnostics)
  guard diagnostics.contains(where: { $0.severity == .error }) else {
    return PolicyFile(policies: policies)
  }
  throw PolicyCompileError(diagnostics: diagnostics, sourceName: sourceName)
}

/// Whether any of the ascending `offsets` lies in `range`.
private func containsOffset(in range: ClosedRange<Int>, _ offsets: [Int]) -> Bool {
  var low = 0
  var high = offsets.count
  while low < high {
    let middle = low + (high - low) / 2
    if offsets[middle] < range.lowerBound { low = middle + 1 } else { high = middle }
  }
  return low < offsets.count && offsets[low] <= range.upperBound
}

/// What `compile(policyFile:)` keeps of a declaration until the file's end.
private struct CheckedDeclaration {
  /// The offsets of the declaration's first byte and of the byte just past it.
  var start: Int
  var end: Int
  /// The compiled policy if the checker found nothing wrong and the name is not a duplicate.
  var policy: CompiledPolicy?
  /// The index of the `policy-without-rule` diagnostic in the checker's diagnostics, if any.
  var withoutRuleIndex: Int?
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
