// The language's words and clauses, each declared once.
//
// Every tool that needs a keyword or a clause reads it here: the lexer (which words are
// keywords), the parser (which words start a clause, and which clauses are policy-wide), the
// checker (the word a diagnostic quotes), the canonical printers (the spelling and the order),
// the language server's completion, the REPL's syntax dump, and the tests that compare the
// TextMate grammar and Grammar/README.md with this table. Adding a clause means one entry in
// `ClauseTable.entries`, one case in `Clause`, and its meaning (parse, check, compiled field,
// runtime); no other list exists to forget.

/// A reserved word of the language; its spelling is its raw value.
package enum Keyword: String, Sendable, Hashable, CaseIterable {
  case policy, retry, forever, on, except, immediately, delay, backoff, delays, jitter
  case full, equal, decorrelated, max, after, honoring
  case retryAfter = "retry-after"
  case within, timeout, budget, x, hedge, breaker

  /// The keyword as written in policy text.
  package var text: String { rawValue }

  /// The clause this keyword starts, if any (`honoring` starts `honoring retry-after`).
  package var clause: Clause? { ClauseTable.clause(startedBy: self) }

  /// Whether the keyword starts a clause after `retry N` (`on`, `backoff`, `within`, …).
  var startsClause: Bool { clause != nil }

  /// Whether the keyword starts a policy-wide clause.
  var isPolicyWide: Bool { clause?.isPolicyWide ?? false }
}

/// A word that is a keyword only inside `breaker P% [over D] [min N] [for D]`; elsewhere it
/// is an ordinary name, so policies and hooks called `over`, `min` or `for` stay legal.
package enum BreakerWord: String, Sendable, Hashable, CaseIterable {
  case over, min, `for`

  /// The word as written in policy text.
  package var text: String { rawValue }
}

/// One clause of the language, in canonical order: the order of `ClauseTable.entries`.
package enum Clause: Int, Sendable, Hashable, CaseIterable, Comparable {
  case on, except, immediately, delay, backoff, delays, jitter, max, after, honoringRetryAfter
  case within, timeout, budget, hedge, breaker

  /// The clause's entry in the table.
  package var spec: ClauseSpec { ClauseTable.entries[rawValue] }

  /// The clause's keywords as written, such as `backoff` or `honoring retry-after`.
  package var text: String { spec.text }

  /// The keyword that starts the clause.
  package var keyword: Keyword { spec.keywords[0] }

  /// Whether the clause belongs to the whole policy rather than to one rule.
  package var isPolicyWide: Bool { spec.scope == .policyWide }

  /// Whether the clause sets a rule's delays (a rule has at most one such clause).
  package var isDelay: Bool { spec.scope == .ruleDelay }

  /// Orders clauses canonically.
  package static func < (lhs: Clause, rhs: Clause) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// What the table says of one clause.
package struct ClauseSpec: Sendable {
  /// Where a clause belongs.
  package enum Scope: Sendable, Hashable {
    /// To one rule (`on`, `jitter`, `max`, …).
    case rule
    /// To one rule, and it sets the rule's delays: at most one of these per rule.
    case ruleDelay
    /// To the whole policy (`within`, `timeout`, `budget`, `hedge`).
    case policyWide
  }

  /// The shape of a clause's arguments.
  package enum Arguments: Sendable, Hashable {
    /// No argument (`immediately`, `honoring retry-after`).
    case none
    /// A list of error classes: `A, B`.
    case errorClasses
    /// One duration: `D`.
    case duration
    /// A duration and an optional growth: `D`, `D xF`, `D +I`.
    case durationAndGrowth
    /// A list of durations: `D1, D2, …`.
    case durations
    /// A percentage or a jitter word: `P%`, `full`, `equal`, `decorrelated`.
    case jitter
    /// A hook name.
    case hook
    /// A percentage: `P%`.
    case percent
    /// A count and a duration: `N after D`.
    case countAfterDuration
    /// A percentage and optional settings: `P% [over D] [min N] [for D]`.
    case breaker
  }

  /// The clause.
  package var clause: Clause
  /// The keywords that spell it, before any argument: `[.backoff]`, `[.honoring, .retryAfter]`.
  package var keywords: [Keyword]
  /// Where it belongs.
  package var scope: Scope
  /// The shape of its arguments.
  package var arguments: Arguments
  /// Whether a duration argument must be above zero (`max 0s` is an error, `delay 0s` is not).
  package var requiresPositiveDuration: Bool
  /// Its limits in words, for documentation and hover.
  package var limits: String
  /// The completion snippet of its arguments, in the language server's snippet syntax
  /// (`${1:1s}`); empty for a clause without arguments.
  package var argumentSnippet: String
  /// One line that says what it does.
  package var summary: String

  /// The keywords as written: `backoff`, `honoring retry-after`.
  package var text: String { keywords.map(\.rawValue).joined(separator: " ") }

  /// The completion snippet of the whole clause: `backoff ${1:1s}`.
  package var snippet: String { argumentSnippet.isEmpty ? text : text + " " + argumentSnippet }
}

/// The table of clauses, and what is derived from it.
package enum ClauseTable {
  /// Every clause, in canonical order (`Clause`'s order).
  package static let entries: [ClauseSpec] = [
    ClauseSpec(
      clause: .on, keywords: [.on], scope: .rule, arguments: .errorClasses,
      requiresPositiveDuration: false, limits: "names, status codes 100…599 or classes 1xx…5xx",
      argumentSnippet: "${1:serverError}",
      summary: "retry only errors of these classes"),
    ClauseSpec(
      clause: .except, keywords: [.except], scope: .rule, arguments: .errorClasses,
      requiresPositiveDuration: false, limits: "names, status codes 100…599 or classes 1xx…5xx",
      argumentSnippet: "${1:cancelled}",
      summary: "never retry errors of these classes"),
    ClauseSpec(
      clause: .immediately, keywords: [.immediately], scope: .ruleDelay, arguments: .none,
      requiresPositiveDuration: false, limits: "",
      argumentSnippet: "",
      summary: "no delay before a retry (the default)"),
    ClauseSpec(
      clause: .delay, keywords: [.delay], scope: .ruleDelay, arguments: .duration,
      requiresPositiveDuration: false, limits: "0 … 10000h",
      argumentSnippet: "${1:1s}",
      summary: "the same delay before every retry"),
    ClauseSpec(
      clause: .backoff, keywords: [.backoff], scope: .ruleDelay, arguments: .durationAndGrowth,
      requiresPositiveDuration: true, limits: "D above 0 … 10000h; factor 1 … 1000",
      argumentSnippet: "${1:1s} x${2:2}",
      summary: "exponential (D xF) or linear (D +I) delays"),
    ClauseSpec(
      clause: .delays, keywords: [.delays], scope: .ruleDelay, arguments: .durations,
      requiresPositiveDuration: false, limits: "each 0 … 10000h",
      argumentSnippet: "${1:1s}, ${2:5s}",
      summary: "an explicit schedule; the last delay repeats"),
    ClauseSpec(
      clause: .jitter, keywords: [.jitter], scope: .rule, arguments: .jitter,
      requiresPositiveDuration: false, limits: "P above 0 … 100",
      argumentSnippet: "${1:10%}",
      summary: "randomizes each delay"),
    ClauseSpec(
      clause: .max, keywords: [.max], scope: .rule, arguments: .duration,
      requiresPositiveDuration: true, limits: "above 0 … 10000h",
      argumentSnippet: "${1:30s}",
      summary: "caps every delay, after jitter"),
    ClauseSpec(
      clause: .after, keywords: [.after], scope: .rule, arguments: .hook,
      requiresPositiveDuration: false, limits: "",
      argumentSnippet: "${1:refreshToken}",
      summary: "runs the host's hook before each retry"),
    ClauseSpec(
      clause: .honoringRetryAfter, keywords: [.honoring, .retryAfter], scope: .rule,
      arguments: .none, requiresPositiveDuration: false, limits: "",
      argumentSnippet: "",
      summary: "a delay carried by the error replaces the computed one"),
    ClauseSpec(
      clause: .within, keywords: [.within], scope: .policyWide, arguments: .duration,
      requiresPositiveDuration: true, limits: "above 0 … 10000h",
      argumentSnippet: "${1:1m}",
      summary: "overall deadline, counted from the first attempt"),
    ClauseSpec(
      clause: .timeout, keywords: [.timeout], scope: .policyWide, arguments: .duration,
      requiresPositiveDuration: true, limits: "above 0 … 10000h",
      argumentSnippet: "${1:10s}",
      summary: "each attempt is cancelled after this long"),
    ClauseSpec(
      clause: .budget, keywords: [.budget], scope: .policyWide, arguments: .percent,
      requiresPositiveDuration: false, limits: "P above 0 … 100",
      argumentSnippet: "${1:10%}",
      summary: "retries of all runs stay below this share of first attempts"),
    ClauseSpec(
      clause: .hedge, keywords: [.hedge], scope: .policyWide,
      arguments: .countAfterDuration, requiresPositiveDuration: false,
      limits: "N 1 … 10; D 0 … 10000h",
      argumentSnippet: "${1:2} \(Keyword.after.rawValue) ${2:100ms}",
      summary: "up to N extra concurrent attempts, one every D"),
    ClauseSpec(
      clause: .breaker, keywords: [.breaker], scope: .policyWide, arguments: .breaker,
      requiresPositiveDuration: true,
      limits: "P 1 … 100; over 1s … 24h (30s); min 1 … 1000000 (20); for 100ms … 24h (5s)",
      argumentSnippet:
        "${1:50}% \(BreakerWord.over.rawValue) ${2:30s} \(BreakerWord.min.rawValue) ${3:20}"
        + " \(BreakerWord.for.rawValue) ${4:5s}",
      summary: "stops calling while P% of recent attempts fail, then lets one probe through"),
  ]

  /// The clause `keyword` starts, if any.
  static func clause(startedBy keyword: Keyword) -> Clause? {
    entries.first { $0.keywords[0] == keyword }?.clause
  }

  /// The keywords that start a clause, in canonical order, the words a misspelt clause
  /// keyword is compared with (with `retry`).
  static let clauseWords: [String] =
    [Keyword.retry.rawValue] + entries.map(\.keywords[0].rawValue)

  /// A keyword as the lexer matches it: its bytes, and the clause it starts.
  struct LexerEntry {
    var spelling: [UInt8]
    var keyword: Keyword
    var clause: Clause?
  }

  /// The lexer's keywords by length: the keywords of each length.
  static let keywordsByLength: [[LexerEntry]] = {
    var table: [[LexerEntry]] = []
    for keyword in Keyword.allCases {
      let spelling = Array(keyword.rawValue.utf8)
      while table.count <= spelling.count { table.append([]) }
      table[spelling.count].append(
        LexerEntry(spelling: spelling, keyword: keyword, clause: keyword.clause))
    }
    return table
  }()

  /// The keyword spelt by `bytes`, if any, and the clause it starts.
  static func keyword(spelledBy bytes: UnsafeBufferPointer<UInt8>) -> (Keyword, Clause?)? {
    guard bytes.count < keywordsByLength.count else { return nil }
    candidates: for entry in keywordsByLength[bytes.count] {
      for index in 0..<entry.spelling.count where entry.spelling[index] != bytes[index] {
        continue candidates
      }
      return (entry.keyword, entry.clause)
    }
    return nil
  }
}
