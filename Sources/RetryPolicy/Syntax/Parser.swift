// PLACEHOLDER with the agreed signatures; the syntax work replaces this file.

/// Reads policy text into a syntax tree, reporting every error and recovering after each.
package enum Parser {
  /// Parses a policy file: `policy NAME = …` and `policy NAME { … }` declarations.
  package static func parseFile(_ source: String) -> (SourceFileSyntax, [Diagnostic]) {
    let range = SourceRange(start: .start, end: .start)
    return (SourceFileSyntax(policies: [], comments: [], range: range), [])
  }

  /// Parses the text of one policy: lines of rules and policy-wide clauses, no `policy` keyword.
  package static func parsePolicy(_ source: String) -> (
    PolicyBodySyntax, [CommentSyntax], [Diagnostic]
  ) {
    let range = SourceRange(start: .start, end: .start)
    return (PolicyBodySyntax(lines: [], range: range), [], [])
  }
}
