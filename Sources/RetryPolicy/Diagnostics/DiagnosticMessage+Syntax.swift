// The catalogue of lexical and syntax messages: one factory per syntax `DiagnosticID`.

extension DiagnosticMessage {
  /// The longest piece of policy text quoted in a message; longer text is cut with `…`.
  static let maximumQuotedLength = 40

  /// Text quoted in a message, cut when it is long, with its invisible and direction-changing
  /// characters written `<U+202E>` so that the message shows every character and reads in
  /// order.
  static func excerpt(_ text: String) -> String {
    guard text.unicodeScalars.count > maximumQuotedLength else {
      return SourceCharacters.escaped(text)
    }
    let cut = String(String.UnicodeScalarView(text.unicodeScalars.prefix(maximumQuotedLength)))
    return SourceCharacters.escaped(cut) + "…"
  }

  /// `unexpected-character`: a character that cannot start a token, or one that cannot stand
  /// even in a comment (a direction-changing character).
  ///
  /// A character a reader cannot see is named, never shown: `unexpected character U+00A0
  /// (no-break space)`.
  package static func unexpectedCharacter(_ scalar: Unicode.Scalar, isInComment: Bool = false)
    -> DiagnosticMessage
  {
    let code = SourceCharacters.codePoint(scalar)
    let shown: String
    if let name = SourceCharacters.invisibleName(of: scalar) {
      shown = "character \(code) (\(name))"
    } else {
      shown = "character '\(scalar)' (\(code))"
    }
    let hint: String
    switch scalar {
    case ";": hint = "; separate clauses with spaces and rules with line ends"
    case "-":
      hint = "; numbers cannot be negative, and only '\(Keyword.retryAfter.text)' has a hyphen"
    case ".": hint = "; a number needs digits before its point, such as '0.5'"
    case "\r": hint = "; a line ends with LF or CR LF, never CR alone"
    case _ where SourceCharacters.changesDirection(scalar):
      hint = "; it changes the direction of the text, so the line may not read as it is"
    case _ where SourceCharacters.invisibleName(of: scalar) != nil:
      hint = "; it cannot be seen, remove it or write a space"
    default: hint = ""
    }
    let place = isInComment ? " in a comment" : ""
    return DiagnosticMessage(.unexpectedCharacter, .error, "unexpected \(shown)\(place)\(hint)")
  }

  /// `invalid-utf8`: bytes that are not UTF-8 (overlong forms and encoded surrogates
  /// included), shown as `\xC0\xAF`.
  package static func invalidUTF8(_ bytes: [UInt8] = [], isCut: Bool = false)
    -> DiagnosticMessage
  {
    let hex = bytes.map { byte in
      let digits = String(byte, radix: 16, uppercase: true)
      return "\\x" + (digits.count < 2 ? "0" : "") + digits
    }.joined()
    let shown = bytes.isEmpty ? "" : " (\(hex)\(isCut ? "…" : ""))"
    return DiagnosticMessage(
      .invalidUTF8, .error, "invalid UTF-8\(shown) in policy text; save the file as UTF-8")
  }

  /// `malformed-number`: a number such as `1.` with no digit after its point.
  package static func malformedNumber(_ text: String) -> DiagnosticMessage {
    DiagnosticMessage(
      .malformedNumber, .error,
      "malformed number '\(excerpt(text))'; write digits after the point, such as '1.5'")
  }

  /// `number-too-large`: a number too large to represent.
  package static func numberTooLarge(_ text: String) -> DiagnosticMessage {
    DiagnosticMessage(
      .numberTooLarge, .error, "number '\(excerpt(text))' is too large to represent")
  }

  /// `unknown-unit`: a duration unit other than `ms`, `s`, `m` and `h`.
  ///
  /// A suggestion keeps the duration's magnitude: `sec` suggests `s`, `2d` suggests `48h`, and
  /// a unit below milliseconds says so.
  static func unknownUnit(_ unit: String, suggestion: Literals.UnitSuggestion?)
    -> DiagnosticMessage
  {
    let text = "unknown unit '\(excerpt(unit))'"
    switch suggestion {
    case .unit(let replacement)?, .literal(let replacement)?:
      return DiagnosticMessage(.unknownUnit, .error, text, suggestion: replacement)
    case .tooSmall(let name)?:
      return DiagnosticMessage(
        .unknownUnit, .error, text + "; \(name) are not supported, the smallest unit is 'ms'")
    case nil:
      return DiagnosticMessage(.unknownUnit, .error, text + "; use 'ms', 's', 'm' or 'h'")
    }
  }

  /// `missing-unit`: a plain number where a duration is expected.
  package static func missingUnit(_ number: String) -> DiagnosticMessage {
    let shown = excerpt(number)
    return DiagnosticMessage(
      .missingUnit, .error, "expected a unit after '\(shown)'; write '\(shown)s' or '\(shown)ms'")
  }

  /// `unknown-clause`: a word that is no clause where a clause is expected.
  package static func unknownClause(_ word: String, suggestion: String?) -> DiagnosticMessage {
    let text = "unknown clause '\(excerpt(word))'"
    guard let suggestion else {
      return DiagnosticMessage(
        .unknownClause, .error,
        text
          + "; expected a clause such as '\(Keyword.on.text)', '\(Keyword.backoff.text)', '\(Keyword.jitter.text)' or '\(Keyword.max.text)'"
      )
    }
    return DiagnosticMessage(.unknownClause, .error, text, suggestion: suggestion)
  }

  /// `unexpected-token`: a token that does not fit where it stands.
  package static func unexpectedToken(_ token: String, expected: String) -> DiagnosticMessage {
    DiagnosticMessage(
      .unexpectedToken, .error, "unexpected '\(excerpt(token))'; expected \(expected)")
  }

  /// `expected-count`: `retry` without a count or `forever`.
  package static func expectedCount() -> DiagnosticMessage {
    DiagnosticMessage(
      .expectedCount, .error,
      "expected a retry count or '\(Keyword.forever.text)' after '\(Keyword.retry.text)'")
  }

  /// `expected-count`: `retry` followed by something that is not a whole number.
  package static func expectedCount(found text: String) -> DiagnosticMessage {
    DiagnosticMessage(
      .expectedCount, .error,
      "expected a retry count or '\(Keyword.forever.text)' after '\(Keyword.retry.text)', found '\(excerpt(text))'; "
        + "write a whole number such as 'retry 3'")
  }

  /// `expected-duration`: a clause that needs a duration and has none.
  package static func expectedDuration(after keyword: String) -> DiagnosticMessage {
    DiagnosticMessage(
      .expectedDuration, .error, "expected a duration after '\(keyword)', such as '500ms' or '2s'")
  }

  /// `expected-name`: a clause that needs a name and has none.
  package static func expectedName(_ kind: String, after keyword: String, example: String)
    -> DiagnosticMessage
  {
    DiagnosticMessage(
      .expectedName, .error, "expected \(kind) after '\(keyword)', such as '\(example)'")
  }

  /// `expected-name`: a keyword where a name is expected.
  package static func keywordIsNotAName(_ word: String, after keyword: String) -> DiagnosticMessage
  {
    DiagnosticMessage(
      .expectedName, .error,
      "expected a name after '\(keyword)'; '\(word)' is a keyword and cannot be a name")
  }

  /// `expected-percent`: a clause that needs a percentage and has none.
  package static func expectedPercent(after keyword: String) -> DiagnosticMessage {
    DiagnosticMessage(
      .expectedPercent, .error, "expected a percentage after '\(keyword)', such as '10%'")
  }

  /// `expected-percent`: a number without its `%`.
  package static func missingPercentSign(_ number: String) -> DiagnosticMessage {
    let shown = excerpt(number)
    return DiagnosticMessage(
      .expectedPercent, .error, "expected '%' after '\(shown)'; write '\(shown)%'")
  }

  /// `expected-factor`: `x` without a number.
  package static func expectedFactor() -> DiagnosticMessage {
    DiagnosticMessage(.expectedFactor, .error, "expected a number after 'x', such as 'x1.5'")
  }

  /// `expected-factor`: `+` without a duration.
  package static func expectedIncrement() -> DiagnosticMessage {
    DiagnosticMessage(.expectedFactor, .error, "expected a duration after '+', such as '+2s'")
  }

  /// `expected-jitter`: `jitter` without a percentage or a kind.
  package static func expectedJitter(suggestion: String?) -> DiagnosticMessage {
    let text =
      "expected a percentage, '\(Keyword.full.text)', '\(Keyword.equal.text)' or '\(Keyword.decorrelated.text)' after '\(Keyword.jitter.text)'"
    return DiagnosticMessage(.expectedJitter, .error, text, suggestion: suggestion)
  }

  /// `expected-retry-after`: `honoring` without `retry-after`.
  package static func expectedRetryAfter() -> DiagnosticMessage {
    DiagnosticMessage(
      .expectedRetryAfter, .error,
      "expected '\(Keyword.retryAfter.text)' after '\(Keyword.honoring.text)'")
  }

  /// `expected-hedge`: `hedge` not followed by a whole number, `after` and a duration.
  package static func expectedHedge() -> DiagnosticMessage {
    DiagnosticMessage(
      .expectedHedge, .error,
      "expected a count of extra attempts and '\(Keyword.after.text)' a duration, such as 'hedge 2 after 100ms'"
    )
  }

  /// `expected-count`: `min` in a `breaker` clause without a whole number.
  package static func expectedBreakerMinimum() -> DiagnosticMessage {
    DiagnosticMessage(
      .expectedCount, .error,
      "expected a whole number of attempts after 'min', such as '\(Keyword.breaker.text) 50% min 20'"
    )
  }

  /// `expected-count`: `rate` without a whole number per second or per minute.
  package static func expectedRate(after word: String) -> DiagnosticMessage {
    DiagnosticMessage(
      .expectedCount, .error,
      "expected a whole number of attempts per second or per minute after '\(word)', such as '50/s' or '30/m'"
    )
  }

  /// `missing-unit`: a rate's count without its period.
  package static func missingRatePeriod(_ number: String) -> DiagnosticMessage {
    let shown = excerpt(number)
    return DiagnosticMessage(
      .missingUnit, .error,
      "expected '/s' or '/m' after '\(shown)'; write '\(shown)/s' (per second) or '\(shown)/m' (per minute)"
    )
  }

  /// `unknown-unit`: a rate's period that is neither `s` nor `m`.
  package static func unknownRatePeriod(_ text: String) -> DiagnosticMessage {
    DiagnosticMessage(
      .unknownUnit, .error,
      "unknown rate period '\(excerpt(text))'; a rate is per second ('/s') or per minute ('/m')")
  }

  /// `expected-count`: a word of a clause without the whole number it takes.
  package static func expectedWholeNumber(after word: String) -> DiagnosticMessage {
    DiagnosticMessage(.expectedCount, .error, "expected a whole number after '\(word)'")
  }

  /// `unexpected-token`: a clause without a word it needs, where the table gives no message
  /// of its own.
  package static func expectedWord(_ word: String, in clause: String) -> DiagnosticMessage {
    DiagnosticMessage(.unexpectedToken, .error, "expected '\(word)' in '\(clause)'")
  }

  /// `misplaced-word`: a word of a clause written after one it must come before.
  package static func misplacedWord(_ word: String, before later: String, in clause: String)
    -> DiagnosticMessage
  {
    DiagnosticMessage(
      .misplacedWord, .error, "'\(word)' must come before '\(later)' in '\(clause)'")
  }

  /// `repeated-word`: a word of a clause given twice in it.
  package static func repeatedWord(_ word: String, in clause: String) -> DiagnosticMessage {
    DiagnosticMessage(
      .repeatedWord, .error, "'\(word)' is given more than once in '\(clause)'")
  }

  /// `expected-policy-name`: `policy` without a name.
  package static func expectedPolicyName(keyword: String? = nil) -> DiagnosticMessage {
    let reason =
      keyword.map { "; '\($0)' is a keyword and cannot be a name" } ?? ", such as 'payments'"
    return DiagnosticMessage(
      .expectedPolicyName, .error, "expected a policy name after '\(Keyword.policy.text)'\(reason)")
  }

  /// `expected-policy-body`: `policy NAME` not followed by `=` or `{`.
  package static func expectedPolicyBody(_ name: String) -> DiagnosticMessage {
    DiagnosticMessage(
      .expectedPolicyBody, .error,
      "expected '=' or '{' after 'policy \(excerpt(name))'; write 'policy \(excerpt(name)) = retry 3'"
    )
  }

  /// `expected-policy-body`: `policy NAME =` with no rule after it.
  package static func expectedPolicyLine(_ name: String) -> DiagnosticMessage {
    DiagnosticMessage(
      .expectedPolicyBody, .error,
      "expected a rule after 'policy \(excerpt(name)) =', such as 'retry 3 backoff 1s'")
  }

  /// `unterminated-block`: a block without its `}`.
  package static func unterminatedBlock(_ name: String) -> DiagnosticMessage {
    let policy = name.isEmpty ? "the policy" : "policy '\(excerpt(name))'"
    return DiagnosticMessage(
      .unterminatedBlock, .error, "expected '}' to end \(policy); add '}' on a line of its own")
  }

  /// `block-opens-here`: the note at a block's `{`.
  package static func blockOpensHere(_ name: String) -> DiagnosticMessage {
    let policy = name.isEmpty ? "the policy" : "policy '\(excerpt(name))'"
    return DiagnosticMessage(.blockOpensHere, .note, "\(policy) opens here")
  }

  /// `invalid-name`: a name that is not an ASCII identifier.
  package static func invalidName(_ name: String) -> DiagnosticMessage {
    let hint: String
    let replaced = name.replacingHyphens()
    if replaced != name, replaced.unicodeScalars.allSatisfy(\.isASCII) {
      hint = ", such as '\(excerpt(replaced))'"
    } else {
      hint = ""
    }
    return DiagnosticMessage(
      .invalidName, .error,
      "invalid name '\(excerpt(name))'; names use ASCII letters, digits and '_'\(hint)")
  }

  /// `expected-policy`: something at the top level of a file that is not `policy`.
  package static func expectedPolicy(found text: String, suggestion: String?) -> DiagnosticMessage {
    if suggestion != nil {
      return DiagnosticMessage(
        .expectedPolicy, .error,
        "expected '\(Keyword.policy.text)' at the top level of the file, found '\(excerpt(text))'",
        suggestion: suggestion)
    }
    return DiagnosticMessage(
      .expectedPolicy, .error,
      "expected '\(Keyword.policy.text)' at the top level of the file, found '\(excerpt(text))'; "
        + "write 'policy NAME = retry …' or 'policy NAME { … }'")
  }

  /// `expected-retry`: rule clauses on a line that does not start with `retry`.
  package static func expectedRetry(before clause: String) -> DiagnosticMessage {
    DiagnosticMessage(
      .expectedRetry, .error,
      "expected '\(Keyword.retry.text)' before '\(clause)'; a line with rule clauses starts with 'retry N'"
    )
  }

  /// `empty-policy`: text with no rule at all.
  package static func emptyPolicy() -> DiagnosticMessage {
    DiagnosticMessage(
      .emptyPolicy, .error, "policy has no rule; write one such as 'retry 3 backoff 1s'")
  }
}

extension String {
  fileprivate func replacingHyphens() -> String {
    String(String.UnicodeScalarView(unicodeScalars.map { $0 == "-" ? "_" : $0 }))
  }
}
