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

  /// The arguments of a clause, each by its shape, after its word (`over duration 30s …`).
  private static func arguments(of clause: ClauseSyntax) -> [String] {
    var result: [String] = []
    for (index, argument) in clause.clause.spec.arguments.enumerated() {
      guard let value = clause.argument(index) else { continue }
      let prefix = argument.word.map { $0 + " " } ?? ""
      switch value {
      case .word: break
      case .count(let number):
        result.append("\(argument.word ?? "count") \(number.text)  \(number.range)")
      case .duration(let literal): result.append(prefix + duration(literal))
      case .durations(let literals): result += literals.map(duration)
      case .percent(let number): result.append("percent \(number.text)%  \(number.range)")
      case .factor(let number): result.append("factor \(number.text)  \(number.range)")
      case .increment(let literal): result.append("increment " + duration(literal))
      case .names(let names): result += names.map(name)
      case .name(let hook): result.append(name(hook))
      case .rate(let number, let period):
        result.append("rate \(number.text)/\(period.rawValue)  \(number.range)")
      case .jitter(let jitter):
        switch jitter.kind {
        case .percent(let number): result.append("percent \(number.text)%  \(jitter.range)")
        case .full: result.append("full  \(jitter.range)")
        case .equal: result.append("equal  \(jitter.range)")
        case .decorrelated: result.append("decorrelated  \(jitter.range)")
        }
      }
    }
    return result
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
