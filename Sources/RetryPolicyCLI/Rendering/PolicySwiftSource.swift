import RetryPolicy

/// Swift source text for compiled values: what `retry-policy generate` writes.
///
/// Every expression builds the value through the library's public initializers and enum
/// cases, so the generated code parses nothing at run time and cannot trap.
///
/// No name a policy can take shadows what the code means: values are written as implicit
/// members of their contextual type (`.init(…)`, `.seconds(2)`, `.infinity`), so no
/// expression names a type, and types are written qualified by their module
/// (`RetryPolicy.CompiledPolicy`), where Swift looks up types only. A policy named
/// `CompiledPolicy`, `Duration`, `RetryPolicy`, `Swift` or `Self` is one more member.
///
/// This is the one place to extend when ``CompiledPolicy``, ``RetryRule``, ``RepeatBehavior``
/// or ``Jitter`` gains a field or a case: the switches below are exhaustive (a new case does
/// not compile until it is handled), and ``policyFields`` and ``ruleFields`` list the stored
/// properties written, which `GenerateCommandTests` compares with the types' own.
enum PolicySwiftSource {
  /// The stored properties of ``CompiledPolicy`` that ``expression(for:)`` writes.
  static let policyFields = [
    "name", "rules", "deadline", "attemptTimeout", "budgetRatio", "hedge", "breaker", "limit",
    "throttle", "rate",
  ]
  /// The stored properties of ``RetryRule`` that ``expression(for:indent:)`` writes.
  static let ruleFields = [
    "behavior", "errorClasses", "excludedClasses", "jitter", "maxDelay", "hook",
    "honorsRetryAfter",
  ]

  /// `.init(name: …, rules: [...], …)` of a `CompiledPolicy`, one argument a line, indented
  /// by `indent`.
  static func expression(for policy: CompiledPolicy, indent: String = "") -> String {
    let inner = indent + "  "
    let rules = policy.rules.map { inner + "  " + expression(for: $0, indent: inner + "  ") }
    var arguments = [
      "name: \(optional(policy.name, string))",
      "rules: [\n" + rules.joined(separator: ",\n") + (rules.isEmpty ? "" : ",\n") + inner + "]",
      "deadline: \(optional(policy.deadline, duration))",
      "attemptTimeout: \(optional(policy.attemptTimeout, duration))",
      "budgetRatio: \(optional(policy.budgetRatio, double))",
      "hedge: \(optional(policy.hedge, expression(for:)))",
      "breaker: \(optional(policy.breaker, expression(for:)))",
    ]
    // The shedding clauses only when present: the initializer's defaults are nil, and the
    // code generated for other policies stays as it was.
    if let limit = policy.limit { arguments.append("limit: \(expression(for: limit))") }
    if let throttle = policy.throttle {
      arguments.append(
        "throttle: .init(factor: \(double(throttle.factor)), window: \(duration(throttle.window)))")
    }
    if let rate = policy.rate {
      arguments.append(
        "rate: .init(count: \(rate.count), per: \(duration(rate.period)), burst: \(rate.burst))")
    }
    return ".init(\n" + arguments.map { inner + $0 }.joined(separator: ",\n") + "\n"
      + indent + ")"
  }

  /// `.init(behavior: …, …)` of a `RetryRule`, one argument a line.
  static func expression(for rule: RetryRule, indent: String) -> String {
    let inner = indent + "  "
    let arguments = [
      "behavior: \(expression(for: rule.behavior))",
      "errorClasses: \(array(rule.errorClasses, string))",
      "excludedClasses: \(array(rule.excludedClasses, string))",
      "jitter: \(optional(rule.jitter, expression(for:)))",
      "maxDelay: \(optional(rule.maxDelay, duration))",
      "hook: \(optional(rule.hook, string))",
      "honorsRetryAfter: \(rule.honorsRetryAfter)",
    ]
    return ".init(\n" + arguments.map { inner + $0 }.joined(separator: ",\n") + "\n"
      + indent + ")"
  }

  /// `.exponential(maxCount: 5, initial: …, multiplier: 1.5)` and the other cases.
  static func expression(for behavior: RepeatBehavior) -> String {
    switch behavior {
    case .immediate(let maxCount):
      ".immediate(maxCount: \(count(maxCount)))"
    case .delayed(let maxCount, let delay):
      ".delayed(maxCount: \(count(maxCount)), delay: \(duration(delay)))"
    case .exponential(let maxCount, let initial, let multiplier):
      ".exponential(maxCount: \(count(maxCount)), initial: \(duration(initial)), "
        + "multiplier: \(double(multiplier)))"
    case .linear(let maxCount, let initial, let increment):
      ".linear(maxCount: \(count(maxCount)), initial: \(duration(initial)), "
        + "increment: \(duration(increment)))"
    case .customTimerDelayed(let maxCount, let delays):
      ".customTimerDelayed(maxCount: \(count(maxCount)), delays: \(array(delays, duration)))"
    }
  }

  /// `.fixed(limit: 16, queue: 4)` or `.adaptive(minimum: 1, maximum: 200)`.
  static func expression(for limit: ConcurrencyLimitPolicy) -> String {
    switch limit {
    case .fixed(let count, let queue): ".fixed(limit: \(count), queue: \(queue))"
    case .adaptive(let minimum, let maximum): ".adaptive(minimum: \(minimum), maximum: \(maximum))"
    }
  }

  /// `.init(count: 2, delay: .milliseconds(100))` of a `HedgePolicy`.
  static func expression(for hedge: HedgePolicy) -> String {
    ".init(count: \(hedge.count), delay: \(duration(hedge.delay)))"
  }

  /// `.init(failurePercent: 50, window: .seconds(30), …)` of a `CircuitBreakerPolicy`.
  static func expression(for breaker: CircuitBreakerPolicy) -> String {
    ".init(failurePercent: \(breaker.failurePercent), window: \(duration(breaker.window)), "
      + "minimumAttempts: \(breaker.minimumAttempts), "
      + "openDuration: \(duration(breaker.openDuration)))"
  }

  /// `.proportional(fraction: 0.1)`, `.full`, `.equal` or `.decorrelated`.
  static func expression(for jitter: Jitter) -> String {
    switch jitter {
    case .proportional(let fraction): ".proportional(fraction: \(double(fraction)))"
    case .full: ".full"
    case .equal: ".equal"
    case .decorrelated: ".decorrelated"
    }
  }

  // MARK: Literals

  /// An exact `Duration`: `.seconds(2)`, `.milliseconds(1500)`, or `.init` of its two
  /// components.
  static func duration(_ value: Duration) -> String {
    let (seconds, attoseconds) = value.components
    if attoseconds == 0 { return ".seconds(\(seconds))" }
    let attosecondsPerMillisecond: Int64 = 1_000_000_000_000_000
    if attoseconds % attosecondsPerMillisecond == 0 {
      let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1000)
      let (total, overflow2) = whole.addingReportingOverflow(
        attoseconds / attosecondsPerMillisecond)
      if !overflow, !overflow2 { return ".milliseconds(\(total))" }
    }
    return ".init(secondsComponent: \(seconds), attosecondsComponent: \(attoseconds))"
  }

  /// A `Double` literal that reads back as the same value (Swift prints the shortest such).
  static func double(_ value: Double) -> String {
    if value.isNaN { return ".nan" }
    if value.isInfinite { return value < 0 ? "-.infinity" : ".infinity" }
    return "\(value)"
  }

  /// A string literal, every character outside printable ASCII escaped.
  static func string(_ value: String) -> String {
    var text = "\""
    for scalar in value.unicodeScalars {
      switch scalar {
      case "\"": text += "\\\""
      case "\\": text += "\\\\"
      case " "..."~": text.unicodeScalars.append(scalar)
      default: text += "\\u{\(String(scalar.value, radix: 16))}"
      }
    }
    return text + "\""
  }

  private static func count(_ value: Int?) -> String {
    value.map { "\($0)" } ?? "nil"
  }

  private static func optional<T>(_ value: T?, _ literal: (T) -> String) -> String {
    value.map(literal) ?? "nil"
  }

  private static func array<T>(_ values: [T], _ literal: (T) -> String) -> String {
    "[" + values.map(literal).joined(separator: ", ") + "]"
  }
}
