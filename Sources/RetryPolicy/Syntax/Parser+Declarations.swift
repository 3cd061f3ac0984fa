// The parser's files, declarations, blocks and policy text. See `Parser.swift` for the
// parser's state and its entry points.

extension PolicyParser {
  // MARK: Files

  /// Parses a whole file into `declarations`; returns the file's range.
  mutating func parseFile() -> SourceRange {
    while true {
      while token.kind == .newline { advance() }
      if token.kind == .end { break }
      if token.keyword == .policy {
        lines = []
        if let declaration = parseDeclaration() { declarations.append(declaration) }
      } else {
        if token.kind != .error {
          let suggestion =
            token.kind == .word ? Suggestion.nearest(to: text, in: [Keyword.policy.text]) : nil
          report(.expectedPolicy(found: text, suggestion: suggestion), at: token.range)
        }
        skipToNextPolicy()
      }
    }
    return SourceRange(start: .start, end: token.range.end)
  }

  /// Parses `policy NAME = LINE` or `policy NAME { LINES }`; nil when it cannot be recorded.
  ///
  /// Ends at a line end, at the end, or at a `policy` that starts a line.
  mutating func parseDeclaration() -> PolicyDeclarationSyntax? {
    let start = token.range.start
    let diagnosticsBefore = diagnosticCount
    advance()
    var name: NameSyntax?
    if token.kind == .word, token.isIdentifier {
      name = NameSyntax(text: text, range: token.range)
      advance()
    } else if token.kind == .equals || token.kind == .leftBrace {
      report(.expectedPolicyName(), at: token.range)
    } else {
      if token.kind == .word {
        if let keyword = token.keyword {
          report(.expectedPolicyName(keyword: keyword.rawValue), at: token.range)
        } else {
          report(.invalidName(text), at: token.range)
        }
        advance()
      } else if token.kind != .error {
        report(.expectedPolicyName(), at: token.range)
      }
      if token.kind != .equals && token.kind != .leftBrace {
        skipToNextPolicy()
        return nil
      }
    }
    let shownName = name?.text ?? ""
    let form: PolicyDeclarationSyntax.Form
    var lines: [LineSyntax] = []
    let bodyStart = token.range.end
    if token.kind == .equals {
      form = .line
      advance()
      if isAtLineEnd {
        report(.expectedPolicyLine(shownName), at: token.range)
      } else {
        _ = parseLine(isPolicyText: false)
        lines = takeLines()
      }
    } else if token.kind == .leftBrace {
      form = .block
      let brace = token.range
      advance()
      isInBlock = true
      lines = parseBlockLines(name: shownName, brace: brace)
      isInBlock = false
    } else {
      if token.kind != .error {
        report(.expectedPolicyBody(shownName), at: token.range)
      }
      skipToNextPolicy()
      return nil
    }
    let bodyRange =
      lines.first.map { first in
        SourceRange(start: first.range.start, end: lines.last?.range.end ?? first.range.end)
      } ?? SourceRange(start: bodyStart, end: bodyStart)
    guard let name = consume name else { return nil }
    return PolicyDeclarationSyntax(
      name: name, form: form, body: PolicyBodySyntax(lines: consume lines, range: bodyRange),
      range: SourceRange(start: start, end: previousEnd),
      hasSyntaxErrors: diagnosticCount > diagnosticsBefore)
  }

  /// Parses the lines of a block, after its `{`, through its `}`.
  mutating func parseBlockLines(name: String, brace: SourceRange) -> [LineSyntax] {
    var isFirstLine = true
    while true {
      while token.kind == .newline {
        advance()
        isFirstLine = false
      }
      switch token.kind {
      case .rightBrace:
        advance()
        if token.kind != .newline && token.kind != .end {
          if token.kind != .error {
            report(.unexpectedToken(text, expected: "a line end after '}'"), at: token.range)
          }
          while token.kind != .newline && token.kind != .end { advance() }
        }
        return takeLines()
      case .end:
        reportUnterminated(name: name, brace: brace)
        return takeLines()
      default:
        if token.keyword == .policy && !isFirstLine {
          reportUnterminated(name: name, brace: brace)
          return takeLines()
        }
        _ = parseLine(isPolicyText: false)
        isFirstLine = false
      }
    }
  }

  mutating func reportUnterminated(name: String, brace: SourceRange) {
    let note = Diagnostic(.blockOpensHere(name), at: brace)
    let here = SourceRange(start: token.range.start, end: token.range.start)
    report(.unterminatedBlock(name), at: here, notes: [note])
  }
}

extension PolicyParser {
  // MARK: Policy text

  /// Parses the text of one policy into `lines`;
  /// returns the body's range: from the first line to the last, or empty at the end.
  mutating func parsePolicyText() -> SourceRange {
    var first: SourceLocation?
    var last = SourceLocation.start
    while true {
      while token.kind == .newline { advance() }
      if token.kind == .end { break }
      if let range = parseLine(isPolicyText: true) {
        if first == nil { first = range.start }
        last = range.end
      }
    }
    if first == nil && diagnosticCount == 0 {
      report(.emptyPolicy(), at: SourceRange(start: .start, end: .start))
    }
    guard let first else {
      let here = token.range.end
      return SourceRange(start: here, end: here)
    }
    return SourceRange(start: first, end: last)
  }
}
