// Printing the compiled form. A rule and a policy print as canonical policy text, which
// compiles back to an equal value; the enums print like Swift values.

extension CompiledPolicy: CustomStringConvertible {
  /// The policy as canonical policy text, without its name: one line a rule, the policy-wide
  /// clauses at the end of a single rule's line or on a line of their own.
  ///
  ///     retry 5 on serverError backoff 1s x1.5 jitter 10% within 2m
  public var description: String { text(explicitDelays: false) }

  /// The policy as policy text; with `explicitDelays`, every rule names its delay clause in
  /// full (`immediately`, `backoff 1s x2`), as `explain` shows it.
  package func text(explicitDelays: Bool) -> String {
    var text = ""
    for (index, rule) in rules.enumerated() {
      if index > 0 { text += "\n" }
      rule.write(to: &text, explicitDelays: explicitDelays)
    }
    // The policy-wide clauses in the clause table's order.
    var policyWide = ""
    for clause in Clause.allCases where clause.isPolicyWide {
      guard let arguments = arguments(of: clause) else { continue }
      policyWide += " " + clause.text + (arguments.isEmpty ? "" : " " + arguments)
    }
    guard !policyWide.isEmpty else { return text }
    if rules.count > 1 {
      text += "\n"
      policyWide.removeFirst()
    } else if rules.isEmpty {
      policyWide.removeFirst()
    }
    return text + policyWide
  }

  /// The arguments of a policy-wide clause as policy text; nil when the policy has none.
  private func arguments(of clause: Clause) -> String? {
    switch clause {
    case .within: deadline?.policyText
    case .timeout: attemptTimeout?.policyText
    case .budget: budgetRatio.map { Self.percentText($0) + "%" }
    case .hedge: hedge.map { "\($0.count) \(Keyword.after.text) " + $0.delay.policyText }
    case .breaker: breaker.map(Self.breakerText)
    case .limit: limit.map(Self.limitText)
    case .throttle:
      throttle.map { Keyword.x.text + Self.numberText($0.factor) + " over " + $0.window.policyText }
    case .rate: rate.map { "\($0.policyText) burst \($0.burst)" }
    // Rule clauses belong to the rules (`RetryRule.write`).
    case .on, .except, .immediately, .delay, .backoff, .delays, .jitter, .max, .after,
      .honoringRetryAfter:
      nil
    }
  }

  /// The arguments of `limit`, every setting written out: `8 queue 0`, `adaptive min 1 max 200`.
  private static func limitText(_ limit: ConcurrencyLimitPolicy) -> String {
    switch limit {
    case .fixed(let limit, let queue): "\(limit) queue \(queue)"
    case .adaptive(let minimum, let maximum): "adaptive min \(minimum) max \(maximum)"
    }
  }

  /// The arguments of `breaker`, every setting written out: `50% over 30s min 20 for 5s`.
  private static func breakerText(_ breaker: CircuitBreakerPolicy) -> String {
    "\(breaker.failurePercent)% over \(breaker.window.policyText)"
      + " min \(breaker.minimumAttempts)"
      + " for \(breaker.openDuration.policyText)"
  }

  /// A fraction as the percentage that compiles back to it: 0.1 → `10`, 0.075 → `7.5`.
  package static func percentText(_ fraction: Double) -> String {
    let percent = fraction * 100
    guard percent.isFinite else { return numberText(percent) }
    var scale = 1.0
    for _ in 0...12 {
      let rounded = (percent * scale).rounded() / scale
      if rounded / 100 == fraction { return numberText(rounded) }
      scale *= 10
    }
    return numberText(percent)
  }

  /// A number as the language writes it: `2`, `1.5`, `0.00001`; never `2.0` or an exponent.
  package static func numberText(_ value: Double) -> String {
    if value.isFinite, value == value.rounded(), abs(value) < 1e15 {
      return String(Int64(value))
    }
    let text = "\(value)"
    guard value.isFinite, let e = text.firstIndex(of: "e"),
      let exponent = Int(text[text.index(after: e)...])
    else { return text }
    // Shortest digits with an exponent, such as `1.5e-07`: move the point in the text.
    var mantissa = text[..<e]
    let sign = mantissa.first == "-" ? "-" : ""
    if !sign.isEmpty { mantissa.removeFirst() }
    let integerLength =
      mantissa.firstIndex(of: ".").map { mantissa.distance(from: mantissa.startIndex, to: $0) }
      ?? mantissa.count
    let digits = Array(mantissa.filter { $0 != "." })
    let point = integerLength + exponent
    if point <= 0 {
      return sign + "0." + String(repeating: "0", count: -point) + String(digits)
    }
    if point >= digits.count {
      return sign + String(digits) + String(repeating: "0", count: point - digits.count)
    }
    return sign + String(digits[..<point]) + "." + String(digits[point...])
  }
}

extension RetryRule: CustomStringConvertible {
  /// The rule as canonical policy text, clauses in the grammar's order.
  ///
  ///     retry 5 on serverError backoff 1s x1.5 jitter 10% max 30s
  public var description: String {
    var text = ""
    write(to: &text)
    return text
  }

  /// The rule as policy text; with `explicitDelays`, the delay clause is written in full
  /// (`immediately`, `backoff 1s x2`).
  package func text(explicitDelays: Bool) -> String {
    var text = ""
    write(to: &text, explicitDelays: explicitDelays)
    return text
  }

  /// Appends the rule's text: `retry N`, then its clauses in the clause table's order.
  func write(to text: inout String, explicitDelays: Bool = false) {
    text += Keyword.retry.text + " "
    text += behavior.maxCount.map { String($0) } ?? Keyword.forever.text
    for clause in Clause.allCases where !clause.isPolicyWide {
      guard let arguments = arguments(of: clause, explicitDelays: explicitDelays) else { continue }
      text += " " + clause.text
      if !arguments.isEmpty { text += " " + arguments }
    }
  }

  /// The arguments of a rule clause as policy text (empty for a clause without arguments);
  /// nil when the rule has no such clause.
  private func arguments(of clause: Clause, explicitDelays: Bool) -> String? {
    switch clause {
    case .on: errorClasses.isEmpty ? nil : errorClasses.joined(separator: ", ")
    case .except: excludedClasses.isEmpty ? nil : excludedClasses.joined(separator: ", ")
    case .immediately, .delay, .backoff, .delays:
      delayArguments(of: clause, explicitDelays: explicitDelays)
    case .jitter: jitter?.policyText
    case .max: maxDelay?.policyText
    case .after: hook
    case .honoringRetryAfter: honorsRetryAfter ? "" : nil
    // Policy-wide clauses belong to the policy (`CompiledPolicy.text`).
    case .within, .timeout, .budget, .hedge, .breaker, .limit, .throttle, .rate: nil
    }
  }

  /// The arguments of the delay clause `clause` when it is the rule's; nil otherwise.
  private func delayArguments(of clause: Clause, explicitDelays: Bool) -> String? {
    switch behavior {
    case .immediate:
      clause == .immediately && explicitDelays ? "" : nil
    case .delayed(_, let delay):
      clause == .delay ? delay.policyText : nil
    case .exponential(_, let initial, let multiplier):
      clause != .backoff
        ? nil
        : initial.policyText
          + (multiplier != 2 || explicitDelays
            ? " " + Keyword.x.text + CompiledPolicy.numberText(multiplier) : "")
    case .linear(_, let initial, let increment):
      clause == .backoff ? initial.policyText + " +" + increment.policyText : nil
    case .customTimerDelayed(_, let delays):
      clause == .delays ? delays.map(\.policyText).joined(separator: ", ") : nil
    }
  }

}

extension RepeatBehavior: CustomStringConvertible {
  /// The behavior like a Swift value, durations in policy notation:
  /// `exponential(maxCount: 5, initial: 1s, multiplier: 1.5)`; `maxCount: nil` is forever.
  public var description: String {
    let count = maxCount.map { String($0) } ?? "nil"
    switch self {
    case .immediate:
      return "immediate(maxCount: \(count))"
    case .delayed(_, let delay):
      return "delayed(maxCount: \(count), delay: \(delay.policyText))"
    case .exponential(_, let initial, let multiplier):
      return "exponential(maxCount: \(count), initial: \(initial.policyText), "
        + "multiplier: \(CompiledPolicy.numberText(multiplier)))"
    case .linear(_, let initial, let increment):
      return "linear(maxCount: \(count), initial: \(initial.policyText), "
        + "increment: \(increment.policyText))"
    case .customTimerDelayed(_, let delays):
      return "customTimerDelayed(maxCount: \(count), delays: ["
        + delays.map(\.policyText).joined(separator: ", ") + "])"
    }
  }
}

extension Jitter: CustomStringConvertible {
  /// The jitter like a Swift value: `proportional(fraction: 0.1)`, `full`, `equal`,
  /// `decorrelated`.
  public var description: String {
    switch self {
    case .proportional(let fraction): "proportional(fraction: \(fraction))"
    case .full: Keyword.full.text
    case .equal: Keyword.equal.text
    case .decorrelated: Keyword.decorrelated.text
    }
  }

  /// The argument of `jitter` in policy text: `10%`, `full`, `equal`, `decorrelated`.
  var policyText: String {
    switch self {
    case .proportional(let fraction): CompiledPolicy.percentText(fraction) + "%"
    case .full: Keyword.full.text
    case .equal: Keyword.equal.text
    case .decorrelated: Keyword.decorrelated.text
    }
  }
}
