import RetryPolicy
import RetryPolicyEngines
import RetryPolicySimulation

/// Text and JSON of a simulated run.
enum SimulationRendering {
  /// The timeline as a table, then the result.
  ///
  /// For example:
  ///
  ///     policy: retry 3 on serverError backoff 1s x2
  ///     outcomes: serverError*2, ok (seed 7)
  ///
  ///     attempt  start  outcome      decision               wait
  ///           1  0s     serverError  retry 1 of 3 (rule 1)  1s
  ///           2  1s     serverError  retry 2 of 3 (rule 1)  2s
  ///           3  3s     ok           succeeded
  ///
  ///     result: succeeded on attempt 3 after 3s
  static func text(_ timeline: SimulationTimeline, usesColor: Bool = false) -> String {
    let style = TextStyle(usesColor: usesColor)
    var output = ""
    let lines = ExplainRendering.policyLines(timeline.policy)
    let title =
      timeline.policy.name.map { "\(Keyword.policy.text) \($0):" } ?? Keyword.policy.text + ":"
    if lines.count == 1 {
      output += style.bold(title) + " " + lines[0] + "\n"
    } else {
      output += style.bold(title) + "\n" + lines.map { "  " + $0 + "\n" }.joined()
    }
    output += style.bold("outcomes:") + " \(timeline.script.text) (seed \(timeline.seed))\n\n"
    var rows: [[String]] = [["attempt", "start", "outcome", "decision", "wait"]]
    for (index, attempt) in timeline.attempts.enumerated() {
      var decision: String
      var wait = ""
      switch attempt.decision {
      case .succeeded:
        decision = "succeeded"
      case .retry(let rule, let retry, let limit, let delay):
        decision = "retry \(retry) of \(limit.map(String.init) ?? "∞")"
        if timeline.policy.rules.count > 1 { decision += " (rule \(rule))" }
        wait = millisecondsText(delay)
        if let admission = admissionWait(after: index, in: timeline),
          let stage = admissionStage(of: timeline.policy)
        {
          wait += " + " + millisecondsText(admission) + " " + stage
        }
      case .gaveUp(let reason):
        decision = "gave up: " + reason
      case .retryRefused(let rule, let retry, let limit, let delay, let reason):
        // The retry waited its delay, then its attempt was refused: the wait is shown, as
        // the elapsed time counts it.
        decision = "retry \(retry) of \(limit.map(String.init) ?? "∞")"
        if timeline.policy.rules.count > 1 { decision += " (rule \(rule))" }
        decision += ", then gave up: " + reason
        wait = millisecondsText(delay)
      }
      rows.append([
        String(attempt.number), millisecondsText(attempt.start), attempt.outcome,
        decision, wait,
      ])
    }
    let widths = (0..<5).map { column in rows.map { $0[column].count }.max() ?? 0 }
    for (index, cells) in rows.enumerated() {
      var line = String(repeating: " ", count: widths[0] - cells[0].count) + cells[0]
      for column in 1..<cells.count {
        let isLast = column == cells.count - 1
        let padding = String(repeating: " ", count: widths[column] - cells[column].count)
        line += "  " + cells[column] + (isLast ? "" : padding)
      }
      while line.hasSuffix(" ") { line.removeLast() }
      output += (index == 0 ? style.bold(line) : line) + "\n"
    }
    if timeline.isCutShort {
      output += "… (stopped after \(timeline.attempts.count) attempts)\n"
    }
    if let hedge = timeline.hedgeNotApplied {
      output += "\n" + style.bold("note:") + " " + hedgeNote(hedge) + "\n"
    }
    output += "\n" + style.bold("result:") + " " + resultText(timeline) + "\n"
    return output
  }

  /// The time the retry after attempt `index` waited beyond its rule's delay, for its
  /// `rate` token or its place in `limit`'s line: what the run counts as waited; nil for none.
  static func admissionWait(after index: Int, in timeline: SimulationTimeline) -> Duration? {
    let attempts = timeline.attempts
    guard admissionStage(of: timeline.policy) != nil, index + 1 < attempts.count,
      case .retry(_, _, _, let delay) = attempts[index].decision
    else { return nil }
    let gap = attempts[index + 1].start - attempts[index].end
    return gap > delay ? gap - delay : nil
  }

  /// The stage an admission wait was for: `rate`, `queue` (of `limit N queue M`) or both;
  /// nil for a policy whose attempts never wait to start.
  static func admissionStage(of policy: CompiledPolicy) -> String? {
    var queues = false
    if case .fixed(_, let queue)? = policy.limit, queue > 0 { queues = true }
    switch (policy.rate != nil, queues) {
    case (true, true): return Keyword.rate.text + " or queue"
    case (true, false): return Keyword.rate.text
    case (false, true): return "queue"
    case (false, false): return nil
    }
  }

  /// Why a hedged policy's attempts do not overlap here: the simulation runs the policy as
  /// `run` does, which reports that it does not hedge.
  static func hedgeNote(_ hedge: HedgePolicy) -> String {
    "'\(Keyword.hedge.text) \(hedge.count) after \(hedge.delay.policyText)' not applied: the"
      + " simulation runs the policy as 'run' does, one attempt after another ('runHedged'"
      + " races them)"
  }

  /// A duration in seconds rounded to the millisecond, for the text timeline: jittered
  /// delays have nanoseconds nobody needs to read (the JSON keeps them).
  static func millisecondsText(_ duration: Duration, isReadable: Bool = false) -> String {
    let (seconds, attoseconds) = duration.components
    let milliseconds = (attoseconds + 500_000_000_000_000) / 1_000_000_000_000_000
    let rounded = Duration(
      secondsComponent: seconds, attosecondsComponent: milliseconds * 1_000_000_000_000_000)
    return isReadable
      ? ExplainRendering.readableSeconds(rounded) : ExplainRendering.secondsText(rounded)
  }

  /// `succeeded on attempt 3 after 3s` or `failed after 4 attempts in 7s: serverError`.
  static func resultText(_ timeline: SimulationTimeline) -> String {
    let count = timeline.attempts.count
    let elapsed = millisecondsText(timeline.elapsed, isReadable: true)
    if timeline.succeeded {
      return "succeeded on attempt \(count) after \(elapsed)"
    }
    if timeline.isCutShort {
      return "still retrying after \(count) attempts in \(elapsed); the simulation stopped there"
    }
    let attempts = count == 1 ? "1 attempt" : "\(count) attempts"
    return "failed after \(attempts) in \(elapsed), throwing \(timeline.error ?? "an error")"
  }

  /// The timeline as JSON: `{"policy", "outcomes", "seed", "attempts": [{"attempt",
  /// "start", "end", "outcome", "decision", "rule", "retry", "wait", "admissionWait" (only
  /// when a retry waited past its delay for `rate` or `limit`'s line), "reason" (a `gaveUp`
  /// after the wait of a scheduled retry also has its "rule", "retry" and "wait")}],
  /// "result": {"succeeded", "attempts", "elapsed", "error", "cutShort", "hedgeApplied"}}`
  /// (`hedgeApplied` only for a hedged policy: false, as `run` does not hedge).
  static func jsonValue(_ timeline: SimulationTimeline) -> JSONValue {
    let attempts: [JSONValue] = timeline.attempts.enumerated().map { index, attempt in
      var members = [
        JSONMember("attempt", .int(attempt.number)),
        JSONMember("start", .seconds(attempt.start)),
        JSONMember("end", .seconds(attempt.end)),
        JSONMember("outcome", .string(attempt.outcome)),
      ]
      switch attempt.decision {
      case .succeeded:
        members.append(JSONMember("decision", .string("succeeded")))
      case .retry(let rule, let retry, _, let delay):
        members.append(JSONMember("decision", .string("retry")))
        members.append(JSONMember("rule", .int(rule)))
        members.append(JSONMember("retry", .int(retry)))
        members.append(JSONMember("wait", .seconds(delay)))
        if let admission = admissionWait(after: index, in: timeline) {
          members.append(JSONMember("admissionWait", .seconds(admission)))
        }
      case .gaveUp(let reason):
        members.append(JSONMember("decision", .string("gaveUp")))
        members.append(JSONMember("reason", .string(reason)))
      case .retryRefused(let rule, let retry, _, let delay, let reason):
        // A gaveUp after the wait of a scheduled retry: its rule, retry and wait too.
        members.append(JSONMember("decision", .string("gaveUp")))
        members.append(JSONMember("reason", .string(reason)))
        members.append(JSONMember("rule", .int(rule)))
        members.append(JSONMember("retry", .int(retry)))
        members.append(JSONMember("wait", .seconds(delay)))
      }
      return .object(members)
    }
    // Only for a hedged policy: its attempts did not overlap.
    let hedgeMembers =
      timeline.hedgeNotApplied == nil ? [] : [JSONMember("hedgeApplied", .bool(false))]
    return .object([
      JSONMember(
        "policy", .string(ExplainRendering.policyLines(timeline.policy).joined(separator: "\n"))),
      JSONMember("outcomes", .string(timeline.script.text)),
      JSONMember("seed", .number(String(timeline.seed))),
      JSONMember("attempts", .array(attempts)),
      JSONMember(
        "result",
        .object(
          [
            JSONMember("succeeded", .bool(timeline.succeeded)),
            JSONMember("attempts", .int(timeline.attempts.count)),
            JSONMember("elapsed", .seconds(timeline.elapsed)),
            JSONMember("error", .string(timeline.error)),
            JSONMember("cutShort", .bool(timeline.isCutShort)),
          ] + hedgeMembers)),
    ])
  }
}
