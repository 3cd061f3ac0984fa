/// The stable identifier of a diagnostic, such as `unknown-unit`.
///
/// Tools and tests match on these rather than on message text. The core's catalogue is
/// ``allCases``: each has a factory in `DiagnosticMessage` (syntax messages in
/// `DiagnosticMessage+Syntax.swift`, semantic ones in `DiagnosticMessage+Semantics.swift`).
/// A tool declares the identifiers of its own diagnostics (such as `retry-policy export`'s
/// `inexact-export`) beside it, outside the catalogue.
public struct DiagnosticID: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
  /// The identifier as written in documentation and editors: `unknown-unit`.
  public var rawValue: String

  /// The identifier of the core's catalogue spelt `rawValue`, or nil.
  public init?(rawValue: String) {
    guard let found = Self.allCases.first(where: { $0.rawValue == rawValue }) else { return nil }
    self = found
  }

  /// An identifier of the catalogue.
  private init(catalogued rawValue: String) {
    self.rawValue = rawValue
  }

  /// An identifier of a tool's own diagnostic, outside the catalogue.
  package init(tool rawValue: String) {
    self.rawValue = rawValue
  }

  /// The identifier: `unknown-unit`.
  public var description: String { rawValue }

  /// Decodes an identifier from its raw value, in the catalogue or not.
  public init(from decoder: any Decoder) throws {
    rawValue = try decoder.singleValueContainer().decode(String.self)
  }

  /// Encodes the raw value.
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.singleValueContainer()
    try container.encode(rawValue)
  }

  // MARK: Lexical and syntax errors

  /// A character that cannot start any token.
  public static let unexpectedCharacter = DiagnosticID(catalogued: "unexpected-character")
  /// A byte sequence that is not UTF-8.
  public static let invalidUTF8 = DiagnosticID(catalogued: "invalid-utf8")
  /// A number that is not well formed, such as `1.`.
  public static let malformedNumber = DiagnosticID(catalogued: "malformed-number")
  /// A number too large to represent.
  public static let numberTooLarge = DiagnosticID(catalogued: "number-too-large")
  /// A duration unit that does not exist, such as `5d`.
  public static let unknownUnit = DiagnosticID(catalogued: "unknown-unit")
  /// A number where a duration was expected, such as `delay 5`.
  public static let missingUnit = DiagnosticID(catalogued: "missing-unit")
  /// A word that is not a clause keyword where a clause was expected.
  public static let unknownClause = DiagnosticID(catalogued: "unknown-clause")
  /// A token that does not fit where it stands.
  public static let unexpectedToken = DiagnosticID(catalogued: "unexpected-token")
  /// `retry` not followed by a count or `forever`.
  public static let expectedCount = DiagnosticID(catalogued: "expected-count")
  /// A clause that needs a duration and has none.
  public static let expectedDuration = DiagnosticID(catalogued: "expected-duration")
  /// A clause that needs a name (error class, hook) and has none.
  public static let expectedName = DiagnosticID(catalogued: "expected-name")
  /// A clause that needs a percentage and has none.
  public static let expectedPercent = DiagnosticID(catalogued: "expected-percent")
  /// `backoff D x` without a number.
  public static let expectedFactor = DiagnosticID(catalogued: "expected-factor")
  /// `jitter` without a percentage or a kind.
  public static let expectedJitter = DiagnosticID(catalogued: "expected-jitter")
  /// `honoring` without `retry-after`.
  public static let expectedRetryAfter = DiagnosticID(catalogued: "expected-retry-after")
  /// `hedge` not followed by `N after D`.
  public static let expectedHedge = DiagnosticID(catalogued: "expected-hedge")
  /// A word of a clause before a word it must follow (`breaker 50% for 5s over 10s`).
  public static let misplacedWord = DiagnosticID(catalogued: "misplaced-word")
  /// A word of a clause given twice in it (`breaker 50% over 1s over 2s`).
  public static let repeatedWord = DiagnosticID(catalogued: "repeated-word")
  /// `policy` without a name.
  public static let expectedPolicyName = DiagnosticID(catalogued: "expected-policy-name")
  /// `policy NAME` not followed by `=` or `{`.
  public static let expectedPolicyBody = DiagnosticID(catalogued: "expected-policy-body")
  /// A block without its closing `}`.
  public static let unterminatedBlock = DiagnosticID(catalogued: "unterminated-block")
  /// A name that is not an ASCII identifier.
  public static let invalidName = DiagnosticID(catalogued: "invalid-name")
  /// Something at the top level of a file that is not `policy`.
  public static let expectedPolicy = DiagnosticID(catalogued: "expected-policy")
  /// Rule clauses on a line that does not start with `retry`.
  public static let expectedRetry = DiagnosticID(catalogued: "expected-retry")
  /// Text with no rule at all.
  public static let emptyPolicy = DiagnosticID(catalogued: "empty-policy")

  // MARK: Semantic errors

  /// A clause given twice where once is allowed.
  public static let duplicateClause = DiagnosticID(catalogued: "duplicate-clause")
  /// Two delay clauses in one rule (`delay` and `backoff`).
  public static let conflictingDelay = DiagnosticID(catalogued: "conflicting-delay")
  /// `retry forever` without `within`.
  public static let foreverWithoutWithin = DiagnosticID(catalogued: "forever-without-within")
  /// A retry count above the limit.
  public static let countTooLarge = DiagnosticID(catalogued: "count-too-large")
  /// A backoff factor below 1.
  public static let factorBelowOne = DiagnosticID(catalogued: "factor-below-one")
  /// A backoff factor above the largest allowed (1000).
  public static let factorTooLarge = DiagnosticID(catalogued: "factor-too-large")
  /// A jitter percentage outside (0, 100].
  public static let jitterOutOfRange = DiagnosticID(catalogued: "jitter-out-of-range")
  /// Jitter on a rule with no delay to vary.
  public static let jitterWithoutDelay = DiagnosticID(catalogued: "jitter-without-delay")
  /// A duration of zero where it must be positive.
  public static let zeroDuration = DiagnosticID(catalogued: "zero-duration")
  /// A duration above the longest allowed.
  public static let durationTooLong = DiagnosticID(catalogued: "duration-too-long")
  /// A budget percentage outside (0, 100].
  public static let budgetOutOfRange = DiagnosticID(catalogued: "budget-out-of-range")
  /// A hedge count outside 1 to `PolicyLimits.largestHedgeCount`.
  public static let hedgeCountOutOfRange = DiagnosticID(catalogued: "hedge-count-out-of-range")
  /// A rule clause that has no meaning under `hedge` (a delay, jitter, cap or hook).
  public static let hedgeConflict = DiagnosticID(catalogued: "hedge-conflict")
  /// A setting of `breaker` outside its range (`P`, `over`, `min` or `for`).
  public static let breakerOutOfRange = DiagnosticID(catalogued: "breaker-out-of-range")
  /// A setting of `limit` or `throttle` outside its range, or a `limit` that mixes its forms.
  public static let sheddingOutOfRange = DiagnosticID(catalogued: "shedding-out-of-range")
  /// Two policies with one name in a file.
  public static let duplicatePolicy = DiagnosticID(catalogued: "duplicate-policy")
  /// An error class outside the host's vocabulary.
  public static let unknownErrorClass = DiagnosticID(catalogued: "unknown-error-class")
  /// A hook outside the host's vocabulary.
  public static let unknownHook = DiagnosticID(catalogued: "unknown-hook")
  /// A class listed in both `on` and `except` of one rule.
  public static let classInOnAndExcept = DiagnosticID(catalogued: "class-in-on-and-except")
  /// A status code outside 100–599 in an error class list, such as `600`.
  public static let invalidStatusCode = DiagnosticID(catalogued: "invalid-status-code")
  /// A status class other than `1xx` … `5xx` in an error class list, such as `6xx`.
  public static let invalidStatusClass = DiagnosticID(catalogued: "invalid-status-class")

  // MARK: Warnings

  /// A cap below the rule's first delay.
  public static let capBelowFirstDelay = DiagnosticID(catalogued: "cap-below-first-delay")
  /// A rule that an earlier rule makes unreachable.
  public static let unreachableRule = DiagnosticID(catalogued: "unreachable-rule")
  /// A backoff factor of exactly 1 (a constant delay).
  public static let factorOfOne = DiagnosticID(catalogued: "factor-of-one")
  /// `delay 0s`, which waits no time.
  public static let zeroDelay = DiagnosticID(catalogued: "zero-delay")
  /// `max` on a rule whose delays are all zero.
  public static let capWithoutDelay = DiagnosticID(catalogued: "cap-without-delay")
  /// A per-attempt timeout no shorter than the overall deadline.
  public static let timeoutNotBelowDeadline = DiagnosticID(
    catalogued: "timeout-not-below-deadline")

  // MARK: The policy store's own (outside the language's catalogue, `allCases`)

  /// ``PolicyStore``'s own: its file cannot be read (missing, unreadable).
  ///
  /// Never reported by `check` or `compile`.
  public static let unreadableFile = DiagnosticID(tool: "unreadable-file")
  /// ``PolicyStore``: its file is larger than ``PolicyStore/maximumFileSize``.
  public static let fileTooLarge = DiagnosticID(tool: "file-too-large")
  /// ``PolicyStore`` and `retry-policy check`: the path leads to a named pipe, a socket, a
  /// device or a folder, which is not read (an error).
  public static let notRegularFile = DiagnosticID(tool: "not-a-regular-file")
  /// ``PolicyStore``: the file has no policy, so applying it would remove every policy (an
  /// error, and the policies stay as they were); `retry-policy check`: a policy file with no
  /// policy (a warning).
  public static let noPolicies = DiagnosticID(tool: "no-policies")

  // MARK: Notes

  /// Where something was first given.
  public static let firstGivenHere = DiagnosticID(catalogued: "first-given-here")
  /// Where a block opens.
  public static let blockOpensHere = DiagnosticID(catalogued: "block-opens-here")
  /// How many errors and warnings a text has beyond those shown (the first 100 of each).
  public static let diagnosticsOmitted = DiagnosticID(catalogued: "diagnostics-omitted")

  /// Every identifier of the core's catalogue, in its order.
  public static let allCases: [DiagnosticID] = [
    .unexpectedCharacter, .invalidUTF8, .malformedNumber, .numberTooLarge, .unknownUnit,
    .missingUnit, .unknownClause, .unexpectedToken, .expectedCount, .expectedDuration,
    .expectedName, .expectedPercent, .expectedFactor, .expectedJitter, .expectedRetryAfter,
    .expectedHedge, .misplacedWord, .repeatedWord, .expectedPolicyName,
    .expectedPolicyBody, .unterminatedBlock, .invalidName,
    .expectedPolicy, .expectedRetry, .emptyPolicy, .duplicateClause, .conflictingDelay,
    .foreverWithoutWithin, .countTooLarge, .factorBelowOne, .factorTooLarge, .jitterOutOfRange,
    .jitterWithoutDelay, .zeroDuration, .durationTooLong, .budgetOutOfRange, .hedgeCountOutOfRange,
    .hedgeConflict, .breakerOutOfRange, .sheddingOutOfRange, .duplicatePolicy, .unknownErrorClass,
    .unknownHook,
    .classInOnAndExcept,
    .invalidStatusCode, .invalidStatusClass, .capBelowFirstDelay, .unreachableRule, .factorOfOne,
    .zeroDelay, .capWithoutDelay, .timeoutNotBelowDeadline, .firstGivenHere, .blockOpensHere,
    .diagnosticsOmitted,
  ]
}

/// A message of the catalogue: its identifier, its severity and its text.
///
/// Messages follow the compiler's style: a lowercase phrase without a final period,
/// the thing named in quotes, and `did you mean 'x'?` where a near name exists.
package struct DiagnosticMessage: Sendable, Hashable {
  /// The identifier of the message.
  package var id: DiagnosticID
  /// The severity the message is reported with.
  package var severity: Diagnostic.Severity
  /// The text of the message, without its suggestion.
  package var text: String
  /// The replacement the message suggests for the text it points at (`did you mean 'x'?`),
  /// which becomes the diagnostic's fix-it.
  package var suggestion: String?

  /// Creates a message.
  package init(
    _ id: DiagnosticID, _ severity: Diagnostic.Severity, _ text: String,
    suggestion: String? = nil
  ) {
    self.id = id
    self.severity = severity
    self.text = text
    self.suggestion = suggestion
  }
}
