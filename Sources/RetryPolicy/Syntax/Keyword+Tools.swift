// The language's words as the tools see them (the language server's completion, the grammar
// test, the REPL), derived from the clause table (`ClauseTable.swift`) so that a new keyword
// or clause reaches them unaided.

/// The words of the language, for editors and other tools.
package enum LanguageWords {
  /// Every keyword the lexer knows, in the order of its table.
  package static var keywords: [String] { Keyword.allCases.map(\.rawValue) }

  /// The keywords that start a clause after `retry N`, policy-wide ones included, in
  /// canonical order.
  package static var clauseKeywords: [String] { ClauseTable.entries.map(\.keyword.rawValue) }

  /// The keywords that start a policy-wide clause (`within`, `timeout`, `budget`, …).
  package static var policyWideKeywords: [String] {
    ClauseTable.entries.filter { $0.scope == .policyWide }.map(\.keyword.rawValue)
  }

  /// The clauses of which a rule has at most one: the delay clauses.
  package static var delayKeywords: [String] {
    ClauseTable.entries.filter { $0.scope == .ruleDelay }.map(\.keyword.rawValue)
  }

  /// The kinds of jitter spelt as words (`jitter full`); `jitter P%` is the other form.
  package static let jitterKinds: [String] = [Keyword.full, .equal, .decorrelated].map(\.rawValue)

  /// The duration units, shortest first.
  package static var units: [String] { DurationUnit.allCases.map(\.rawValue) }
}
