import RetryPolicy

/// A rule's delays as an engine's exponential back-off: an initial delay, a factor and a
/// cap, with a phrase saying what changes when that is not exactly the rule's schedule.
struct EngineBackoff {
  /// The smallest back-off an engine accepts, for a rule that does not wait.
  static let smallest = Duration.milliseconds(1)

  var initial: Duration
  var multiplier: Double
  var maximum: Duration
  /// What changes, or nil when the rule's nominal delays are exactly these.
  var approximation: String?
  /// Whether the rule waits at all.
  var isPositive: Bool
  /// The rule's delay clause, where a note points.
  var clause: Clause

  /// The back-off for `rule`, whose last retry is attempt `attempts`.
  init(_ rule: RetryRule, attempts: Int) {
    let lastRetry = max(1, attempts - 1)
    let cap = rule.maxDelay
    isPositive = true
    approximation = nil
    switch rule.behavior {
    case .immediate, .delayed(_, .zero):
      initial = Self.smallest
      multiplier = 1
      maximum = Self.smallest
      isPositive = false
      clause = Clause.delayClause(of: rule.behavior)
      approximation = "a positive back-off is needed, so retries wait up to 1ms, not 0s"
    case .delayed(_, let delay):
      initial = delay
      multiplier = 1
      maximum = cap.map { min($0, delay) } ?? delay
      clause = Clause.delayClause(of: rule.behavior)
    case .exponential(_, let delay, let factor):
      initial = delay
      multiplier = factor
      maximum = cap ?? rule.nominalDelay(beforeRetry: lastRetry)
      clause = Clause.delayClause(of: rule.behavior)
    case .linear(_, let delay, let increment):
      initial = delay
      let seconds = delay / .seconds(1)
      multiplier = seconds > 0 ? ((delay + increment) / .seconds(1)) / seconds : 1
      maximum = cap ?? rule.nominalDelay(beforeRetry: lastRetry)
      clause = Clause.delayClause(of: rule.behavior)
      approximation =
        "'\(Keyword.backoff.text) \(delay.policyText) +\(increment.policyText)' grows by a factor of"
        + " \(NumberText.decimal(multiplier)) instead"
    case .customTimerDelayed(_, let delays):
      let first = delays.first ?? .zero
      initial = first > .zero ? first : Self.smallest
      let second = delays.count > 1 ? delays[1] : first
      multiplier = first > .zero ? max(1, (second / .seconds(1)) / (first / .seconds(1))) : 1
      maximum = cap ?? (delays.max() ?? initial)
      clause = Clause.delayClause(of: rule.behavior)
      approximation =
        "the schedule '\(Keyword.delays.text)' becomes \(initial.policyText) × \(NumberText.decimal(multiplier))^n,"
        + " capped at \(maximum.policyText)"
    }
    // A cap below the first delay makes every delay the cap.
    if let cap, cap > .zero, cap < initial {
      initial = cap
      maximum = cap
    }
    if maximum < initial { maximum = initial }
  }

  /// Where a note about the delays points.
  func range(_ locator: ExportLocator) -> SourceRange {
    locator.clause(clause, inRule: 0)
  }

  /// The rule's jitter, as a phrase.
  static func jitterText(_ jitter: Jitter?) -> String {
    switch jitter {
    case nil: "the delay itself (no jitter)"
    case .proportional(let fraction)?: "±\(NumberText.decimal(fraction * 100))%"
    case .full?: "[0, d]"
    case .equal?: "'\(Keyword.jitter.text) \(Keyword.equal.text)'"
    case .decorrelated?: "'\(Keyword.jitter.text) \(Keyword.decorrelated.text)'"
    }
  }
}
