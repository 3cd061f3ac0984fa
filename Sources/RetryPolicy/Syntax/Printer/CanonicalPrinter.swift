/// Prints syntax trees in the one canonical form the formatter writes.
///
/// The canonical form has single spaces between clauses, clauses in the order written, lists
/// as `a, b`, growth as `x1.5` or `+2s`, percentages as `10%`, and numbers without leading
/// zeros or trailing fraction zeros (`01.50s` is `1.5s`), units as written. A file prints
/// `policy NAME = RULE` for one-line policies and blocks with 4-space-indented lines and `}`
/// on its own line, one blank line between policies. Comments are kept: a comment on a line of
/// its own stays on a line of its own before what followed it; a comment after a line's
/// content stays at the end of that line, after two spaces.
///
/// Parsing the printed text gives the same tree up to source ranges and number spelling, and
/// printing is idempotent.
package enum CanonicalPrinter {
  /// The indentation of a block's lines.
  static let indentation = "    "

  /// The whole file in canonical form, comments kept, ending with a line end.
  package static func print(_ file: SourceFileSyntax) -> String {
    var comments = CommentCursor(file.comments)
    var output: [String] = []
    for (index, policy) in file.policies.enumerated() {
      if index > 0 { output.append("") }
      output += comments.ownLine(before: policy.range.start.line)
      let name = policy.name.text
      if policy.form == .line, policy.body.lines.count == 1, let line = policy.body.lines.first {
        let text = "\(Keyword.policy.text) \(name) = \(print(line))"
        output.append(text + comments.trailing(through: policy.range.end.line))
        continue
      }
      output.append(
        "\(Keyword.policy.text) \(name) {" + comments.trailing(through: policy.range.start.line))
      for line in policy.body.lines {
        output += comments.ownLine(before: line.range.start.line).map(indented)
        output.append(
          indentation + print(line) + comments.trailing(through: line.range.end.line))
      }
      output += comments.ownLine(before: policy.range.end.line, gapAfter: false).map(indented)
      output.append("}" + comments.trailing(through: policy.range.end.line))
    }
    let rest = comments.remaining()
    if !rest.isEmpty {
      if !output.isEmpty { output.append("") }
      output += rest
    }
    return output.isEmpty ? "" : output.joined(separator: "\n") + "\n"
  }

  /// A line of a block, indented; a blank line stays empty.
  private static func indented(_ text: String) -> String {
    text.isEmpty ? "" : indentation + text
  }

  /// One policy's text in canonical form, comments kept, one line a rule, no final line end.
  package static func print(_ body: PolicyBodySyntax, comments: [CommentSyntax] = []) -> String {
    var cursor = CommentCursor(comments)
    var output: [String] = []
    for line in body.lines {
      output += cursor.ownLine(before: line.range.start.line)
      output.append(print(line) + cursor.trailing(through: line.range.end.line))
    }
    output += cursor.remaining()
    return output.joined(separator: "\n")
  }

  /// One line of a policy in canonical form: `retry 5 on serverError backoff 1s x1.5`.
  package static func print(_ line: LineSyntax) -> String {
    var parts: [String] = []
    if let head = line.head {
      let retry = Keyword.retry.text
      switch head.count {
      case .times(let count?): parts.append("\(retry) \(count)")
      case .times(nil): parts.append(retry)
      case .forever: parts.append("\(retry) \(Keyword.forever.text)")
      }
    }
    for clause in line.clauses {
      parts.append(print(clause))
    }
    return parts.joined(separator: " ")
  }

  /// One clause in canonical form: `backoff 1s x1.5`.
  package static func print(_ clause: ClauseSyntax) -> String {
    let arguments = printArguments(of: clause)
    return arguments.isEmpty ? clause.keyword : clause.keyword + " " + arguments
  }

  /// A clause's arguments in canonical form (`1s x1.5`); empty for a clause without any.
  ///
  /// Each is printed by its shape, after its word (`over 30s`). The words of the clause's keywords (`retry-after`) are
  /// part of `clause.keyword`.
  static func printArguments(of clause: ClauseSyntax) -> String {
    var parts: [String] = []
    for (index, argument) in clause.clause.spec.arguments.enumerated() {
      guard let value = clause.argument(index), case let text = print(value), !text.isEmpty
      else { continue }
      parts.append(argument.word.map { "\($0) \(text)" } ?? text)
    }
    return parts.joined(separator: " ")
  }

  /// One argument's value in canonical form: `1.5s`, `x1.5`, `10%`, `a, b`.
  static func print(_ value: ArgumentSyntax) -> String {
    switch value {
    case .word: ""
    case .count(let number): normalizedNumber(number.text)
    case .duration(let duration): print(duration)
    case .durations(let durations): durations.map(print).joined(separator: ", ")
    case .percent(let percent): "\(normalizedNumber(percent.text))%"
    case .factor(let factor): "\(Keyword.x.text)\(normalizedNumber(factor.text))"
    case .increment(let increment): "+\(print(increment))"
    case .names(let names): names.map(\.text).joined(separator: ", ")
    case .name(let name): name.text
    case .rate(let number, let period): "\(normalizedNumber(number.text))/\(period.rawValue)"
    case .jitter(let jitter):
      switch jitter.kind {
      case .percent(let percent): "\(normalizedNumber(percent.text))%"
      case .full: Keyword.full.text
      case .equal: Keyword.equal.text
      case .decorrelated: Keyword.decorrelated.text
      }
    }
  }

  /// A duration in canonical form: the number normalized, the unit as written.
  static func print(_ duration: DurationLiteralSyntax) -> String {
    normalizedNumber(duration.number) + duration.unit.rawValue
  }

  /// Digits without leading zeros or trailing fraction zeros: `01.50` is `1.5`, `2.0` is `2`.
  package static func normalizedNumber(_ text: String) -> String {
    let utf8 = Array(text.utf8)
    let point = utf8.firstIndex(of: UInt8(ascii: ".")) ?? utf8.count
    var wholeStart = 0
    while wholeStart < point - 1, utf8[wholeStart] == UInt8(ascii: "0") { wholeStart += 1 }
    var fractionEnd = utf8.count
    while fractionEnd > point + 1, utf8[fractionEnd - 1] == UInt8(ascii: "0") { fractionEnd -= 1 }
    var result = Array(utf8[wholeStart..<point])
    if result.isEmpty { result = [UInt8(ascii: "0")] }
    if fractionEnd > point + 1 {
      result += utf8[point..<fractionEnd]
    }
    return String(decoding: result, as: UTF8.self)
  }
}

/// Hands out comments in the order of the text, as own-line or trailing comments.
private struct CommentCursor {
  private let comments: [CommentSyntax]
  private var index = 0

  init(_ comments: [CommentSyntax]) {
    self.comments = comments
  }

  /// The comments that start on a line before `line`, each on a line of its own.
  ///
  /// A blank line in the text between two of these comments, or between the last of them and
  /// `line`, stays as one blank line (`""`), so paragraphs of comments keep their shape. With
  /// `gapAfter` false, no blank line is kept after the last comment (before a closing brace).
  mutating func ownLine(before line: Int, gapAfter: Bool = true) -> [String] {
    var result: [String] = []
    var previousLine: Int?
    while index < comments.count, comments[index].range.start.line < line {
      let commentLine = comments[index].range.start.line
      if let previousLine, commentLine - previousLine > 1 { result.append("") }
      result.append(Self.trimmed(comments[index].text))
      previousLine = commentLine
      index += 1
    }
    if gapAfter, let previousLine, line != Int.max, line - previousLine > 1 { result.append("") }
    return result
  }

  /// The comment that ends the content of lines up to `line`, with two spaces before it.
  mutating func trailing(through line: Int) -> String {
    var result = ""
    while index < comments.count, comments[index].range.start.line <= line {
      result += "  " + Self.trimmed(comments[index].text)
      index += 1
    }
    return result
  }

  /// A comment without the blanks at its end.
  static func trimmed(_ text: String) -> String {
    var end = text.utf8.endIndex
    while end > text.utf8.startIndex {
      let before = text.utf8.index(before: end)
      let byte = text.utf8[before]
      guard byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") else { break }
      end = before
    }
    return String(text[..<end])
  }

  /// Every comment not handed out yet.
  mutating func remaining() -> [String] {
    ownLine(before: Int.max)
  }
}
