import RetryPolicy

// Hover, quick fixes, formatting and document symbols: each a pure function of an open
// document (its text and its analysis) and the request's parameters.

extension LanguageServer {
  /// Answers `textDocument/hover` with an explain table as Markdown.
  ///
  /// On a policy's name, the table of the policy; on a rule, that of the rule (with the
  /// policy's policy-wide clauses). Null elsewhere.
  func hover(_ open: OpenDocument, params: HoverRequest) -> Hover? {
    let position = params.position
    let offset = open.document.offset(of: position)
    let syntax = open.analysis.syntax
    guard
      let declaration = syntax.policies.first(where: {
        $0.range.start.offset <= offset && offset <= $0.range.end.offset
      })
    else { return nil }
    let name = declaration.name.text
    let compiled = open.analysis.policies.first { $0.name == name }
    var heading = "policy `\(name)`"
    var range = declaration.name.range
    var policy = compiled
    let onName =
      declaration.name.range.start.offset <= offset && offset <= declaration.name.range.end.offset
    if !onName {
      let ruleLines = declaration.body.lines.filter { $0.head != nil }
      guard
        let index = ruleLines.firstIndex(where: {
          $0.range.start.offset <= offset && offset <= $0.range.end.offset
        })
      else { return nil }
      heading = "rule \(index + 1) of policy `\(name)`"
      range = ruleLines[index].range
      if let compiled, index < compiled.rules.count {
        policy = CompiledPolicy(
          name: compiled.name, rules: [compiled.rules[index]], deadline: compiled.deadline,
          attemptTimeout: compiled.attemptTimeout, budgetRatio: compiled.budgetRatio)
      }
    }
    let body: String
    if let policy {
      body = "```text\n" + ExplainRendering.text(policy) + "```"
    } else {
      body = "The policy has errors: fix them to see its delays."
    }
    let markdown = "**\(heading)**\n\n" + body
    return Hover(
      contents: MarkupContent(kind: "markdown", value: markdown),
      range: open.document.range(of: range))
  }

  /// `textDocument/codeAction`: a quick fix for every did-you-mean suggestion of a diagnostic
  /// within the requested range.
  func codeActions(_ open: OpenDocument, params: CodeActionRequest) -> [CodeAction] {
    let document = open.document
    let start = params.range.map { document.offset(of: $0.start) } ?? 0
    let end = params.range.map { document.offset(of: $0.end) } ?? document.bytes.count
    var actions: [CodeAction] = []
    for diagnostic in open.analysis.diagnostics {
      guard diagnostic.range.start.offset <= end, diagnostic.range.end.offset >= start,
        let fix = Self.quickFix(for: diagnostic, in: document)
      else { continue }
      let edit = TextEdit(range: TextDocument.range(fix.start, fix.end), newText: fix.replacement)
      actions.append(
        CodeAction(
          title: "Replace '\(fix.original)' with '\(fix.replacement)'",
          kind: "quickfix",
          diagnostics: [Self.diagnostic(diagnostic, in: document)],
          isPreferred: true,
          edit: .init(changes: [document.uri: [edit]])))
    }
    return actions
  }

  /// The edit a diagnostic's `did you mean 'X'?` suggests: its range's text becomes X.
  ///
  /// A unit suggestion that is a whole duration (`2d` → `48h`) replaces the number too.
  static func quickFix(for diagnostic: Diagnostic, in document: TextDocument) -> (
    start: TextDocument.Position, end: TextDocument.Position, original: String,
    replacement: String
  )? {
    let marker = "did you mean '"
    guard let found = diagnostic.message.range(of: marker, options: .backwards) else {
      return nil
    }
    let rest = diagnostic.message[found.upperBound...]
    guard let close = rest.range(of: "'?") else { return nil }
    let replacement = String(rest[..<close.lowerBound])
    var start = document.offset(of: document.position(of: diagnostic.range.start))
    let end = document.offset(of: document.position(of: diagnostic.range.end))
    guard start < end, !replacement.isEmpty else { return nil }
    if diagnostic.id == .unknownUnit, replacement.first?.isNumber == true {
      while start > 0,
        document.bytes[start - 1] == UInt8(ascii: ".")
          || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(document.bytes[start - 1])
      {
        start -= 1
      }
    }
    return (
      document.position(ofOffset: start), document.position(ofOffset: end),
      document.text(start, end), replacement
    )
  }

  /// `textDocument/formatting`: the canonical text as one edit of the whole document; no
  /// edit when the text is already canonical or has errors.
  func formatting(_ open: OpenDocument, params: DocumentFormattingRequest) -> [TextEdit] {
    guard case .formatted(let formatted) = FormatCommand.format(bytes: open.document.bytes),
      formatted != open.document.text
    else { return [] }
    return [TextEdit(range: open.document.wholeRange, newText: formatted)]
  }

  /// `textDocument/documentSymbol`: the policies of the file with their ranges.
  func symbols(_ open: OpenDocument, params: DocumentSymbolRequest) -> [DocumentSymbol] {
    let document = open.document
    return open.analysis.syntax.policies.map { declaration in
      let rules = declaration.body.lines.filter { $0.head != nil }.count
      return DocumentSymbol(
        name: declaration.name.text,
        detail: rules == 1 ? "1 rule" : "\(rules) rules",
        kind: 2,
        range: document.range(of: declaration.range),
        selectionRange: document.range(of: declaration.name.range))
    }
  }
}
