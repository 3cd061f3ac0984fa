import Testing

@testable import RetryPolicy

/// Builds syntax trees by hand for the checker's tests, independent of the parser.
///
/// Reads a strict, simple form: words separated by single spaces, lines by `\n`, names in
/// lists written `a, b`. A duration or number written `?` (as in `?s`) stands for one the
/// parser could not read (nil value). Ranges are those the real text would have (ASCII only).
enum SyntaxBuilder {
  private struct Word {
    var text: Substring
    var range: SourceRange
    var isFollowedByComma = false
  }

  /// The body of a policy written in the simple form.
  static func body(_ text: String) -> PolicyBodySyntax {
    var lines: [LineSyntax] = []
    var offset = 0
    for (index, lineText) in text.split(separator: "\n", omittingEmptySubsequences: false)
      .enumerated()
    {
      let words = split(lineText, line: index + 1, offset: offset)
      offset += lineText.utf8.count + 1
      // The frame of a block (`policy NAME {`, `}`) is not part of a body.
      if let first = words.first?.text, first != "policy", first != "}" {
        lines.append(line(words))
      }
    }
    let start = lines.first?.range.start ?? .start
    let end = lines.last?.range.end ?? .start
    return PolicyBodySyntax(lines: lines, range: SourceRange(start: start, end: end))
  }

  /// A file of `policy NAME { … }` blocks, each given as a name and a body text; the blocks'
  /// lines are laid out one after another, each block on its own lines.
  static func file(_ policies: [(name: String, body: String)]) -> SourceFileSyntax {
    var declarations: [PolicyDeclarationSyntax] = []
    var text = ""
    var ranges: [(name: SourceRange, lines: ClosedRange<Int>)] = []
    for (name, body) in policies {
      let firstLine = text.split(separator: "\n", omittingEmptySubsequences: false).count
      let nameStart = SourceLocation(line: firstLine, column: 8, offset: text.utf8.count + 7)
      let nameEnd = SourceLocation(
        line: firstLine, column: 8 + name.count, offset: nameStart.offset + name.utf8.count)
      text += "policy \(name) {\n" + body + "\n}\n"
      let lastLine = text.split(separator: "\n", omittingEmptySubsequences: false).count - 1
      ranges.append((SourceRange(start: nameStart, end: nameEnd), firstLine...lastLine))
    }
    let whole = Self.body(text)
    for ((name, _), (nameRange, lineRange)) in zip(policies, ranges) {
      let lines = whole.lines.filter { lineRange.contains($0.range.start.line) }
      let bodyRange = SourceRange(
        start: lines.first?.range.start ?? nameRange.end,
        end: lines.last?.range.end ?? nameRange.end)
      declarations.append(
        PolicyDeclarationSyntax(
          name: NameSyntax(text: name, range: nameRange), form: .block,
          body: PolicyBodySyntax(lines: lines, range: bodyRange),
          range: SourceRange(start: nameRange.start, end: bodyRange.end)))
    }
    return SourceFileSyntax(policies: declarations, comments: [], range: whole.range)
  }

  private static func split(_ text: Substring, line: Int, offset: Int) -> [Word] {
    var words: [Word] = []
    var column = 1
    var byte = offset
    for piece in text.split(separator: " ", omittingEmptySubsequences: false) {
      if !piece.isEmpty {
        var word = piece
        let hasComma = word.hasSuffix(",")
        if hasComma { word.removeLast() }
        let start = SourceLocation(line: line, column: column, offset: byte)
        let end = SourceLocation(
          line: line, column: column + word.count, offset: byte + word.utf8.count)
        words.append(
          Word(
            text: word, range: SourceRange(start: start, end: end), isFollowedByComma: hasComma))
      }
      column += piece.count + 1
      byte += piece.utf8.count + 1
    }
    return words
  }

  private static func line(_ words: [Word]) -> LineSyntax {
    var index = 0
    var head: RetryHeadSyntax?
    if words.first?.text == "retry", words.count > 1 {
      let count = words[1]
      let value: RetryHeadSyntax.Count =
        count.text == "forever" ? .forever : .times(Int(count.text))
      head = RetryHeadSyntax(
        count: value, countRange: count.range, range: words[0].range.union(count.range))
      index = 2
    }
    var clauses: [ClauseSyntax] = []
    while index < words.count {
      let keyword = words[index]
      index += 1
      func names() -> [NameSyntax] {
        var names: [NameSyntax] = []
        while index < words.count {
          let word = words[index]
          names.append(NameSyntax(text: String(word.text), range: word.range))
          index += 1
          if !word.isFollowedByComma { break }
        }
        return names
      }
      func durations() -> [DurationLiteralSyntax] {
        var literals: [DurationLiteralSyntax] = []
        while index < words.count {
          let word = words[index]
          literals.append(duration(word))
          index += 1
          if !word.isFollowedByComma { break }
        }
        return literals
      }
      func next() -> Word {
        defer { index += 1 }
        return words[index]
      }
      let clause: Clause
      var arguments: [ArgumentSyntax?]
      switch keyword.text {
      case "on": (clause, arguments) = (.on, [.names(names())])
      case "except": (clause, arguments) = (.except, [.names(names())])
      case "immediately": (clause, arguments) = (.immediately, [])
      case "delay": (clause, arguments) = (.delay, [.duration(duration(next()))])
      case "delays": (clause, arguments) = (.delays, [.durations(durations())])
      case "backoff":
        let initial = duration(next())
        var growth: ArgumentSyntax?
        if index < words.count, words[index].text.hasPrefix("x") {
          growth = .factor(number(next(), dropFirst: 1))
        } else if index < words.count, words[index].text.hasPrefix("+") {
          var word = next()
          word.text.removeFirst()
          word.range.start.column += 1
          word.range.start.offset += 1
          growth = .increment(duration(word))
        }
        (clause, arguments) = (.backoff, [.duration(initial), growth])
      case "jitter":
        let argument = next()
        let jitter: JitterSyntax
        switch argument.text {
        case "full": jitter = JitterSyntax(kind: .full, range: argument.range)
        case "equal": jitter = JitterSyntax(kind: .equal, range: argument.range)
        case "decorrelated": jitter = JitterSyntax(kind: .decorrelated, range: argument.range)
        default: jitter = JitterSyntax(kind: .percent(percent(argument)), range: argument.range)
        }
        (clause, arguments) = (.jitter, [.jitter(jitter)])
      case "max": (clause, arguments) = (.max, [.duration(duration(next()))])
      case "after":
        let name = NameSyntax(text: String(next().text), range: words[index - 1].range)
        (clause, arguments) = (.after, [.name(name)])
      case "honoring":
        index += 1
        (clause, arguments) = (.honoringRetryAfter, [.word])
      case "within": (clause, arguments) = (.within, [.duration(duration(next()))])
      case "timeout": (clause, arguments) = (.timeout, [.duration(duration(next()))])
      case "budget": (clause, arguments) = (.budget, [.percent(percent(next()))])
      case "breaker":
        arguments = [.percent(percent(next())), nil, nil, nil]
        if index < words.count, words[index].text == "over" {
          index += 1
          arguments[1] = .duration(duration(next()))
        }
        if index < words.count, words[index].text == "min" {
          index += 1
          arguments[2] = .count(number(next(), dropFirst: 0))
        }
        if index < words.count, words[index].text == "for" {
          index += 1
          arguments[3] = .duration(duration(next()))
        }
        clause = .breaker
      default:
        Issue.record("the builder does not know '\(keyword.text)'")
        (clause, arguments) = (.immediately, [])
      }
      let end = index > 0 ? words[index - 1].range.end : keyword.range.end
      clauses.append(
        ClauseSyntax(
          clause: clause, arguments: arguments, keywordRange: keyword.range,
          range: SourceRange(start: keyword.range.start, end: end)))
    }
    let range = SourceRange(
      start: words.first?.range.start ?? .start, end: words.last?.range.end ?? .start)
    return LineSyntax(head: head, clauses: clauses, range: range)
  }

  private static func number(_ word: Word, dropFirst: Int) -> NumberLiteralSyntax {
    var range = word.range
    range.start.column += dropFirst
    range.start.offset += dropFirst
    let text = String(word.text.dropFirst(dropFirst))
    return NumberLiteralSyntax(text: text, value: Double(text), range: range)
  }

  private static func percent(_ word: Word) -> NumberLiteralSyntax {
    let text = String(word.text.dropLast())  // the `%`
    var range = word.range
    range.end.column -= 1
    range.end.offset -= 1
    return NumberLiteralSyntax(text: text, value: Double(text), range: range)
  }

  /// `250ms`, `1.5s`, `2m`, `1h`; `?s` for an unreadable one.
  private static func duration(_ word: Word) -> DurationLiteralSyntax {
    let text = word.text
    let unit: DurationUnit
    let number: Substring
    if text.hasSuffix("ms") {
      unit = .milliseconds
      number = text.dropLast(2)
    } else {
      unit = DurationUnit(rawValue: String(text.suffix(1))) ?? .seconds
      number = text.dropLast()
    }
    let scale: Double =
      switch unit {
      case .milliseconds: 0.001
      case .seconds: 1
      case .minutes: 60
      case .hours: 3600
      }
    let duration = Double(number).map { Duration.seconds($0 * scale) }
    return DurationLiteralSyntax(
      number: String(number), unit: unit, duration: duration, range: word.range)
  }
}
