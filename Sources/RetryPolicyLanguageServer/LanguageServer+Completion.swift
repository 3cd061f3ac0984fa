import Foundation
import RetryPolicy

// Completion: what may be typed at the cursor, read from the text of the cursor's line
// (the line may not parse yet) and the names the rest of the file uses. Keywords and what
// follows each come from the clause table (`ClauseTable`, `LanguageWords`), so a new clause is
// offered without a change here.

extension LanguageServer {
  /// The completion item kinds used (the protocol's numbers).
  private enum ItemKind: Int {
    case unit = 11
    case keyword = 14
    case value = 12
    case reference = 18
    case function = 3
  }

  /// `textDocument/completion`: a list of items for the cursor.
  func completion(_ open: OpenDocument, params: CompletionRequest) -> CompletionList {
    let position = params.position
    let document = open.document
    let offset = document.offset(of: position)
    let lineStart = document.lineStart(position.line)
    let prefix = Array(document.bytes[lineStart..<max(lineStart, offset)])
    if prefix.contains(UInt8(ascii: "#")) { return CompletionList(isIncomplete: false, items: []) }
    var partialStart = prefix.count
    while partialStart > 0, Self.isWordByte(prefix[partialStart - 1]) { partialStart -= 1 }
    let partial = String(decoding: prefix[partialStart...], as: UTF8.self)
    let before = String(decoding: prefix[..<partialStart], as: UTF8.self)
    let context = Self.context(before: before, partial: partial)
    let items: [CompletionItem]
    switch context {
    case .unit(let number):
      let start = document.position(ofOffset: lineStart + partialStart)
      items = LanguageWords.units.map { unit in
        Self.item(
          number + unit, kind: .unit,
          edit: (TextDocument.range(start, position), number + unit))
      }
    case .clauseWords(let words):
      // Words of the clause being written (`over`, `after`): no clause's snippet.
      items = words.map { Self.item($0, kind: .keyword) }
    case .words(let words, let kind):
      items = words.map { word in
        // A clause keyword comes with the table's snippet and summary.
        let spec = kind == .keyword ? Keyword(rawValue: word)?.clause?.spec : nil
        return Self.item(word, kind: kind, clause: spec)
      }
    case .errorClasses:
      items = usedNames(in: open.analysis.syntax, hooks: false)
        .union(Vocabulary.builtInErrorClasses).sorted().map { Self.item($0, kind: .reference) }
    case .hooks:
      items = usedNames(in: open.analysis.syntax, hooks: true).sorted().map {
        Self.item($0, kind: .function)
      }
    case .lineStart:
      if Self.isInsideBlock(document.bytes, before: lineStart) {
        items = ([Keyword.retry.text] + LanguageWords.policyWideKeywords).map {
          Self.item($0, kind: .keyword)
        }
      } else {
        items = [Self.item(Keyword.policy.text, kind: .keyword)]
      }
    }
    return CompletionList(isIncomplete: false, items: items)
  }

  /// What the cursor's place calls for.
  private enum Context {
    case unit(String)
    case words([String], ItemKind)
    case clauseWords([String])
    case errorClasses
    case hooks
    case lineStart
  }

  private static func context(before: String, partial: String) -> Context {
    let trimmed = before.trimmingCharacters(in: .whitespaces)
    let words = trimmed.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "," }).map(
      String.init)
    let lastKeyword = words.last.flatMap(Keyword.init(rawValue:))
    let reading = ClauseReading(words)
    let digits = partial.prefix { $0.isASCII && ($0.isNumber || $0 == ".") }
    if !digits.isEmpty, partial.dropFirst(digits.count).allSatisfy(\.isLetter) {
      // A count or a factor: no unit.
      if lastKeyword == .retry || lastKeyword == .x { return .words([], .value) }
      switch reading.expected {
      // A percentage: no unit.
      case .percent?, .jitter?: return .words([digits + "%"], .value)
      // A rate: per second or per minute.
      case .rate?: return .words([digits + "/s", digits + "/m"], .value)
      // A count or a factor: no unit.
      case .count?, .none?, .errorClasses?, .hook?, .factor?: return .words([], .value)
      case .duration?, .durations?, .growth?, nil: return .unit(String(digits))
      }
    }
    guard let last = words.last else { return .lineStart }
    if trimmed.hasSuffix(",") {
      // In a list: its clause is that of the last keyword before the cursor.
      let listKeyword = words.last { Keyword(rawValue: $0) != nil }.flatMap(Keyword.init)
      return listKeyword?.clause?.spec.arguments.first?.shape == .errorClasses
        ? .errorClasses : .words([], .value)
    }
    if last == "=" { return .words([Keyword.retry.text], .keyword) }
    if last == "{" { return .words([], .value) }
    switch lastKeyword {
    case .retry?: return .words([Keyword.forever.text], .keyword)
    case .policy?: return .words([], .value)
    default: break
    }
    if let word = reading.expectedWord { return .clauseWords([word]) }
    switch reading.expected {
    case .errorClasses?: return .errorClasses
    case .hook?: return .hooks
    case .jitter?: return .words(LanguageWords.jitterKinds, .value)
    case .count?, .duration?, .durations?, .percent?, .none?, .growth?, .factor?, .rate?:
      return .words([], .value)
    case nil: break
    }
    // After a complete clause: the words of the clause that may still follow, then the
    // clauses not yet on the line, one delay clause at most.
    let keywords = Set(LanguageWords.keywords)
    let used = Set(words.filter(keywords.contains))
    var offered = LanguageWords.clauseKeywords.filter { !used.contains($0) }
    if !used.isDisjoint(with: LanguageWords.delayKeywords) {
      offered.removeAll { LanguageWords.delayKeywords.contains($0) }
    }
    if !used.contains(Keyword.retry.text) {
      offered = offered.filter { LanguageWords.policyWideKeywords.contains($0) }
    }
    if !reading.followingWords.isEmpty {
      return .clauseWords(reading.followingWords + offered)
    }
    return .words(offered, .keyword)
  }

  private static func isWordByte(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
      UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"),
      UInt8(ascii: "."):
      true
    default: false
    }
  }

  /// Whether the line starting at `end` is inside a `{ … }` block (braces in comments aside).
  private static func isInsideBlock(_ bytes: [UInt8], before end: Int) -> Bool {
    var depth = 0
    var inComment = false
    for byte in bytes[0..<end] {
      switch byte {
      case UInt8(ascii: "#"): inComment = true
      case 0x0A: inComment = false
      case UInt8(ascii: "{") where !inComment: depth = 1
      case UInt8(ascii: "}") where !inComment: depth = 0
      default: break
      }
    }
    return depth > 0
  }

  /// The error classes (or the hooks) the file names.
  private func usedNames(in syntax: SourceFileSyntax, hooks: Bool) -> Set<String> {
    var names: Set<String> = []
    for policy in syntax.policies {
      for line in policy.body.lines {
        for clause in line.clauses {
          for argument in clause.arguments {
            switch argument {
            case .names(let list)? where !hooks: names.formUnion(list.map(\.text))
            case .name(let name)? where hooks: names.insert(name.text)
            case .names?, .name?, .word?, .count?, .duration?, .durations?, .percent?,
              .factor?, .increment?, .jitter?, .rate?, nil:
              break
            }
          }
        }
      }
    }
    return names
  }

  private static func item(
    _ label: String, kind: ItemKind, edit: (range: LSPRange, text: String)? = nil,
    clause: ClauseSpec? = nil
  ) -> CompletionItem {
    CompletionItem(
      label: label, kind: kind.rawValue,
      textEdit: edit.map { TextEdit(range: $0.range, newText: $0.text) },
      detail: clause?.summary, insertText: clause?.snippet,
      insertTextFormat: clause.map { _ in 2 })
  }
}
