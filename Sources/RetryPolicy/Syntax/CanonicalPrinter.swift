// PLACEHOLDER with the agreed signatures; the syntax work replaces this file.

/// Prints syntax trees in the one canonical form the formatter writes.
package enum CanonicalPrinter {
  /// The whole file in canonical form, comments kept.
  package static func print(_ file: SourceFileSyntax) -> String { "" }

  /// One policy's text in canonical form, comments kept.
  package static func print(_ body: PolicyBodySyntax, comments: [CommentSyntax] = []) -> String {
    ""
  }
}
