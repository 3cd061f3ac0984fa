// The checks of `breaker P% [over D] [min N] [for D]` (contract §12).

extension PolicyChecker {
  /// Checks a `breaker` clause: each setting in its range; the first clause of a policy counts.
  mutating func checkBreaker(_ syntax: BreakerSyntax, at place: ClausePlace) {
    var isValid = true
    var percent = 0
    if let value = syntax.percent.value {
      if let whole = Int(exactly: value), CircuitBreakerPolicy.failurePercentRange.contains(whole) {
        percent = whole
      } else {
        report(
          .breakerOutOfRange(
            "", syntax.percent.text + "%", range: "a whole percentage, 1% to 100%"),
          at: syntax.percent.range)
        isValid = false
      }
    } else {
      isIncomplete = true
      isValid = false
    }
    let window = checkBreakerDuration(
      syntax.window, .over, in: CircuitBreakerPolicy.windowRange, range: "1s to 24h",
      default: CircuitBreakerPolicy.defaultWindow)
    let open = checkBreakerDuration(
      syntax.openDuration, .for, in: CircuitBreakerPolicy.openDurationRange,
      range: "100ms to 24h", default: CircuitBreakerPolicy.defaultOpenDuration)
    var minimum = CircuitBreakerPolicy.defaultMinimumAttempts
    if let number = syntax.minimum {
      if let value = number.value {
        if let whole = Int(exactly: value),
          CircuitBreakerPolicy.minimumAttemptsRange.contains(whole)
        {
          minimum = whole
        } else {
          report(
            .breakerOutOfRange(BreakerWord.min.text, number.text, range: "1 to 1000000"),
            at: number.range)
          isValid = false
        }
      } else {
        isIncomplete = true
        isValid = false
      }
    }
    if isFirst(.breaker, at: place.keyword, after: breakerClause) {
      breakerClause = place.keyword
      if isValid, let window, let open {
        breaker = CircuitBreakerPolicy(
          failurePercent: percent, window: window, minimumAttempts: minimum, openDuration: open)
      }
    }
  }

  /// Checks `over D` or `for D` of a `breaker` clause: the default when absent, nil (and a
  /// diagnostic) when out of `limits`.
  private mutating func checkBreakerDuration(
    _ literal: DurationLiteralSyntax?, _ word: BreakerWord, in limits: ClosedRange<Duration>,
    range: String, default defaultValue: Duration
  ) -> Duration? {
    guard let literal else { return defaultValue }
    guard let duration = literal.duration else {
      isIncomplete = true
      return nil
    }
    guard limits.contains(duration) else {
      report(.breakerOutOfRange(word.text, literal.text, range: range), at: literal.range)
      return nil
    }
    return duration
  }
}
