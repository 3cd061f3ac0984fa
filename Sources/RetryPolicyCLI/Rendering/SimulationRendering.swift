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
    for attempt in timeline.attempts {
      var decision: String
      var wait = ""
      switch attempt.decision {
      case .succeeded:
        decision = "succeeded"
      case .retry(let rule, let retry, let limit, let delay):
        decision = "retry \(retry) of \(limit.map(String.init) ?? "∞")"
        if timeline.policy.rules.count > 1 { decision += " (rule \(rule))" }
        wait = millisecondsText(delay)
      case .gaveUp(let reason):
        decision = "gave up: " + reason
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
    output += "\n" + style.bold("result:") + " " + resultText(timeline) + "\n"
    return output
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
  /// "start", "end", "outcome", "decision", "rule", "retry", "wait", "reason"}],
  /// "result": {"succeeded", "attempts", "elapsed", "error"}}`.
  static func jsonValue(_ timeline: SimulationTimeline) -> JSONValue {
    let attempts: [JSONValue] = timeline.attempts.map { attempt in
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
      case .gaveUp(let reason):
        members.append(JSONMember("decision", .string("gaveUp")))
        members.append(JSONMember("reason", .string(reason)))
      }
      return .object(members)
    }
    return .object([
      JSONMember(
        "policy", .string(ExplainRendering.policyLines(timeline.policy).joined(separator: "\n"))),
      JSONMember("outcomes", .string(timeline.script.text)),
      JSONMember("seed", .number(String(timeline.seed))),
      JSONMember("attempts", .array(attempts)),
      JSONMember(
        "result",
        .object([
          JSONMember("succeeded", .bool(timeline.succeeded)),
          JSONMember("attempts", .int(timeline.attempts.count)),
          JSONMember("elapsed", .seconds(timeline.elapsed)),
          JSONMember("error", .string(timeline.error)),
          JSONMember("cutShort", .bool(timeline.isCutShort)),
        ])),
    ])
  }
}
