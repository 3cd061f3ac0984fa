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
package struct CheckedPolicy: Sendable {
  /// The compiled value.
  package var policy: CompiledPolicy
  /// The declaration (`policy NAME …`), or the whole text of a single policy.
  package var range: SourceRange
  /// The name as written; nil for a single policy text.
  package var nameRange: SourceRange?
  /// The body: from the first line to the last.
  package var bodyRange: SourceRange
  /// Each rule's source, in the order of `policy.rules`.
  package var rules: [RuleSource]
  /// The policy-wide clauses, in the order written.
  package var policyWideClauses: [ClauseSource]

  /// The policy-wide clause `clause`, if written.
  package func policyWide(_ clause: Clause) -> ClauseSource? {
    policyWideClauses.first { $0.clause == clause }
  }

  /// Pairs a policy compiled from `declaration` without error with its ranges.
  init(policy: CompiledPolicy, declaration: PolicyDeclarationSyntax, isNamed: Bool = true) {
    self.policy = policy
    range = declaration.range
    nameRange = isNamed ? declaration.name.range : nil
    bodyRange = declaration.body.range
    var rules: [RuleSource] = []
    var policyWide: [ClauseSource] = []
    for line in declaration.body.lines {
      var clauses: [ClauseSource] = []
      var errorClasses: [NameSyntax] = []
      for clause in line.clauses {
        let source = ClauseSource(
          clause: clause.clause, keywordRange: clause.keywordRange, range: clause.range)
        if clause.isPolicyWide {
          policyWide.append(source)
        } else {
          clauses.append(source)
          if case .on(let names) = clause.kind { errorClasses += names }
        }
      }
      // A policy without errors has one compiled rule per line with `retry N`, in order.
      if let head = line.head {
        rules.append(
          RuleSource(
            range: line.range, headRange: head.range, countRange: head.countRange,
            clauses: clauses, errorClasses: errorClasses))
      }
    }
    self.rules = rules
    policyWideClauses = policyWide
  }
}
