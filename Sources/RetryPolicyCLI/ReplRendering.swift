import RetryPolicy

/// A complaint about a REPL command's argument, shown as `error: TEXT`.
struct ReplFailure: Error, Sendable, Hashable {
  /// The message: a lowercase phrase without a final period.
  var text: String
}

/// How the REPL shows a compiled policy: its explanation, its JSON and a simulated run.
///
/// Kept behind these three functions so that the REPL shows exactly what `explain`,
/// `explain --json` and `simulate` show once those commands' renderers are at hand.
enum ReplRendering {
  /// The most outcomes `:simulate` takes.
  static let maximumOutcomes = 10_000

  /// The policy's compiled form and its table of delays, as `explain` shows it.
  static func explain(_ policy: CompiledPolicy, usesColor: Bool) -> String {
    var text = ""
    for (index, rule) in policy.rules.enumerated() {
      text += "rule \(index + 1): \(summary(of: rule))\n"
      let schedule = rule.schedule(limit: 100)
      if schedule.entries.isEmpty {
        text += "  no retries\n"
        continue
      }
      text += "  retry  delay        range\n"
      for entry in schedule.entries {
        let number = String(entry.retry)
        let delay = entry.delay.policyText
        let range =
          entry.minimum == entry.maximum
          ? "" : "\(entry.minimum.policyText) to \(entry.maximum.policyText)"
        text += "  " + String(repeating: " ", count: max(0, 5 - number.count)) + number
        text += "  " + delay + String(repeating: " ", count: max(1, 13 - delay.count)) + range
        text = String(text.reversed().drop { $0 == " " }.reversed()) + "\n"
      }
      if schedule.isTruncated { text += "  … (first \(schedule.entries.count) retries shown)\n" }
      if let total = schedule.worstCaseTotal {
        text += "  worst-case total delay: \(total.policyText)\n"
      }
    }
    var wide: [String] = []
    if let deadline = policy.deadline { wide.append("within \(deadline.policyText)") }
    if let timeout = policy.attemptTimeout { wide.append("timeout \(timeout.policyText)") }
    if let budget = policy.budgetRatio { wide.append("budget \(number(budget * 100))%") }
    if !wide.isEmpty { text += "policy-wide: " + wide.joined(separator: ", ") + "\n" }
    return text
  }

  private static func summary(of rule: RetryRule) -> String {
    var parts: [String] = []
    let count = rule.behavior.maxCount.map { "at most \($0) retries" } ?? "retries forever"
    switch rule.behavior {
    case .immediate: parts.append("\(count), immediately")
    case .delayed(_, let delay): parts.append("\(count), delay \(delay.policyText)")
    case .exponential(_, let initial, let multiplier):
      parts.append("\(count), exponential from \(initial.policyText) x\(number(multiplier))")
    case .linear(_, let initial, let increment):
      parts.append("\(count), linear from \(initial.policyText) +\(increment.policyText)")
    case .customTimerDelayed(_, let delays):
      parts.append("\(count), delays " + delays.map(\.policyText).joined(separator: ", "))
    }
    parts.append(
      rule.errorClasses.isEmpty ? "on any error" : "on " + rule.errorClasses.joined(separator: ", ")
    )
    if !rule.excludedClasses.isEmpty {
      parts.append("except " + rule.excludedClasses.joined(separator: ", "))
    }
    switch rule.jitter {
    case .proportional(let fraction)?: parts.append("jitter \(number(fraction * 100))%")
    case let jitter?: parts.append("jitter \(jitter.kindName)")
    case nil: break
    }
    if let cap = rule.maxDelay { parts.append("max \(cap.policyText)") }
    if let hook = rule.hook { parts.append("after \(hook)") }
    if rule.honorsRetryAfter { parts.append("honoring retry-after") }
    return parts.joined(separator: "; ")
  }

  /// The policy as `explain --json` writes it.
  static func json(_ policy: CompiledPolicy) -> String {
    var rules: [String] = []
    for rule in policy.rules {
      let schedule = rule.schedule(limit: 100)
      var behavior = "{\"kind\": \(string(rule.behavior.kindName)), \"maxCount\": "
      behavior += rule.behavior.maxCount.map(String.init) ?? "null"
      switch rule.behavior {
      case .immediate: break
      case .delayed(_, let delay): behavior += ", \"delay\": \(seconds(delay))"
      case .exponential(_, let initial, let multiplier):
        behavior += ", \"initial\": \(seconds(initial)), \"multiplier\": \(number(multiplier))"
      case .linear(_, let initial, let increment):
        behavior += ", \"initial\": \(seconds(initial)), \"increment\": \(seconds(increment))"
      case .customTimerDelayed(_, let delays):
        behavior += ", \"delays\": [" + delays.map(seconds).joined(separator: ", ") + "]"
      }
      behavior += "}"
      let jitter: String
      switch rule.jitter {
      case .proportional(let fraction)?:
        jitter = "{\"kind\": \"proportional\", \"fraction\": \(number(fraction))}"
      case let other?: jitter = "{\"kind\": \(string(other.kindName))}"
      case nil: jitter = "null"
      }
      let rows = schedule.entries.map {
        "        {\"retry\": \($0.retry), \"delay\": \(seconds($0.delay)), "
          + "\"min\": \(seconds($0.minimum)), \"max\": \(seconds($0.maximum))}"
      }
      let on = rule.errorClasses.map(string).joined(separator: ", ")
      let except = rule.excludedClasses.map(string).joined(separator: ", ")
      let scheduleText = rows.isEmpty ? "" : "\n" + rows.joined(separator: ",\n") + "\n      "
      var object = "    {\n"
      object += "      \"on\": [\(on)],\n"
      object += "      \"except\": [\(except)],\n"
      object += "      \"behavior\": \(behavior),\n"
      object += "      \"jitter\": \(jitter),\n"
      object += "      \"max\": \(rule.maxDelay.map(seconds) ?? "null"),\n"
      object += "      \"schedule\": [\(scheduleText)],\n"
      object += "      \"truncated\": \(schedule.isTruncated)\n"
      object += "    }"
      rules.append(object)
    }
    var text = "{\n  \"rules\": [\n" + rules.joined(separator: ",\n") + "\n  ],\n"
    text += "  \"within\": \(policy.deadline.map(seconds) ?? "null"),\n"
    text += "  \"timeout\": \(policy.attemptTimeout.map(seconds) ?? "null"),\n"
    text += "  \"budget\": \(policy.budgetRatio.map(number) ?? "null")\n}\n"
    return text
  }

  /// Runs the policy on virtual time against scripted outcomes: `ok` for a success, an error
  /// class name (`serverError`, `timeout`) for a failure of that class.
  static func simulate(
    _ policy: CompiledPolicy, outcomes text: String
  ) async -> Result<String, ReplFailure> {
    let words = text.split { $0 == " " || $0 == "," || $0 == "\t" }.map(String.init)
    guard words.count <= maximumOutcomes else {
      return .failure(ReplFailure(text: "too many outcomes; at most \(maximumOutcomes)"))
    }
    if let bad = words.first(where: { !isOutcome($0) }) {
      return .failure(
        ReplFailure(text: "'\(bad)' is not an outcome; use 'ok' or an error class name"))
    }
    var lines: [String] = []
    var now = 0.0
    var retriesByRule = [Int](repeating: 0, count: policy.rules.count)
    var previousDelay: [Duration?] = Array(repeating: nil, count: policy.rules.count)
    var generator = ReplSeededGenerator(seed: 1)
    for (index, outcome) in words.enumerated() {
      let attempt = "attempt \(index + 1) at \(Duration.saturating(seconds: now).policyText)"
      if successWords.contains(outcome) {
        lines.append("\(attempt): ok")
        lines.append("succeeded after \(index + 1) attempt\(index == 0 ? "" : "s")")
        return .success(lines.joined(separator: "\n") + "\n")
      }
      guard outcome != "cancelled",
        let ruleIndex = policy.rules.firstIndex(where: { matches($0, outcome) })
      else {
        lines.append("\(attempt): \(outcome); no rule retries it")
        lines.append("failed with \(outcome) after \(index + 1) attempt\(index == 0 ? "" : "s")")
        return .success(lines.joined(separator: "\n") + "\n")
      }
      let rule = policy.rules[ruleIndex]
      let retry = retriesByRule[ruleIndex] + 1
      if let limit = rule.behavior.maxCount, retry > limit {
        lines.append("\(attempt): \(outcome); rule \(ruleIndex + 1) has no retries left")
        lines.append("failed with \(outcome) after \(index + 1) attempts")
        return .success(lines.joined(separator: "\n") + "\n")
      }
      let delay = rule.delay(
        beforeRetry: retry, previous: previousDelay[ruleIndex], using: &generator)
      if let deadline = policy.deadline, now + delay.seconds > deadline.seconds {
        lines.append(
          "\(attempt): \(outcome); a retry after \(delay.policyText) would pass 'within "
            + "\(deadline.policyText)'")
        lines.append("failed with \(outcome) after \(index + 1) attempts")
        return .success(lines.joined(separator: "\n") + "\n")
      }
      retriesByRule[ruleIndex] = retry
      previousDelay[ruleIndex] = delay
      lines.append(
        "\(attempt): \(outcome); rule \(ruleIndex + 1) retry \(retry) after \(delay.policyText)")
      now = min(now + delay.seconds, Duration.saturatedDelay.seconds)
    }
    lines.append(
      "outcomes ran out; attempt \(words.count + 1) would start at "
        + Duration.saturating(seconds: now).policyText)
    return .success(lines.joined(separator: "\n") + "\n")
  }

  private static let successWords: Set<String> = ["ok", "success", "succeed"]

  private static func isOutcome(_ word: String) -> Bool {
    guard let first = word.unicodeScalars.first, first.isASCIILetter || first == "_" else {
      return false
    }
    return word.unicodeScalars.allSatisfy {
      $0.isASCIILetter || $0 == "_" || ("0"..."9").contains($0)
    }
  }

  private static func matches(_ rule: RetryRule, _ errorClass: String) -> Bool {
    if rule.excludedClasses.contains(errorClass) { return false }
    if rule.errorClasses.isEmpty { return true }
    return rule.errorClasses.contains(errorClass) || rule.errorClasses.contains("any")
  }

  private static func seconds(_ duration: Duration) -> String { duration.secondsText }

  private static func number(_ value: Double) -> String {
    guard value.isFinite else { return "null" }
    if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
    return String(value)
  }

  private static func string(_ text: String) -> String {
    var result = "\""
    for scalar in text.unicodeScalars {
      switch scalar {
      case "\"": result += "\\\""
      case "\\": result += "\\\\"
      case "\n": result += "\\n"
      case _ where scalar.value < 0x20:
        let hex = String(scalar.value, radix: 16)
        result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
      default: result.unicodeScalars.append(scalar)
      }
    }
    return result + "\""
  }
}

/// A small seeded random source (SplitMix64) for the simulation's jitter.
private struct ReplSeededGenerator: RandomNumberGenerator {
  private var state: UInt64

  init(seed: UInt64) { state = seed }

  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var value = state
    value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
    value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
    return value ^ (value >> 31)
  }
}

extension Unicode.Scalar {
  fileprivate var isASCIILetter: Bool { ("a"..."z").contains(self) || ("A"..."Z").contains(self) }
}
