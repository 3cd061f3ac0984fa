/// The stable identifier of each message in the diagnostic catalogue.
///
/// Tools and tests match on these rather than on message text. Every case has a
/// factory in ``DiagnosticMessage`` (syntax messages in `DiagnosticMessage+Syntax.swift`,
/// semantic ones in `DiagnosticMessage+Semantics.swift`).
public enum DiagnosticID: String, Sendable, Hashable, CaseIterable, Codable {
  // MARK: Lexical and syntax errors

  /// A character that cannot start any token.
  case unexpectedCharacter = "unexpected-character"
  /// A byte sequence that is not UTF-8.
  case invalidUTF8 = "invalid-utf8"
  /// A number that is not well formed, such as `1.`.
  case malformedNumber = "malformed-number"
  /// A number too large to represent.
  case numberTooLarge = "number-too-large"
  /// A duration unit that does not exist, such as `5d`.
  case unknownUnit = "unknown-unit"
  /// A number where a duration was expected, such as `delay 5`.
  case missingUnit = "missing-unit"
  /// A word that is not a clause keyword where a clause was expected.
  case unknownClause = "unknown-clause"
  /// A token that does not fit where it stands.
  case unexpectedToken = "unexpected-token"
  /// `retry` not followed by a count or `forever`.
  case expectedCount = "expected-count"
  /// A clause that needs a duration and has none.
  case expectedDuration = "expected-duration"
  /// A clause that needs a name (error class, hook) and has none.
  case expectedName = "expected-name"
  /// A clause that needs a percentage and has none.
  case expectedPercent = "expected-percent"
  /// `backoff D x` without a number.
  case expectedFactor = "expected-factor"
  /// `jitter` without a percentage or a kind.
  case expectedJitter = "expected-jitter"
  /// `honoring` without `retry-after`.
  case expectedRetryAfter = "expected-retry-after"
  /// `hedge` not followed by `N after D`.
  case expectedHedge = "expected-hedge"
  /// `policy` without a name.
  case expectedPolicyName = "expected-policy-name"
  /// `policy NAME` not followed by `=` or `{`.
  case expectedPolicyBody = "expected-policy-body"
  /// A block without its closing `}`.
  case unterminatedBlock = "unterminated-block"
  /// A name that is not an ASCII identifier.
  case invalidName = "invalid-name"
  /// Something at the top level of a file that is not `policy`.
  case expectedPolicy = "expected-policy"
  /// Rule clauses on a line that does not start with `retry`.
  case expectedRetry = "expected-retry"
  /// Text with no rule at all.
  case emptyPolicy = "empty-policy"

  // MARK: Semantic errors

  /// A clause given twice where once is allowed.
  case duplicateClause = "duplicate-clause"
  /// Two delay clauses in one rule (`delay` and `backoff`).
  case conflictingDelay = "conflicting-delay"
  /// `retry forever` without `within`.
  case foreverWithoutWithin = "forever-without-within"
  /// A retry count above the limit.
  case countTooLarge = "count-too-large"
  /// A backoff factor below 1.
  case factorBelowOne = "factor-below-one"
  /// A backoff factor above the largest allowed (1000).
  case factorTooLarge = "factor-too-large"
  /// A jitter percentage outside (0, 100].
  case jitterOutOfRange = "jitter-out-of-range"
  /// Jitter on a rule with no delay to vary.
  case jitterWithoutDelay = "jitter-without-delay"
  /// A duration of zero where it must be positive.
  case zeroDuration = "zero-duration"
  /// A duration above the longest allowed.
  case durationTooLong = "duration-too-long"
  /// A budget percentage outside (0, 100].
  case budgetOutOfRange = "budget-out-of-range"
  /// A hedge count outside 1 to ``PolicyLimits/largestHedgeCount``.
  case hedgeCountOutOfRange = "hedge-count-out-of-range"
  /// A rule clause that has no meaning under `hedge` (a delay, jitter, cap or hook).
  case hedgeConflict = "hedge-conflict"
  /// Two policies with one name in a file.
  case duplicatePolicy = "duplicate-policy"
  /// An error class outside the host's vocabulary.
  case unknownErrorClass = "unknown-error-class"
  /// A hook outside the host's vocabulary.
  case unknownHook = "unknown-hook"
  /// A class listed in both `on` and `except` of one rule.
  case classInOnAndExcept = "class-in-on-and-except"
  /// A status code outside 100–599 in an error class list, such as `600`.
  case invalidStatusCode = "invalid-status-code"
  /// A status class other than `1xx` … `5xx` in an error class list, such as `6xx`.
  case invalidStatusClass = "invalid-status-class"

  // MARK: Warnings

  /// A cap below the rule's first delay.
  case capBelowFirstDelay = "cap-below-first-delay"
  /// A rule that an earlier rule makes unreachable.
  case unreachableRule = "unreachable-rule"
  /// A backoff factor of exactly 1 (a constant delay).
  case factorOfOne = "factor-of-one"
  /// `delay 0s`, which waits no time.
  case zeroDelay = "zero-delay"
  /// `max` on a rule whose delays are all zero.
  case capWithoutDelay = "cap-without-delay"
  /// A per-attempt timeout no shorter than the overall deadline.
  case timeoutNotBelowDeadline = "timeout-not-below-deadline"
  /// `retry-policy export`: a clause the engine cannot express exactly (an error with
  /// `--strict`). Never reported by `check` or `compile`.
  case inexactExport = "inexact-export"
  /// ``PolicyStore``: its file cannot be read (missing, unreadable). Never reported by
  /// `check` or `compile`.
  case unreadableFile = "unreadable-file"
  /// ``PolicyStore``: its file is larger than ``PolicyStore/maximumFileSize``.
  case fileTooLarge = "file-too-large"

  // MARK: Notes

  /// Where something was first given.
  case firstGivenHere = "first-given-here"
  /// Where a block opens.
  case blockOpensHere = "block-opens-here"
  /// How many errors and warnings a text has beyond those shown (the first 100 of each).
  case diagnosticsOmitted = "diagnostics-omitted"
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
  /// The text of the message.
  package var text: String

  /// Creates a message.
  package init(_ id: DiagnosticID, _ severity: Diagnostic.Severity, _ text: String) {
    self.id = id
    self.severity = severity
    self.text = text
  }
}
