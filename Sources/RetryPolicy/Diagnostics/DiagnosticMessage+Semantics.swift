// The semantic part of the diagnostic catalogue: what the checker reports about a policy that
// parses but does not make sense, the warnings about what likely is not meant, and the notes.
// One factory a message; each names its `DiagnosticID`.

extension DiagnosticMessage {
  // MARK: Errors

  /// `duplicate-clause`: a clause given twice where once is allowed.
  ///
  /// `isPolicyWide` says whether the clause belongs to the whole policy (`within`, `timeout`,
  /// `budget`) rather than to one rule.
  static func duplicateClause(_ keyword: String, isPolicyWide: Bool) -> DiagnosticMessage {
    let scope = isPolicyWide ? "a policy" : "a rule"
    return DiagnosticMessage(
      .duplicateClause, .error, "'\(keyword)' is given more than once; \(scope) takes it once")
  }

  /// `conflicting-delay`: a second delay clause in one rule.
  static func conflictingDelay(_ keyword: String, with first: String) -> DiagnosticMessage {
    DiagnosticMessage(
      .conflictingDelay, .error,
      "'\(keyword)' conflicts with '\(first)'; a rule takes only one of '\(Keyword.immediately.text)', '\(Keyword.delay.text)', "
        + "'\(Keyword.backoff.text)' and '\(Keyword.delays.text)'")
  }

  /// `forever-without-within`: `retry forever` in a policy with no deadline.
  static let foreverWithoutWithin = DiagnosticMessage(
    .foreverWithoutWithin, .error,
    "'retry forever' needs an overall deadline; add a deadline such as 'within 5m'")

  /// `count-too-large`: a retry count above ``PolicyLimits/largestCount``.
  static func countTooLarge(_ count: Int) -> DiagnosticMessage {
    DiagnosticMessage(
      .countTooLarge, .error,
      "retry count \(count) is too large; the most is \(PolicyLimits.largestCount); "
        + "use 'retry forever' with '\(Keyword.within.text)'")
  }

  /// `factor-below-one`: a backoff factor that would shrink the delay.
  static func factorBelowOne(_ text: String) -> DiagnosticMessage {
    DiagnosticMessage(
      .factorBelowOne, .error,
      "backoff factor \(excerpt(text)) is below 1; a factor must be 1 or more")
  }

  /// `factor-too-large`: a backoff factor above ``PolicyLimits/largestFactor``.
  static func factorTooLarge(_ text: String) -> DiagnosticMessage {
    DiagnosticMessage(
      .factorTooLarge, .error,
      "backoff factor \(excerpt(text)) is too large; the most is \(PolicyLimits.largestFactor)"
    )
  }

  /// `jitter-out-of-range`: a jitter percentage outside (0, 100].
  static func jitterOutOfRange(_ text: String) -> DiagnosticMessage {
    DiagnosticMessage(
      .jitterOutOfRange, .error,
      "jitter \(excerpt(text))% is out of range; it must be above 0% and at most 100%")
  }

  /// `jitter-without-delay`: jitter on a rule that retries immediately.
  static let jitterWithoutDelay = DiagnosticMessage(
    .jitterWithoutDelay, .error,
    "'\(Keyword.jitter.text)' has no delay to vary; add a delay such as 'backoff 1s'")

  /// `zero-duration`: a zero duration where the clause needs a positive one.
  static func zeroDuration(_ keyword: String) -> DiagnosticMessage {
    DiagnosticMessage(.zeroDuration, .error, "'\(keyword)' needs a duration above zero")
  }

  /// `duration-too-long`: a duration above ``PolicyLimits/longestDuration``.
  static func durationTooLong(_ text: String) -> DiagnosticMessage {
    DiagnosticMessage(
      .durationTooLong, .error,
      "duration '\(excerpt(text))' is too long; the most is '\(PolicyLimits.longestDuration.policyText)'"
    )
  }

  /// `hedge-count-out-of-range`: a hedge count outside 1 to the largest.
  static func hedgeCountOutOfRange(_ count: Int) -> DiagnosticMessage {
    DiagnosticMessage(
      .hedgeCountOutOfRange, .error,
      "hedge count \(count) is out of range; it must be 1 to \(PolicyLimits.largestHedgeCount)")
  }

  /// `hedge-conflict`: a rule clause that has no meaning under `hedge`.
  static func hedgeConflict(_ keyword: String) -> DiagnosticMessage {
    DiagnosticMessage(
      .hedgeConflict, .error,
      "'\(keyword)' does not combine with '\(Keyword.hedge.text)': hedged attempts start every '\(Keyword.after.text)' delay, "
        + "or at once after a failure a rule retries; remove '\(keyword)' or '\(Keyword.hedge.text)'"
    )
  }

  /// `budget-out-of-range`: a budget percentage outside (0, 100].
  static func budgetOutOfRange(_ text: String) -> DiagnosticMessage {
    DiagnosticMessage(
      .budgetOutOfRange, .error,
      "budget \(excerpt(text))% is out of range; it must be above 0% and at most 100%")
  }

  /// `breaker-out-of-range`: a setting of `breaker` outside its range; `setting` is empty for
  /// the percentage, else `over`, `min` or `for`, and `written` the value as written.
  static func breakerOutOfRange(_ setting: String, _ written: String, range: String)
    -> DiagnosticMessage
  {
    let thing =
      setting.isEmpty ? "breaker \(excerpt(written))" : "breaker '\(setting)' \(excerpt(written))"
    return DiagnosticMessage(
      .breakerOutOfRange, .error, "\(thing) is out of range; it must be \(range)")
  }

  /// `shedding-out-of-range`: a setting of `limit` or `throttle` outside its range; `setting`
  /// is empty for the clause's first value, and `written` the value as written.
  static func sheddingOutOfRange(
    _ clause: String, _ setting: String, _ written: String, range: String
  ) -> DiagnosticMessage {
    let thing =
      setting.isEmpty
      ? "\(clause) \(excerpt(written))" : "\(clause) '\(setting)' \(excerpt(written))"
    return DiagnosticMessage(
      .sheddingOutOfRange, .error, "\(thing) is out of range; it must be \(range)")
  }

  /// `shedding-out-of-range`: a `limit` clause that is neither `limit N [queue M]` nor
  /// `limit adaptive [min A] [max B]`, or whose `min` is above its `max`.
  static func limitForm(_ problem: String) -> DiagnosticMessage {
    DiagnosticMessage(.sheddingOutOfRange, .error, problem)
  }

  /// `duplicate-policy`: a second policy of the same name in a file.
  static func duplicatePolicy(_ name: String) -> DiagnosticMessage {
    DiagnosticMessage(
      .duplicatePolicy, .error,
      "policy '\(excerpt(name))' is declared more than once; names are unique")
  }

  /// `unreadable-file`: a store's policy file cannot be read.
  static func unreadableFile(_ reason: String) -> DiagnosticMessage {
    DiagnosticMessage(
      .unreadableFile, .error,
      "cannot read the policy file: \(reason); the policies stay as they were")
  }

  /// `file-too-large`: a store's policy file is larger than the store reads.
  static func fileTooLarge(limitMiB: Int) -> DiagnosticMessage {
    DiagnosticMessage(
      .fileTooLarge, .error,
      "the policy file is larger than \(limitMiB) MiB; the policies stay as they were")
  }

  /// `not-a-regular-file`: a policy file that is a named pipe, a socket, a device or a folder
  /// (`kind` says which: `a named pipe`); the store's message says that nothing changed.
  package static func notRegularFile(_ kind: String, keepsPolicies: Bool) -> DiagnosticMessage {
    DiagnosticMessage(
      .notRegularFile, .error,
      "the policy file is \(kind), not a regular file"
        + (keepsPolicies ? "; the policies stay as they were" : ""))
  }

  /// `no-policies`: a store's file with no policy, which would remove every policy.
  static let noPoliciesInStore = DiagnosticMessage(
    .noPolicies, .error,
    "the policy file has no policy; a file that would remove every policy is not applied, "
      + "and the policies stay as they were")

  /// `no-policies`: `retry-policy check` of a policy file with no policy.
  package static let noPoliciesInFile = DiagnosticMessage(
    .noPolicies, .warning, "the file has no policy")

  /// `unknown-error-class`: an error class outside the host's vocabulary.
  static func unknownErrorClass(_ name: String, suggestion: String?) -> DiagnosticMessage {
    DiagnosticMessage(
      .unknownErrorClass, .error,
      "unknown error class '\(excerpt(name))'", suggestion: suggestion)
  }

  /// `invalid-status-code`: a status code outside 100–599 in `on` or `except`.
  static func invalidStatusCode(_ text: String, suggestion: String?) -> DiagnosticMessage {
    DiagnosticMessage(
      .invalidStatusCode, .error,
      "'\(excerpt(text))' is not an HTTP status code (100 to 599)", suggestion: suggestion)
  }

  /// `invalid-status-class`: a status class other than `1xx` … `5xx` in `on` or `except`.
  static func invalidStatusClass(_ text: String, suggestion: String?) -> DiagnosticMessage {
    DiagnosticMessage(
      .invalidStatusClass, .error,
      "'\(excerpt(text))' is not an HTTP status class (1xx to 5xx)", suggestion: suggestion)
  }

  /// `unknown-hook`: a hook outside the host's vocabulary.
  static func unknownHook(_ name: String, suggestion: String?) -> DiagnosticMessage {
    DiagnosticMessage(
      .unknownHook, .error, "unknown hook '\(excerpt(name))'", suggestion: suggestion)
  }

  /// `class-in-on-and-except`: one class both retried and excluded by a rule.
  static func classInOnAndExcept(_ name: String) -> DiagnosticMessage {
    DiagnosticMessage(
      .classInOnAndExcept, .error,
      "error class '\(excerpt(name))' is in both '\(Keyword.on.text)' and '\(Keyword.except.text)'")
  }

  /// `empty-policy`: a policy with no `retry` rule.
  ///
  /// Named apart from the parser's own factories: the id is shared with the syntax stage.
  static func policyWithoutRule(named name: String?) -> DiagnosticMessage {
    let subject = name.map { "policy '\(excerpt($0))'" } ?? "the policy"
    return DiagnosticMessage(
      .emptyPolicy, .error, "\(subject) has no rule; add one such as 'retry 3 backoff 1s'")
  }

  // MARK: Warnings

  /// `cap-below-first-delay`: a `max` below the rule's first delay, so every delay is the cap.
  static func capBelowFirstDelay(cap: String, firstDelay: String) -> DiagnosticMessage {
    DiagnosticMessage(
      .capBelowFirstDelay, .warning,
      "'max \(excerpt(cap))' is below the first delay \(excerpt(firstDelay)); every delay will be \(excerpt(cap))"
    )
  }

  /// `unreachable-rule`: a rule without `on` after one that takes every error.
  static func unreachableRule(catchAllLine: Int) -> DiagnosticMessage {
    DiagnosticMessage(
      .unreachableRule, .warning,
      "this rule is never used: the rule on line \(catchAllLine) takes every error")
  }

  /// `unreachable-rule`: a rule after one that names every class it names.
  static func hiddenRule(namingLine: Int) -> DiagnosticMessage {
    DiagnosticMessage(
      .unreachableRule, .warning,
      "this rule is never used: the rule on line \(namingLine) takes every error it names")
  }

  /// `factor-of-one`: `backoff D x1`, a constant delay.
  static func factorOfOne(initial: String) -> DiagnosticMessage {
    DiagnosticMessage(
      .factorOfOne, .warning,
      "a factor of 1 keeps the delay constant; write 'delay \(excerpt(initial))'")
  }

  /// `zero-delay`: `delay 0s`, which waits no time.
  static func zeroDelay(_ text: String) -> DiagnosticMessage {
    DiagnosticMessage(
      .zeroDelay, .warning,
      "'delay \(excerpt(text))' waits no time; write '\(Keyword.immediately.text)'")
  }

  /// `cap-without-delay`: `max` on a rule whose delays are all zero.
  static let capWithoutDelay = DiagnosticMessage(
    .capWithoutDelay, .warning,
    "'\(Keyword.max.text)' has no delay to cap; every delay of this rule is zero")

  /// `timeout-not-below-deadline`: a per-attempt timeout no shorter than the deadline.
  static func timeoutNotBelowDeadline(timeout: String, deadline: String) -> DiagnosticMessage {
    DiagnosticMessage(
      .timeoutNotBelowDeadline, .warning,
      "'timeout \(excerpt(timeout))' is not shorter than 'within \(excerpt(deadline))'; the deadline ends "
        + "attempts first")
  }

  // MARK: Notes

  /// `first-given-here`: where a clause, class or policy name was first given.
  static func firstGivenHere(_ what: String) -> DiagnosticMessage {
    DiagnosticMessage(.firstGivenHere, .note, "'\(excerpt(what))' first given here")
  }

  /// `diagnostics-omitted`: the note after the first 100 errors and warnings of a text.
  static func diagnosticsOmitted(errors: Int, warnings: Int) -> DiagnosticMessage {
    func counted(_ count: Int, _ noun: String) -> String {
      "\(count) more \(noun)\(count == 1 ? "" : "s")"
    }
    var parts: [String] = []
    if errors > 0 { parts.append(counted(errors, "error")) }
    if warnings > 0 { parts.append(counted(warnings, "warning")) }
    return DiagnosticMessage(
      .diagnosticsOmitted, .note,
      parts.joined(separator: " and ")
        + " not shown, the next one here; a report shows the first \(Diagnostic.shownLimit) "
        + "errors and \(Diagnostic.shownLimit) warnings")
  }
}
