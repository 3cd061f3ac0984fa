import Foundation

// PLACEHOLDER with the agreed signatures; the compiler work replaces this file.

/// Compiles the text of one policy: a `retry` rule, with policy-wide clauses, or several
/// lines of them.
///
/// Throws ``PolicyCompileError`` carrying every diagnostic when the text has an error.
public func compile(policy source: String, vocabulary: Vocabulary = .open) throws -> CompiledPolicy
{
  throw PolicyCompileError(diagnostics: [])
}

/// Compiles a policy file's text: named policies, each `policy NAME = …` or a block.
public func compile(
  policyFile source: String, sourceName: String = "<file>", vocabulary: Vocabulary = .open
) throws -> PolicyFile {
  throw PolicyCompileError(diagnostics: [], sourceName: sourceName)
}

/// The compiled policies of one policy file, by name.
public struct PolicyFile: Sendable, Equatable {
  /// The policies in the order of the file.
  public var policies: [CompiledPolicy]

  /// Reads and compiles the policy file at `url`.
  public init(contentsOf url: URL, vocabulary: Vocabulary = .open) throws {
    self.policies = []
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
package func analyze(policyFile source: String, vocabulary: Vocabulary = .open) -> PolicyAnalysis {
  let (syntax, diagnostics) = Parser.parseFile(source)
  return PolicyAnalysis(syntax: syntax, diagnostics: diagnostics, policies: [])
}

/// Parses, checks and compiles the text of one policy without throwing; the result's syntax
/// holds one unnamed declaration.
package func analyze(policy source: String, vocabulary: Vocabulary = .open) -> PolicyAnalysis {
  let (body, comments, diagnostics) = Parser.parsePolicy(source)
  let name = NameSyntax(text: "", range: body.range)
  let declaration = PolicyDeclarationSyntax(name: name, form: .block, body: body, range: body.range)
  return PolicyAnalysis(
    syntax: SourceFileSyntax(policies: [declaration], comments: comments, range: body.range),
    diagnostics: diagnostics, policies: [])
}
