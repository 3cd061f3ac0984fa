// The limits of a clause's arguments, checked from its entry in the clause table: each
// argument's bounds and the message for a value outside them are the entry's. The entry's
// arguments are named by their index and read in place (see `Clause.argumentSpec(_:)`).

extension PolicyChecker {
  /// Checks every argument of `clause` against the limits of its entry; false when one is
  /// outside them, or could not be read (already reported).
  mutating func checkLimits(of clause: ClauseSyntax) -> Bool {
    var isInLimits = true
    for index in 0..<clause.clause.argumentCount where clause.clause.argumentSpec(index).hasLimits {
      guard let value = clause.argument(index) else { continue }
      if !checkLimits(value, index, of: clause.clause) { isInLimits = false }
    }
    return isInLimits
  }

  /// Checks one argument's value against the limits of the argument at `index` of `clause`'s
  /// entry; the clause's keyword is what `zero-duration` names.
  private mutating func checkLimits(_ value: ArgumentSyntax, _ index: Int, of clause: Clause)
    -> Bool
  {
    switch value {
    case .word, .names, .name:
      return true
    case .duration(let literal):
      return checkDuration(literal, index, of: clause, argument: value)
    case .durations(let literals):
      var isInLimits = true
      for literal in literals
      where !checkDuration(literal, index, of: clause, argument: .duration(literal)) {
        isInLimits = false
      }
      return isInLimits
    case .increment(let literal):
      return checkDuration(literal, of: clause.keyword, mustBePositive: false) != nil
    case .factor(let number):
      guard case .decimals = clause.argumentSpec(index).limits.bounds else {
        return checkFactor(number)
      }
      return checkNumber(number, index, of: clause, argument: value)
    case .count(let number), .percent(let number), .rate(let number, _):
      return checkNumber(number, index, of: clause, argument: value)
    case .jitter(let syntax):
      guard case .percent(let number) = syntax.kind else { return true }
      return checkNumber(number, index, of: clause, argument: .percent(number))
    }
  }

  /// Checks a duration against the limits of the argument at `index` of `clause`'s entry.
  private mutating func checkDuration(
    _ literal: DurationLiteralSyntax, _ index: Int, of clause: Clause,
    argument: @autoclosure () -> ArgumentSyntax
  ) -> Bool {
    switch clause.argumentSpec(index).limits.bounds {
    case .duration(let allowsZero):
      return checkDuration(literal, of: clause.keyword, mustBePositive: !allowsZero) != nil
    case .durations(let range):
      guard let duration = literal.duration else {
        isIncomplete = true
        return false
      }
      guard range.contains(duration) else {
        reportOutOfRange(argument(), clause.argumentSpec(index).limits, at: literal.range)
        return false
      }
      return true
    case .any, .wholeNumbers, .percentAboveZero, .factor, .decimals:
      return checkDuration(literal, of: clause.keyword, mustBePositive: false) != nil
    }
  }

  /// Checks a count or a percentage against the limits of the argument at `index` of
  /// `clause`'s entry, as written.
  private mutating func checkNumber(
    _ number: NumberLiteralSyntax, _ index: Int, of clause: Clause,
    argument: @autoclosure () -> ArgumentSyntax
  ) -> Bool {
    guard let value = number.value else {
      isIncomplete = true
      return false
    }
    let isInLimits: Bool
    switch clause.argumentSpec(index).limits.bounds {
    case .any, .duration, .durations: isInLimits = true
    case .wholeNumbers(let range): isInLimits = Int(exactly: value).map(range.contains) ?? false
    case .percentAboveZero: isInLimits = Self.isPercentInRange(number.digits, value: value)
    case .factor: return checkFactor(number)
    case .decimals(let range):
      isInLimits =
        value.isFinite
        && Literals.order(of: number.digits, value: value, comparedWith: range.lowerBound) != .below
        && Literals.order(of: number.digits, value: value, comparedWith: range.upperBound) != .above
    }
    if !isInLimits {
      reportOutOfRange(argument(), clause.argumentSpec(index).limits, at: number.range)
    }
    return isInLimits
  }

  /// Reports `argument` outside `limits` with the limits' message.
  private mutating func reportOutOfRange(
    _ argument: ArgumentSyntax, _ limits: ArgumentLimits, at range: SourceRange
  ) {
    if let message = limits.outOfRange?(argument) { report(message, at: range) }
  }

  /// Checks a backoff factor: 1 to 1000, compared as written.
  private mutating func checkFactor(_ number: NumberLiteralSyntax) -> Bool {
    guard let factor = number.value else {
      isIncomplete = true
      return false
    }
    // Compared as written: `x0.99999999999999999999` is below 1, though it rounds to 1.
    if Literals.order(of: number.digits, value: factor, comparedWith: PolicyLimits.smallestFactor)
      == .below
    {
      report(.factorBelowOne(number.text), at: number.range)
      return false
    }
    guard
      Literals.order(of: number.digits, value: factor, comparedWith: PolicyLimits.largestFactor)
        != .above,
      factor.isFinite
    else {
      report(.factorTooLarge(number.text), at: number.range)
      return false
    }
    return true
  }
}
