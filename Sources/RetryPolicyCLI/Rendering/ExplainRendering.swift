import RetryPolicy
import RetryPolicyEngines

/// Renders a compiled policy for `explain`: as text for people and as the contract's JSON.
///
/// Everything here is a pure function of a ``CompiledPolicy``, so the REPL and the tests
/// can render hand-built policies:
///
///     let policy = CompiledPolicy(rules: [
///       RetryRule(behavior: .exponential(maxCount: 5, initial: .seconds(1), multiplier: 1.5),
///                 errorClasses: ["serverError"], jitter: .proportional(fraction: 0.1))
///     ])
///     print(ExplainRendering.text(policy))
///     print(ExplainRendering.json(policy))
package enum ExplainRendering {
  /// The most schedule rows `explain --json` lists for `retry forever` (the contract's 100).
  package static let foreverScheduleLimit = 100
  /// The most schedule rows `explain --json` lists for a finite count.
  package static let finiteScheduleLimit = 10_000
  /// The text table shows every row up to this many; beyond, the first rows and the last.
  ///
  /// For `retry forever` it shows the same first 100 rows as the JSON.
  package static let textRowLimit = 25
  /// The rows the text table shows before `…` when it is cut.
  package static let textLeadingRows = 20

  // MARK: - Policy text

  /// The policy written back in the language from its compiled form: one line per rule,
  /// and the policy-wide clauses at the end of a single rule's line or on a line of their own.
  ///
  /// Every delay clause is explicit (`immediately`, `backoff 1s x2`), so the line says
  /// exactly what the compiled rule does.
  package static func policyLines(_ policy: CompiledPolicy) -> [String] {
    policy.text(explicitDelays: true).split(separator: "\n").map(String.init)
  }

  /// One rule written back in the language: `retry 5 on serverError backoff 1s x1.5 jitter 10%`.
  package static func ruleText(_ rule: RetryRule) -> String {
    rule.text(explicitDelays: true)
  }

  /// A fraction as a percentage: `0.1` → `10%`.
  package static func percentText(_ fraction: Double) -> String {
    CompiledPolicy.percentText(fraction) + "%"
  }

  // MARK: - Text

  /// The human form of `explain`: the policy, then for each rule its compiled behavior,
  /// attempts, classes, jitter, cap, hook and retry-after, a table of delays with jitter
  /// ranges, and the worst-case total; then the policy-wide clauses.
  ///
  ///     policy: retry 2 on serverError backoff 1s x1.5 jitter 10%
  ///
  ///     rule 1: retry 2 on serverError backoff 1s x1.5 jitter 10%
  ///       behavior     exponential(maxCount: 2, initial: 1s, multiplier: 1.5)
  ///       attempts     at most 3 (1 + 2 retries)
  ///       …
  ///       retry  delay  range          worst-case elapsed
  ///           1  1s     0.9s – 1.1s    1.1s
  ///           2  1.5s   1.35s – 1.65s  2.75s
  ///       worst-case total: 2.75s
  ///
  /// - Parameters:
  ///   - policy: the policy to explain.
  ///   - usesColor: whether to embolden headings with ANSI escapes.
  package static func text(_ policy: CompiledPolicy, usesColor: Bool = false) -> String {
    let style = TextStyle(usesColor: usesColor)
    var output = ""
    let lines = policyLines(policy)
    let title = policy.name.map { "\(Keyword.policy.text) \($0)" } ?? Keyword.policy.text
    if lines.count == 1 {
      output += style.bold(title + ":") + " " + lines[0] + "\n"
    } else {
      output += style.bold(title + ":") + "\n"
      for line in lines { output += "  " + line + "\n" }
    }
    if policy.rules.isEmpty {
      output += "\n(no rules: errors are thrown at once)\n"
    }
    for (index, rule) in policy.rules.enumerated() {
      output += "\n"
      output += style.bold("rule \(index + 1):") + " " + ruleText(rule) + "\n"
      output += ruleDetails(rule, in: policy, style: style)
    }
    output += "\n"
    output += policyDetails(policy)
    return output
  }

  private static func ruleDetails(
    _ rule: RetryRule, in policy: CompiledPolicy, style: TextStyle
  ) -> String {
    var rows: [(String, String)] = []
    rows.append(("behavior", rule.behavior.description))
    rows.append(("attempts", attemptsText(rule.behavior.maxCount, policy: policy)))
    let namesCancellation = rule.errorClasses.contains {
      $0 == "CancellationError" || $0 == "cancellation"
    }
    rows.append(
      (
        "retries on",
        rule.errorClasses.isEmpty
          ? "any error but cancellation"
          : rule.errorClasses.joined(separator: ", ")
            + (namesCancellation ? " (but never cancellation, even when named)" : "")
      ))
    let excluded = ["cancellation"] + rule.excludedClasses.filter { $0 != "cancellation" }
    rows.append(("never on", excluded.joined(separator: ", ")))
    rows.append((Keyword.jitter.text, rule.jitter.map(jitterDescription) ?? "none"))
    rows.append(
      (
        "cap",
        rule.maxDelay.map { "\(Keyword.max.text) \($0.policyText), applied after jitter" } ?? "none"
      ))
    rows.append(("hook", rule.hook.map { "'\($0)' runs before each retry" } ?? "none"))
    rows.append(
      (
        Keyword.retryAfter.text,
        rule.honorsRetryAfter
          ? "honored: a delay carried by the error replaces the computed one"
            + (rule.maxDelay == nil
              ? ", so no delay has an upper bound" : ", still capped: any delay may be the cap")
          : "ignored"
      ))
    var output = labeled(rows, indent: "  ")
    output += "\n"
    let schedule = rule.schedule(limit: textScheduleLimit(rule.behavior.maxCount))
    output += scheduleTable(schedule, count: rule.behavior.maxCount, style: style)
    output +=
      "  worst-case total: "
      + worstCaseText(schedule.worstCaseTotal, rule: rule, policy: policy)
      + admissionWaitsText(policy) + "\n"
    return output
  }

  private static func attemptsText(_ count: Int?, policy: CompiledPolicy) -> String {
    guard let count else {
      let bound =
        policy.deadline.map { "; '\(Keyword.within.text) \($0.policyText)' ends them" } ?? ""
      return "unlimited retries" + bound
    }
    if count == 0 { return "at most 1 (no retries)" }
    let (total, overflow) = count.addingReportingOverflow(1)
    let attempts = overflow ? "\(count) + 1" : String(total)
    return "at most \(attempts) (1 + \(count) \(count == 1 ? Keyword.retry.text : "retries"))"
  }

  private static func jitterDescription(_ jitter: Jitter) -> String {
    switch jitter {
    case .proportional(let fraction):
      let low = NumberText.decimal(1 - min(max(fraction, 0), 1))
      let high = NumberText.decimal(1 + min(max(fraction, 0), 1))
      return "±\(percentText(fraction)): each delay times a uniform factor in [\(low), \(high)]"
    case .full:
      return Keyword.full.text + ": each delay d becomes uniform in [0, d]"
    case .equal:
      return Keyword.equal.text + ": each delay d becomes d/2 + uniform in [0, d/2]"
    case .decorrelated:
      return Keyword.decorrelated.text + ": uniform in [first delay, 3 × previous delay]"
    }
  }

  /// The rows of the policy-wide clauses, in the clause table's order; `within`, `timeout`
  /// and `budget` say "none" when absent.
  private static func policyDetails(_ policy: CompiledPolicy) -> String {
    var rows: [(String, String)] = []
    for clause in Clause.allCases {
      let value: String?
      switch clause {
      case .within:
        value =
          policy.deadline.map {
            "\($0.policyText): no retry starts whose delay would end past it"
          } ?? "none"
      case .timeout:
        value =
          policy.attemptTimeout.map {
            "\($0.policyText) per attempt; a cut-off attempt fails with '\(Keyword.timeout.text)'"
          } ?? "none"
      case .budget:
        value =
          policy.budgetRatio.map {
            "\(percentText($0)): retries of all runs stay below \(percentText($0)) of first"
              + " attempts, plus a floor of \(RetryBudget.initialTokens)"
          } ?? "none"
      case .hedge: value = policy.hedge.map(hedgeText)
      case .breaker: value = policy.breaker.map(breakerText)
      case .limit: value = policy.limit.map(limitText)
      case .throttle: value = policy.throttle.map(throttleText)
      case .rate: value = policy.rate.map(rateText)
      // Rule clauses have the rules' rows.
      case .on, .except, .immediately, .delay, .backoff, .delays, .jitter, .max, .after,
        .honoringRetryAfter:
        value = nil
      }
      if let value { rows.append((clause.text, value)) }
    }
    return labeled(rows, indent: "")
  }

  private static func labeled(_ rows: [(String, String)], indent: String) -> String {
    let width = rows.map(\.0.count).max() ?? 0
    return rows.map { label, value in
      indent + label + String(repeating: " ", count: width - label.count + 2) + value + "\n"
    }.joined()
  }

  /// The rows the text table takes from the schedule: every row of a short count, the first
  /// rows of a long one (the last row follows `…`), the JSON's rows for `retry forever`.
  private static func textScheduleLimit(_ count: Int?) -> Int {
    guard let count else { return foreverScheduleLimit }
    return count > textRowLimit ? textLeadingRows : count
  }

  /// The table of delays, `retry | delay | range | worst-case elapsed`.
  private static func scheduleTable(_ schedule: Schedule, count: Int?, style: TextStyle) -> String {
    if count == 0 { return "  (no retries)\n" }
    var rows: [[String]] = [
      [Keyword.retry.text, Keyword.delay.text, "range", "worst-case elapsed"]
    ]
    rows += schedule.entries.map(row)
    var ellipsisAfter: Int?
    if schedule.isTruncated {
      ellipsisAfter = rows.count
      if let last = schedule.last { rows.append(row(last)) }
    }
    let widths = (0..<4).map { column in rows.map { $0[column].count }.max() ?? 0 }
    var output = ""
    for (index, cells) in rows.enumerated() {
      if index == ellipsisAfter {
        output += count == nil ? "      …  (forever)\n" : "      …\n"
      }
      var line = "  "
      for (column, cell) in cells.enumerated() {
        let padding = String(repeating: " ", count: widths[column] - cell.count)
        if column == 0 {
          line += padding + cell
        } else {
          line += "  " + cell + (column == cells.count - 1 ? "" : padding)
        }
      }
      output += (index == 0 ? style.bold(line) : line) + "\n"
    }
    if ellipsisAfter == rows.count {
      output += count == nil ? "      …  (forever)\n" : "      …\n"
    }
    return output
  }

  /// One row of the table; a range of `-` when jitter cannot move the delay at all.
  private static func row(_ entry: ScheduleEntry) -> [String] {
    let range: String
    if let maximum = entry.maximum {
      range =
        entry.minimum == maximum && maximum == entry.delay
        ? "-" : "\(secondsText(entry.minimum)) – \(secondsText(maximum))"
    } else {
      range = "\(secondsText(entry.minimum)) – unbounded"
    }
    return [
      String(entry.retry), secondsText(entry.delay), range,
      entry.worstCaseElapsed.map(secondsText) ?? "unbounded",
    ]
  }

  /// The schedule's worst-case total in words, with why it is unbounded and whether `within`
  /// ends retrying sooner.
  private static func worstCaseText(
    _ total: Duration?, rule: RetryRule, policy: CompiledPolicy
  ) -> String {
    if rule.honorsRetryAfter {
      return retryAfterWorstCaseText(total, rule: rule, policy: policy)
    }
    guard let total else {
      return policy.deadline.map {
        "unbounded, but '\(Keyword.within.text) \($0.policyText)' ends retrying"
      }
        ?? "unbounded"
    }
    var text = readableSeconds(total)
    if total >= .saturatedDelay {
      text = "at least " + text + " (delay arithmetic stops at this ceiling)"
    }
    if let deadline = policy.deadline, deadline < total {
      text += " ('\(Keyword.within.text) \(deadline.policyText)' ends retrying sooner)"
    }
    return text
  }

  private static func retryAfterWorstCaseText(
    _ total: Duration?, rule: RetryRule, policy: CompiledPolicy
  ) -> String {
    let within =
      policy.deadline.map { ", but '\(Keyword.within.text) \($0.policyText)' ends retrying" } ?? ""
    guard let cap = rule.maxDelay else {
      return "unbounded: a Retry-After delay carried by the error replaces the computed one and"
        + " no '\(Keyword.max.text)' caps it\(within)"
    }
    guard let total else {
      return
        "unbounded: every retry may wait the cap '\(Keyword.max.text) \(cap.policyText)'\(within)"
    }
    var text =
      readableSeconds(total)
      + ": every retry may wait the cap '\(Keyword.max.text) \(cap.policyText)' when the error carries a"
      + " Retry-After"
    if let deadline = policy.deadline, deadline < total {
      text += " ('\(Keyword.within.text) \(deadline.policyText)' ends retrying sooner)"
    }
    return text
  }

  /// Seconds with an `s`, such as `1.35s`: the table's unit for every duration.
  package static func secondsText(_ duration: Duration) -> String {
    duration.secondsText + "s"
  }

  /// Seconds with an `s`, followed by hours, minutes and seconds when a minute or longer:
  /// `74.5s (1m 14.5s)`.
  package static func readableSeconds(_ duration: Duration) -> String {
    let (whole, attoseconds) = duration.components
    guard whole >= 60 else { return secondsText(duration) }
    let hours = whole / 3600
    let minutes = (whole % 3600) / 60
    let rest = Duration(secondsComponent: whole % 60, attosecondsComponent: attoseconds)
    var parts: [String] = []
    if hours > 0 { parts.append("\(hours)h") }
    if minutes > 0 { parts.append("\(minutes)m") }
    if rest > .zero { parts.append(secondsText(rest)) }
    return secondsText(duration) + " (" + parts.joined(separator: " ") + ")"
  }

  // MARK: - JSON

  /// The contract's `explain --json` object, with a few added fields after the contract's:
  /// per rule `hook`, `honorsRetryAfter` and `worstCaseTotal` (the rule's delays only: not
  /// the waits for a `rate` token or in `limit`'s line, which the text names); at the end
  /// `name` and `policy` (the policy written back in the language).
  package static func jsonValue(_ policy: CompiledPolicy) -> JSONValue {
    var members = [JSONMember("rules", .array(policy.rules.map(jsonValue)))]
    // One member for each policy-wide clause, null when absent, in the clause table's order.
    for clause in Clause.allCases {
      switch clause {
      case .within: members.append(JSONMember("within", .seconds(policy.deadline)))
      case .timeout: members.append(JSONMember("timeout", .seconds(policy.attemptTimeout)))
      case .budget:
        members.append(JSONMember("budget", policy.budgetRatio.map(JSONValue.double) ?? .null))
      case .hedge: members.append(JSONMember("hedge", hedgeJSON(policy.hedge)))
      case .breaker: members.append(JSONMember("breaker", breakerJSON(policy.breaker)))
      case .limit: members.append(JSONMember("limit", limitJSON(policy.limit)))
      case .throttle:
        members.append(JSONMember("throttle", throttleJSON(policy.throttle)))
      case .rate: members.append(JSONMember("rate", rateJSON(policy.rate)))
      // Rule clauses are members of each rule's object.
      case .on, .except, .immediately, .delay, .backoff, .delays, .jitter, .max, .after,
        .honoringRetryAfter:
        continue
      }
    }
    members.append(JSONMember("name", .string(policy.name)))
    members.append(JSONMember("policy", .string(policyLines(policy).joined(separator: "\n"))))
    return .object(members)
  }

  /// One rule of `explain --json`.
  package static func jsonValue(_ rule: RetryRule) -> JSONValue {
    let limit = rule.behavior.maxCount.map { min($0, finiteScheduleLimit) } ?? foreverScheduleLimit
    let schedule = rule.schedule(limit: limit)
    let rows: [JSONValue] = schedule.entries.map { entry in
      .object([
        JSONMember("retry", .int(entry.retry)),
        JSONMember("delay", .seconds(entry.delay)),
        JSONMember("min", .seconds(entry.minimum)),
        JSONMember("max", .seconds(entry.maximum)),
      ])
    }
    return .object([
      JSONMember("on", .array(rule.errorClasses.map(JSONValue.string))),
      JSONMember("except", .array(rule.excludedClasses.map(JSONValue.string))),
      JSONMember("behavior", jsonValue(rule.behavior)),
      JSONMember("jitter", rule.jitter.map(jsonValue) ?? .null),
      JSONMember("max", .seconds(rule.maxDelay)),
      JSONMember("schedule", .array(rows)),
      JSONMember("truncated", .bool(schedule.isTruncated)),
      JSONMember("hook", .string(rule.hook)),
      JSONMember("honorsRetryAfter", .bool(rule.honorsRetryAfter)),
      JSONMember("worstCaseTotal", .seconds(schedule.worstCaseTotal)),
    ])
  }

  /// A behavior as `{"kind": …, "maxCount": …, …}`, fields by kind as in the contract.
  package static func jsonValue(_ behavior: RepeatBehavior) -> JSONValue {
    var members = [
      JSONMember("kind", .string(behavior.kindName)),
      JSONMember("maxCount", behavior.maxCount.map(JSONValue.int) ?? .null),
    ]
    switch behavior {
    case .immediate:
      break
    case .delayed(_, let delay):
      members.append(JSONMember("delay", .seconds(delay)))
    case .exponential(_, let initial, let multiplier):
      members.append(JSONMember("initial", .seconds(initial)))
      members.append(JSONMember("multiplier", .double(multiplier)))
    case .linear(_, let initial, let increment):
      members.append(JSONMember("initial", .seconds(initial)))
      members.append(JSONMember("increment", .seconds(increment)))
    case .customTimerDelayed(_, let delays):
      members.append(JSONMember("delays", .array(delays.map { JSONValue.seconds($0) })))
    }
    return .object(members)
  }

  /// A jitter as `{"kind": "proportional", "fraction": 0.1}` or `{"kind": "full"}`.
  package static func jsonValue(_ jitter: Jitter) -> JSONValue {
    var members = [JSONMember("kind", .string(jitter.kindName))]
    if case .proportional(let fraction) = jitter {
      members.append(JSONMember("fraction", .double(fraction)))
    }
    return .object(members)
  }

  /// The `explain --json` text: pretty-printed, two-space indent, with a final line end.
  package static func json(_ policy: CompiledPolicy) -> String {
    JSONWriter().write(jsonValue(policy)) + "\n"
  }
}

/// Optional ANSI emphasis for headings.
struct TextStyle: Sendable {
  var usesColor: Bool

  func bold(_ text: String) -> String {
    usesColor ? "\u{1B}[1m" + text + "\u{1B}[0m" : text
  }
}
