import Foundation
import RetryPolicy

/// The REPL's `:ast`: a syntax tree as an indented outline, each node with its source range.
///
///     policy payments  1:1-4:2
///       line  2:3-2:45
///         retry 5  2:3-2:10
///         on  2:11-2:25
///           name serverError  2:14-2:25
enum ReplSyntaxDump {
  /// The outline of a whole tree.
  static func dump(_ file: SourceFileSyntax) -> String {
    var lines: [String] = []
    if file.policies.isEmpty { lines.append("(no policies)  \(file.range)") }
    for policy in file.policies {
      let name = policy.name.text.isEmpty ? "(typed)" : policy.name.text
      let form = policy.name.text.isEmpty ? "" : policy.form == .block ? " {…}" : " = …"
      lines.append("\(Keyword.policy.text) \(name)\(form)  \(policy.range)")
      for line in policy.body.lines {
        append(line, depth: 1, to: &lines)
      }
    }
    for comment in file.comments {
      lines.append("comment \(quoted(comment.text))  \(comment.range)")
    }
    return lines.joined(separator: "\n") + "\n"
  }

  private static func append(_ line: LineSyntax, depth: Int, to lines: inout [String]) {
    let indent = String(repeating: "  ", count: depth)
    lines.append("\(indent)line  \(line.range)")
    if let head = line.head {
      let count: String
      switch head.count {
      case .times(let number?): count = "\(number)"
      case .times(nil): count = "(too large)"
      case .forever: count = Keyword.forever.text
      }
      lines.append("\(indent)  retry \(count)  \(head.range)")
    }
    for clause in line.clauses {
      lines.append("\(indent)  \(clause.keyword)  \(clause.range)")
      for argument in arguments(of: clause) {
        lines.append("\(indent)    \(argument)")
      }
    }
  }

  private static func arguments(of clause: ClauseSyntax) -> [String] {
    switch clause.kind {
    case .on(let names), .except(let names):
      return names.map(name)
    case .immediately, .honoringRetryAfter:
      return []
    case .delay(let duration), .max(let duration), .within(let duration),
      .timeout(let duration):
      return [self.duration(duration)]
    case .backoff(let initial, let growth):
      var result = [self.duration(initial)]
      switch growth {
      case .factor(let factor)?: result.append("factor \(factor.text)  \(factor.range)")
      case .increment(let increment)?: result.append("increment " + self.duration(increment))
      case nil: break
      }
      return result
    case .delays(let durations):
      return durations.map(duration)
    case .jitter(let jitter):
      switch jitter.kind {
      case .percent(let number): return ["percent \(number.text)%  \(jitter.range)"]
      case .full: return ["full  \(jitter.range)"]
      case .equal: return ["equal  \(jitter.range)"]
      case .decorrelated: return ["decorrelated  \(jitter.range)"]
      }
    case .after(let hook):
      return [name(hook)]
    case .budget(let number):
      return ["percent \(number.text)%  \(number.range)"]
    case .hedge(let hedge):
      return [
        "count \(hedge.count.map(String.init) ?? "?")  \(hedge.countRange)",
        duration(hedge.delay),
      ]
    case .breaker(let breaker):
      var result = ["percent \(breaker.percent.text)%  \(breaker.percent.range)"]
      if let window = breaker.window { result.append("over " + duration(window)) }
      if let minimum = breaker.minimum {
        result.append("min \(minimum.text)  \(minimum.range)")
      }
      if let open = breaker.openDuration { result.append("for " + duration(open)) }
      return result
    }
  }

  private static func name(_ name: NameSyntax) -> String {
    "name \(name.text)  \(name.range)"
  }

  private static func duration(_ duration: DurationLiteralSyntax) -> String {
    "duration \(duration.text)  \(duration.range)"
  }

  private static func quoted(_ text: String) -> String {
    "\"" + text.replacingOccurrences(of: "\"", with: "\\\"") + "\""
  }
}
