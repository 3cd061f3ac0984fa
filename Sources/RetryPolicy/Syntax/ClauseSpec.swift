// The model of one clause's entry in the clause table: its arguments' shapes and limits, and
// what the table says of the clause. The table itself is `ClauseTable.swift`.

/// The shape of one argument of a clause: what the parser reads, the checker checks and the
/// printer prints.
package enum ArgumentShape: Sendable, Hashable {
  /// Nothing: a word alone, such as `retry-after` of `honoring retry-after`.
  case none
  /// A whole number: `20`.
  case count
  /// A duration: `5s`.
  case duration
  /// Durations separated by commas: `1s, 5s`.
  case durations
  /// A percentage: `10%`.
  case percent
  /// How a backoff grows: `xF` or `+I`.
  case growth
  /// A factor alone: `xK` of `throttle`.
  case factor
  /// Error classes separated by commas: `serverError, 503`.
  case errorClasses
  /// A hook name: `refreshToken`.
  case hook
  /// A percentage or a kind of jitter: `10%`, `full`, `equal`, `decorrelated`.
  case jitter
  /// A whole number per second or per minute: `50/s`, `30/m` (three tokens: the number, `/`
  /// and the period).
  case rate
}

/// What values an argument takes, and what the checker says of one outside them.
package struct ArgumentLimits: Sendable {
  /// The values an argument takes.
  package enum Bounds: Sendable {
    /// Any value the shape reads (names, words).
    case any
    /// A duration up to the longest the language takes (`duration-too-long`); unless
    /// `allowsZero`, above zero (`zero-duration`).
    case duration(allowsZero: Bool)
    /// A duration in this range.
    case durations(ClosedRange<Duration>)
    /// A whole number in this range (a percentage or a count).
    case wholeNumbers(ClosedRange<Int>)
    /// A percentage above 0 and at most 100, compared as written.
    case percentAboveZero
    /// A backoff factor, 1 to 1000, compared as written.
    case factor
    /// A decimal number in this range, compared as written (`throttle`'s factor).
    case decimals(ClosedRange<Int>)
  }

  /// The values it takes.
  package var bounds: Bounds
  /// The values in words, as the diagnostic, `Grammar/README.md` and hover say them:
  /// `1s to 24h`.
  package var text: String
  /// The message for a value outside `bounds`, given the argument as written; nil where the
  /// bounds have messages of their own (durations and factors).
  package var outOfRange: (@Sendable (ArgumentSyntax) -> DiagnosticMessage)?

  package init(
    _ bounds: Bounds, _ text: String,
    outOfRange: (@Sendable (ArgumentSyntax) -> DiagnosticMessage)? = nil
  ) {
    self.bounds = bounds
    self.text = text
    self.outOfRange = outOfRange
  }

  /// No limit beyond the shape.
  package static let none = ArgumentLimits(.any, "")
}

/// One argument of a clause: positional (`D` of `delay D`) or after a word of its own (`over D`
/// of `breaker`).
///
/// A class: the parser and the checker walk a clause's arguments on every clause they read,
/// and a reference is copied with one retain where the value's strings, messages and closure
/// would each take their own.
package final class ArgumentSpec: Sendable {
  /// The word before the argument (`over`, `after`, `retry-after`); nil for a positional one.
  package let word: String?
  /// The word as a keyword, when it is one (`after`); else it is a word of this clause only.
  package let wordKeyword: Keyword?
  /// The shape of its value.
  package let shape: ArgumentShape
  /// Whether it may be left out.
  package let isOptional: Bool
  /// The values it takes.
  package let limits: ArgumentLimits
  /// Its name in the clause's form, such as `D`, `N` or `P%`.
  package let placeholder: String
  /// Its value when left out, in policy text (`30s`); empty when it has none.
  package let defaultValue: String
  /// The message when the value is missing, instead of the shape's own; nil for the shape's.
  package let expectedValue: DiagnosticMessage?
  /// The message when its word is missing where it is required.
  package let expectedWord: DiagnosticMessage?

  /// A positional argument.
  package convenience init(
    _ shape: ArgumentShape, _ placeholder: String, isOptional: Bool = false,
    limits: ArgumentLimits = .none, defaultValue: String = "",
    expectedValue: DiagnosticMessage? = nil
  ) {
    self.init(
      nil, shape, placeholder, isOptional: isOptional, limits: limits,
      defaultValue: defaultValue, expectedValue: expectedValue)
  }

  /// An argument after a word of its own.
  package init(
    _ word: String?, _ shape: ArgumentShape, _ placeholder: String,
    isOptional: Bool = false, limits: ArgumentLimits = .none, defaultValue: String = "",
    expectedValue: DiagnosticMessage? = nil, expectedWord: DiagnosticMessage? = nil
  ) {
    self.word = word
    self.wordKeyword = word.flatMap(Keyword.init(rawValue:))
    self.shape = shape
    self.isOptional = isOptional
    self.limits = limits
    self.placeholder = placeholder
    self.defaultValue = defaultValue
    self.expectedValue = expectedValue
    self.expectedWord = expectedWord
  }

  /// Whether its values have limits to check: names, hooks and words alone have none.
  package var hasLimits: Bool {
    switch shape {
    case .none, .errorClasses, .hook: false
    case .count, .duration, .durations, .percent, .growth, .factor, .jitter, .rate: true
    }
  }

  /// The argument in the clause's form: `D`, `over D`, `[min N]`.
  package var form: String {
    let text = [word, placeholder.isEmpty ? nil : placeholder].compactMap { $0 }
      .joined(separator: " ")
    return isOptional ? "[\(text)]" : text
  }
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

  /// The clause.
  package var clause: Clause
  /// The keyword that starts it.
  package var keyword: Keyword
  /// Where it belongs.
  package var scope: Scope
  /// Its arguments, in the order they are written: the positional ones first, then those
  /// after words of their own, in canonical order (a word out of this order is an error).
  package var arguments: [ArgumentSpec]
  /// The completion snippet of its arguments, in the language server's snippet syntax
  /// (`${1:1s}`); empty for a clause without arguments.
  package var argumentSnippet: String
  /// One line that says what it does.
  package var summary: String

  /// The keyword and the required words before any value: `backoff`, `honoring retry-after`.
  package var text: String {
    var text = keyword.text
    for argument in arguments where argument.shape == .none && !argument.isOptional {
      if let word = argument.word { text += " " + word }
    }
    return text
  }

  /// The clause as the grammar writes it: `breaker P% [over D] [min N] [for D]`.
  package var form: String {
    ([keyword.text] + arguments.map(\.form).filter { !$0.isEmpty }).joined(separator: " ")
  }

  /// The limits in words, as Grammar/README.md writes them, for documentation and hover:
  /// `P a whole percentage, 1% … 100%; over 1s … 24h (30s); min 1 … 1000000 (20); …`.
  package var limits: String {
    arguments.filter { !$0.limits.text.isEmpty }.map { argument in
      let name =
        argument.word
        ?? String(
          argument.placeholder.prefix { $0 != " " && $0 != "%" && $0 != "," && $0 != "/" })
      let range = argument.limits.text.replacing(" to ", with: " … ")
      let value = argument.defaultValue.isEmpty ? "" : " (\(argument.defaultValue))"
      return "\(name) \(range)\(value)"
    }.joined(separator: "; ")
  }

  /// The completion snippet of the whole clause: `backoff ${1:1s}`.
  package var snippet: String { argumentSnippet.isEmpty ? text : text + " " + argumentSnippet }
}
