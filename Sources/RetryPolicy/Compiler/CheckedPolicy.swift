// A compiled policy that remembers its source: the ranges of the policy, of each rule and of
// each clause, so that tools (hover, explain, export, generate) point at the text without
// parsing it again or matching rules to lines by index or keyword.

/// Where one clause of a policy stands.
package struct ClauseSource: Sendable, Hashable {
  /// The clause.
  package var clause: Clause
  /// The range of its keyword, where diagnostics about it point.
  package var keywordRange: SourceRange
  /// From the keyword to the end of its last argument.
  package var range: SourceRange
}

/// Where one rule of a policy stands: the line of `retry N`.
package struct RuleSource: Sendable, Hashable {
  /// The whole line.
  package var range: SourceRange
  /// `retry N` or `retry forever`.
  package var headRange: SourceRange
  /// The count (`N` or `forever`).
  package var countRange: SourceRange
  /// The rule's own clauses, in the order written (policy-wide clauses that end its line are
  /// the policy's).
  package var clauses: [ClauseSource]
  /// The names of its `on` clause, in order, with their ranges.
  package var errorClasses: [NameSyntax]

  /// The clause `clause` of this rule, if written.
  package func clause(_ clause: Clause) -> ClauseSource? {
    clauses.first { $0.clause == clause }
  }
}

/// A compiled policy with the ranges it came from.
///
/// It keeps its declaration's syntax (which shares the tree's storage, so keeping it costs no
/// copy) and derives the ranges of rules and clauses from it only when a tool asks.
package struct CheckedPolicy: Sendable {
  /// The compiled value.
  package var policy: CompiledPolicy
  /// The declaration it compiled from.
  private let declaration: PolicyDeclarationSyntax
  /// Whether the declaration is a named one of a file (not the text of a single policy).
  private let isNamed: Bool

  /// Pairs a policy compiled from `declaration` without error with its ranges.
  init(policy: CompiledPolicy, declaration: PolicyDeclarationSyntax, isNamed: Bool = true) {
    self.policy = policy
    self.declaration = declaration
    self.isNamed = isNamed
  }

  /// The declaration (`policy NAME …`), or the whole text of a single policy.
  package var range: SourceRange { declaration.range }
  /// The name as written; nil for a single policy text.
  package var nameRange: SourceRange? { isNamed ? declaration.name.range : nil }
  /// The body: from the first line to the last.
  package var bodyRange: SourceRange { declaration.body.range }

  /// Each rule's source, in the order of `policy.rules`: a policy without errors has one
  /// compiled rule per line with `retry N`, in order.
  package var rules: [RuleSource] {
    declaration.body.lines.compactMap { line in
      guard let head = line.head else { return nil }
      var clauses: [ClauseSource] = []
      var errorClasses: [NameSyntax] = []
      for clause in line.clauses where !clause.isPolicyWide {
        clauses.append(Self.source(of: clause))
        if clause.clause == .on { errorClasses += clause.names(0) }
      }
      return RuleSource(
        range: line.range, headRange: head.range, countRange: head.countRange,
        clauses: clauses, errorClasses: errorClasses)
    }
  }

  /// The policy-wide clauses, in the order written.
  package var policyWideClauses: [ClauseSource] {
    declaration.body.lines.flatMap { line in
      line.clauses.filter(\.isPolicyWide).map(Self.source(of:))
    }
  }

  /// The policy-wide clause `clause`, if written.
  package func policyWide(_ clause: Clause) -> ClauseSource? {
    policyWideClauses.first { $0.clause == clause }
  }

  private static func source(of clause: ClauseSyntax) -> ClauseSource {
    ClauseSource(clause: clause.clause, keywordRange: clause.keywordRange, range: clause.range)
  }
}
