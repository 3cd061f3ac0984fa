// The language's words as the tools see them (the language server's completion, the grammar
// test), derived from the lexer's keyword table so that a new keyword reaches them unaided.

/// The words of the language, for editors and other tools.
package enum LanguageWords {
  /// Every keyword the lexer knows, in the order of its table.
  package static var keywords: [String] { Keyword.allCases.map(\.rawValue) }

  /// The keywords that start a clause after `retry N`, policy-wide ones included.
  package static var clauseKeywords: [String] {
    Keyword.allCases.filter(\.startsClause).map(\.rawValue)
  }

  /// The keywords that start a policy-wide clause (`within`, `timeout`, `budget`, …).
  package static var policyWideKeywords: [String] {
    Keyword.allCases.filter(\.isPolicyWide).map(\.rawValue)
  }

  /// The clauses of which a rule has at most one: the delay clauses.
  package static let delayKeywords: [String] = [
    Keyword.immediately, .delay, .backoff, .delays,
  ].map(\.rawValue)

  /// The kinds of jitter spelt as words (`jitter full`); `jitter P%` is the other form.
  package static let jitterKinds: [String] = [Keyword.full, .equal, .decorrelated].map(\.rawValue)

  /// The duration units, shortest first.
  package static var units: [String] { DurationUnit.allCases.map(\.rawValue) }
}
