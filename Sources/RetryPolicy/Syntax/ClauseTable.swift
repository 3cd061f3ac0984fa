// The language's words and clauses, each declared once.
//
// A clause's entry is its model: its keyword, its arguments (each a shape, an optional word of
// its own such as `over`, whether it may be left out, its limits with the diagnostic's range
// text, its default), whether it belongs to a rule or to the whole policy, and, by its place
// in `entries`, its canonical order. The parser reads arguments by shape, the checker checks
// the limits from the entry, the canonical printer and the REPL's syntax dump print by shape,
// and completion and hover read the entry. What a clause means is written where it is
// used: `switch`es over `Clause` without `default:`, so the compiler lists every place a new
// clause must be handled (Grammar/README.md, "Adding a clause").

/// A reserved word of the language; its spelling is its raw value.
package enum Keyword: String, Sendable, Hashable, CaseIterable {
  case policy, retry, forever, on, except, immediately, delay, backoff, delays, jitter
  case full, equal, decorrelated, max, after, honoring
  case retryAfter = "retry-after"
  case within, timeout, budget, x, hedge, breaker, limit, throttle, rate

  /// The keyword as written in policy text.
  package var text: String { rawValue }

  /// The clause this keyword starts, if any (`honoring` starts `honoring retry-after`).
  package var clause: Clause? { ClauseTable.clause(startedBy: self) }
}

/// One clause of the language, in canonical order: the order of `ClauseTable.entries`.
package enum Clause: Int, Sendable, Hashable, CaseIterable, Comparable {
  case on, except, immediately, delay, backoff, delays, jitter, max, after, honoringRetryAfter
  case within, timeout, budget, hedge, breaker, limit, throttle, rate

  /// The clause's entry in the table.
  package var spec: ClauseSpec { ClauseTable.entries[rawValue] }

  // The parser and the checker read these for every clause: each reads its member of the
  // entry in place, where `spec` copies the whole entry.

  /// The arguments of the clause's entry, in the order they are written.
  package var arguments: [ArgumentSpec] { ClauseTable.entries[rawValue].arguments }

  /// The number of arguments of the clause's entry.
  package var argumentCount: Int { ClauseTable.entries[rawValue].arguments.count }

  /// The argument at `index` of the clause's entry, read in place.
  ///
  /// The parser and the checker read an argument's members through this
  /// (`argumentSpec(i).shape`) and pass the index, not the `ArgumentSpec`: the table is
  /// immutable, so a member read from it in place costs no retain, where an `ArgumentSpec` or
  /// an `arguments` array held across a call is retained and released for every clause read.
  package func argumentSpec(_ index: Int) -> ArgumentSpec {
    ClauseTable.entries[rawValue].arguments[index]
  }

  /// The clause's keywords as written, such as `backoff` or `honoring retry-after`.
  package var text: String { ClauseTable.entries[rawValue].text }

  /// The keyword that starts the clause.
  package var keyword: Keyword { ClauseTable.entries[rawValue].keyword }

  /// Whether the clause belongs to the whole policy rather than to one rule.
  package var isPolicyWide: Bool { ClauseTable.entries[rawValue].scope == .policyWide }

  /// Orders clauses canonically.
  package static func < (lhs: Clause, rhs: Clause) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// The table of clauses, and what is derived from it.
package enum ClauseTable {
  /// The longest duration any clause takes, in words.
  static let durationText = "at most 10000h"
  /// A duration above zero and at most the longest.
  static let positiveDuration = ArgumentLimits(
    .duration(allowsZero: false), "above 0, at most 10000h")
  /// A duration of zero or more, at most the longest.
  static let anyDuration = ArgumentLimits(.duration(allowsZero: true), durationText)

  /// A setting of `breaker`, whose message names it: `word` is empty for the percentage.
  static func breakerLimits(
    _ word: String, _ bounds: ArgumentLimits.Bounds, _ text: String, suffix: String = ""
  ) -> ArgumentLimits {
    ArgumentLimits(bounds, text) { .breakerOutOfRange(word, $0.text + suffix, range: text) }
  }

  /// A setting of `limit`, `throttle` or `rate`, whose message names it: `word` is empty for the
  /// first value.
  static func sheddingLimits(
    _ clause: String, _ word: String, _ bounds: ArgumentLimits.Bounds, _ text: String
  ) -> ArgumentLimits {
    ArgumentLimits(bounds, text) {
      .sheddingOutOfRange(clause, word, $0.text, range: text)
    }
  }

  /// Every clause, in canonical order (`Clause`'s order).
  package static let entries: [ClauseSpec] = [
    ClauseSpec(
      clause: .on, keyword: .on, scope: .rule,
      arguments: [ArgumentSpec(.errorClasses, "A, B")],
      argumentSnippet: "${1:serverError}",
      summary: "retry only errors of these classes"),
    ClauseSpec(
      clause: .except, keyword: .except, scope: .rule,
      arguments: [ArgumentSpec(.errorClasses, "A, B")],
      argumentSnippet: "${1:cancelled}",
      summary: "never retry errors of these classes"),
    ClauseSpec(
      clause: .immediately, keyword: .immediately, scope: .ruleDelay, arguments: [],
      argumentSnippet: "",
      summary: "no delay before a retry (the default)"),
    ClauseSpec(
      clause: .delay, keyword: .delay, scope: .ruleDelay,
      arguments: [ArgumentSpec(.duration, "D", limits: anyDuration)],
      argumentSnippet: "${1:1s}",
      summary: "the same delay before every retry"),
    ClauseSpec(
      clause: .backoff, keyword: .backoff, scope: .ruleDelay,
      arguments: [
        ArgumentSpec(.duration, "D", limits: positiveDuration),
        ArgumentSpec(
          .growth, "xF | +I", isOptional: true,
          limits: ArgumentLimits(.factor, "1 to 1000"), defaultValue: "x2"),
      ],
      argumentSnippet: "${1:1s} x${2:2}",
      summary: "exponential (D xF) or linear (D +I) delays"),
    ClauseSpec(
      clause: .delays, keyword: .delays, scope: .ruleDelay,
      arguments: [ArgumentSpec(.durations, "D1, D2, …", limits: anyDuration)],
      argumentSnippet: "${1:1s}, ${2:5s}",
      summary: "an explicit schedule; the last delay repeats"),
    ClauseSpec(
      clause: .jitter, keyword: .jitter, scope: .rule,
      arguments: [
        ArgumentSpec(
          .jitter, "P% | full | equal | decorrelated",
          limits: ArgumentLimits(.percentAboveZero, "above 0% and at most 100%") {
            .jitterOutOfRange($0.text)
          })
      ],
      argumentSnippet: "${1:10%}",
      summary: "randomizes each delay"),
    ClauseSpec(
      clause: .max, keyword: .max, scope: .rule,
      arguments: [ArgumentSpec(.duration, "D", limits: positiveDuration)],
      argumentSnippet: "${1:30s}",
      summary: "caps every delay, after jitter"),
    ClauseSpec(
      clause: .after, keyword: .after, scope: .rule,
      arguments: [ArgumentSpec(.hook, "NAME")],
      argumentSnippet: "${1:refreshToken}",
      summary: "runs the host's hook before each retry"),
    ClauseSpec(
      clause: .honoringRetryAfter, keyword: .honoring, scope: .rule,
      arguments: [
        ArgumentSpec(
          Keyword.retryAfter.text, .none, "", expectedWord: .expectedRetryAfter())
      ],
      argumentSnippet: "",
      summary: "a delay carried by the error replaces the computed one"),
    ClauseSpec(
      clause: .within, keyword: .within, scope: .policyWide,
      arguments: [ArgumentSpec(.duration, "D", limits: positiveDuration)],
      argumentSnippet: "${1:1m}",
      summary: "overall deadline, counted from the first attempt"),
    ClauseSpec(
      clause: .timeout, keyword: .timeout, scope: .policyWide,
      arguments: [ArgumentSpec(.duration, "D", limits: positiveDuration)],
      argumentSnippet: "${1:10s}",
      summary: "each attempt is cancelled after this long"),
    ClauseSpec(
      clause: .budget, keyword: .budget, scope: .policyWide,
      arguments: [
        ArgumentSpec(
          .percent, "P%",
          limits: ArgumentLimits(.percentAboveZero, "above 0% and at most 100%") {
            .budgetOutOfRange($0.text)
          })
      ],
      argumentSnippet: "${1:10%}",
      summary: "retries of all runs stay below this share of first attempts"),
    ClauseSpec(
      clause: .hedge, keyword: .hedge, scope: .policyWide,
      arguments: [
        ArgumentSpec(
          .count, "N",
          limits: ArgumentLimits(.wholeNumbers(1...PolicyLimits.largestHedgeCount), "1 to 10") {
            .hedgeCountOutOfRange($0.wholeNumber ?? 0)
          },
          expectedValue: .expectedHedge()),
        ArgumentSpec(
          Keyword.after.text, .duration, "D", limits: anyDuration,
          expectedWord: .expectedHedge()),
      ],
      argumentSnippet: "${1:2} \(Keyword.after.rawValue) ${2:100ms}",
      summary: "up to N extra concurrent attempts, one every D"),
    ClauseSpec(
      clause: .breaker, keyword: .breaker, scope: .policyWide,
      arguments: [
        ArgumentSpec(
          .percent, "P%",
          limits: breakerLimits(
            "", .wholeNumbers(CircuitBreakerPolicy.failurePercentRange),
            "a whole percentage, 1% to 100%", suffix: "%")),
        ArgumentSpec(
          "over", .duration, "D", isOptional: true,
          limits: breakerLimits("over", .durations(CircuitBreakerPolicy.windowRange), "1s to 24h"),
          defaultValue: "30s"),
        ArgumentSpec(
          "min", .count, "N", isOptional: true,
          limits: breakerLimits(
            "min", .wholeNumbers(CircuitBreakerPolicy.minimumAttemptsRange), "1 to 1000000"),
          defaultValue: "20", expectedValue: .expectedBreakerMinimum()),
        ArgumentSpec(
          "for", .duration, "D", isOptional: true,
          limits: breakerLimits(
            "for", .durations(CircuitBreakerPolicy.openDurationRange), "100ms to 24h"),
          defaultValue: "5s"),
      ],
      argumentSnippet: "${1:50}% over ${2:30s} min ${3:20} for ${4:5s}",
      summary: "stops calling while P% of recent attempts fail, then lets one probe through"),
    ClauseSpec(
      clause: .limit, keyword: .limit, scope: .policyWide,
      arguments: [
        ArgumentSpec(
          .count, "N", isOptional: true,
          limits: sheddingLimits(
            "limit", "", .wholeNumbers(ConcurrencyLimitPolicy.limitRange), "1 to 1000000")),
        ArgumentSpec("adaptive", .none, "", isOptional: true),
        ArgumentSpec(
          "queue", .count, "M", isOptional: true,
          limits: sheddingLimits(
            "limit", "queue", .wholeNumbers(ConcurrencyLimitPolicy.queueRange), "0 to 1000000"),
          defaultValue: "0", expectedValue: .expectedWholeNumber(after: "queue")),
        ArgumentSpec(
          "min", .count, "A", isOptional: true,
          limits: sheddingLimits(
            "limit", "min", .wholeNumbers(ConcurrencyLimitPolicy.adaptiveRange), "1 to 1000000"),
          defaultValue: "1"),
        ArgumentSpec(
          Keyword.max.text, .count, "B", isOptional: true,
          limits: sheddingLimits(
            "limit", "max", .wholeNumbers(ConcurrencyLimitPolicy.adaptiveRange), "1 to 1000000"),
          defaultValue: "200"),
      ],
      argumentSnippet: "${1:16} queue ${2:0}",
      summary: "at most N attempts in flight (M more wait in line), or a limit that adapts"),
    ClauseSpec(
      clause: .throttle, keyword: .throttle, scope: .policyWide,
      arguments: [
        ArgumentSpec(
          .factor, "xK",
          limits: ArgumentLimits(.decimals(1...10), "1 to 10") {
            .sheddingOutOfRange("throttle", "", "x" + $0.text, range: "1 to 10")
          }),
        ArgumentSpec(
          "over", .duration, "D", isOptional: true,
          limits: sheddingLimits(
            "throttle", "over", .durations(ThrottlePolicy.windowRange), "1s to 24h"),
          defaultValue: "2m"),
      ],
      argumentSnippet: "x${1:2} over ${2:2m}",
      summary: "refuses attempts locally while the service accepts fewer than 1 in K"),
    ClauseSpec(
      clause: .rate, keyword: .rate, scope: .policyWide,
      arguments: [
        ArgumentSpec(
          .rate, "N/s | N/m",
          limits: ArgumentLimits(.wholeNumbers(RatePolicy.countRange), "1 to 1000000") {
            .sheddingOutOfRange("rate", "", $0.text, range: "1 to 1000000")
          }),
        ArgumentSpec(
          "burst", .count, "M", isOptional: true,
          limits: sheddingLimits(
            "rate", "burst", .wholeNumbers(RatePolicy.burstRange), "1 to 1000000"),
          defaultValue: "N", expectedValue: .expectedWholeNumber(after: "burst")),
      ],
      argumentSnippet: "${1:50}/${2:s} burst ${3:100}",
      summary: "at most N attempts per second (/s) or minute (/m); an attempt waits for its token"),
  ]

  /// The clause `keyword` starts, if any.
  static func clause(startedBy keyword: Keyword) -> Clause? {
    entries.first { $0.keyword == keyword }?.clause
  }

  /// The keywords that start a clause, in canonical order, the words a misspelt clause
  /// keyword is compared with (with `retry`).
  static let clauseWords: [String] =
    [Keyword.retry.rawValue] + entries.map(\.keyword.rawValue)

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
