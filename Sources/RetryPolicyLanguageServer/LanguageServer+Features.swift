import RetryPolicy

// Hover, quick fixes, formatting and document symbols: each a pure function of an open
// document (its text and its analysis) and the request's parameters.

extension LanguageServer {
  /// Answers `textDocument/hover` with an explain table as Markdown.
  ///
  /// On a policy's name, the table of the policy; on a rule, that of the rule (with the
  /// policy's policy-wide clauses); on a line of policy-wide clauses, the clause under the
  /// cursor as the clause table gives it (its form, what it does, its limits), then the
  /// policy's table. Null elsewhere.
  func hover(_ open: OpenDocument, params: HoverRequest) -> Hover? {
    let offset = open.document.offset(of: params.position)
    func contains(_ range: SourceRange) -> Bool {
      range.start.offset <= offset && offset <= range.end.offset
    }
    guard let declaration = open.analysis.syntax.policies.first(where: { contains($0.range) })
    else { return nil }
    let name = declaration.name.text
    // The compiled policy and its sources, when the declaration compiled.
    let checked = open.analysis.checked.first { $0.range == declaration.range }
    var heading = "\(Keyword.policy.text) `\(name)`"
    var range = declaration.name.range
    var policy = checked?.policy
    if !contains(declaration.name.range) {
      let ruleRanges =
        checked?.rules.map(\.range)
        ?? declaration.body.lines.filter { $0.head != nil }.map(\.range)
      guard let index = ruleRanges.firstIndex(where: contains) else {
        return policyWideHover(open, declaration, policy: policy, contains: contains)
      }
      heading = "rule \(index + 1) of policy `\(name)`"
      range = ruleRanges[index]
      // The policy with this rule alone: every policy-wide clause (`hedge` too) kept.
      if var single = policy, index < single.rules.count {
        single.rules = [single.rules[index]]
        policy = single
      }
    }
    let body: String
    if let policy {
      body = "```text\n" + host.explain(policy) + "```"
    } else {
      body = "The policy has errors: fix them to see its delays."
    }
    let markdown = "**\(heading)**\n\n" + body
    return Hover(
      contents: MarkupContent(kind: "markdown", value: markdown),
      range: open.document.range(of: range))
  }

  /// The hover of a line of policy-wide clauses: the clause under the cursor (or the line's
  /// first), then the whole policy's table.
  private func policyWideHover(
    _ open: OpenDocument, _ declaration: PolicyDeclarationSyntax, policy: CompiledPolicy?,
    contains: (SourceRange) -> Bool
  ) -> Hover? {
    guard
      let line = declaration.body.lines.first(where: { $0.head == nil && contains($0.range) }),
      let clause = line.clauses.first(where: { contains($0.range) }) ?? line.clauses.first
    else { return nil }
    let body =
      policy.map { "```text\n" + host.explain($0) + "```" }
      ?? "The policy has errors: fix them to see its delays."
    let markdown =
      "**`\(clause.clause.spec.form)` of policy `\(declaration.name.text)`**\n\n"
      + Self.clauseDescription(clause.clause.spec) + "\n\n" + body
    return Hover(
      contents: MarkupContent(kind: "markdown", value: markdown),
      range: open.document.range(of: clause.range))
  }

  /// What the clause table says of a clause, as Markdown: what it does, where it belongs and
  /// its limits.
  static func clauseDescription(_ spec: ClauseSpec) -> String {
    let scope: String
    switch spec.scope {
    case .rule, .ruleDelay: scope = "a rule clause"
    case .policyWide: scope = "policy-wide"
    }
    let limits = spec.limits.isEmpty ? "" : " Limits: \(spec.limits)."
    return "\(spec.summary.prefix(1).uppercased() + spec.summary.dropFirst()) (\(scope)).\(limits)"
  }

  /// `textDocument/codeAction`: a quick fix for every fix-it of a diagnostic within the
  /// requested range, built from the fix-it's edit (never from the message's text).
  func codeActions(_ open: OpenDocument, params: CodeActionRequest) -> [CodeAction] {
    let document = open.document
    let start = params.range.map { document.offset(of: $0.start) } ?? 0
    let end = params.range.map { document.offset(of: $0.end) } ?? document.bytes.count
    var actions: [CodeAction] = []
    for diagnostic in open.analysis.diagnostics
    where diagnostic.range.start.offset <= end && diagnostic.range.end.offset >= start {
      for fix in Self.quickFixes(for: diagnostic, in: document) {
        let edit = TextEdit(
          range: TextDocument.range(fix.start, fix.end), newText: fix.replacement)
        actions.append(
          CodeAction(
            title: "Replace '\(fix.original)' with '\(fix.replacement)'",
            kind: "quickfix",
            diagnostics: [Self.diagnostic(diagnostic, in: document)],
            isPreferred: true,
            edit: .init(changes: [document.uri: [edit]])))
      }
    }
    return actions
  }

  /// The edits of a diagnostic's fix-its, in the document's positions, with the text each
  /// replaces.
  static func quickFixes(for diagnostic: Diagnostic, in document: TextDocument) -> [(
    start: TextDocument.Position, end: TextDocument.Position, original: String,
    replacement: String
  )] {
    diagnostic.fixIts.compactMap { fixIt in
      let start = document.offset(of: document.position(of: fixIt.range.start))
      let end = document.offset(of: document.position(of: fixIt.range.end))
      guard start < end, !fixIt.replacement.isEmpty else { return nil }
      return (
        document.position(ofOffset: start), document.position(ofOffset: end),
        document.text(start, end), fixIt.replacement
      )
    }
  }

  /// `textDocument/formatting`: the canonical text as one edit of the whole document; no
  /// edit when the text is already canonical or has errors.
  func formatting(_ open: OpenDocument, params: DocumentFormattingRequest) -> [TextEdit] {
    guard let formatted = host.format(open.document.bytes, open.analysis),
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
