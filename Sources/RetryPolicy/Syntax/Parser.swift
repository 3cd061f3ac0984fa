/// Reads policy text into a syntax tree, reporting every error and recovering after each.
///
/// The parser records what was written, in order; it does not judge meaning (duplicate
/// clauses, conflicts, ranges), which is the checker's business. After an error it skips to
/// the next clause keyword on the line, else to the next line, else (at the top of a file) to
/// the next `policy`, so that one run reports every error of a text, one per broken clause.
package enum Parser {
  /// Parses a policy file: `policy NAME = …` and `policy NAME { … }` declarations.
  package static func parseFile(_ source: String) -> (SourceFileSyntax, [Diagnostic]) {
    let (file, diagnostics) = parseFile(text: source)
    return (file, diagnostics.sortedByPosition)
  }

  /// Parses the text of one policy: lines of rules and policy-wide clauses, no `policy` keyword.
  package static func parsePolicy(_ source: String) -> (
    PolicyBodySyntax, [CommentSyntax], [Diagnostic]
  ) {
    let (body, comments, diagnostics) = parsePolicy(text: source)
    return (body, comments, diagnostics.sortedByPosition)
  }

  /// Parses a policy file into its tree; the diagnostics in the order found.
  static func parseFile(text source: String) -> (SourceFileSyntax, DiagnosticList) {
    withUTF8(source) { parseFile(bytes: $0) }
  }

  /// Parses a policy file given as UTF-8 bytes (which may not be UTF-8: each ill-formed
  /// stretch is an `invalid-utf8` error) into its tree; the diagnostics in the order found.
  static func parseFile(bytes: UnsafeBufferPointer<UInt8>) -> (SourceFileSyntax, DiagnosticList) {
    var parser = PolicyParser(bytes: bytes)
    let range = parser.parseFile()
    let file = SourceFileSyntax(
      policies: parser.declarations, comments: parser.lexer.comments, range: range)
    return (file, parser.finishedDiagnostics())
  }

  /// Parses the text of one policy into its body and comments; the diagnostics in the order
  /// found.
  static func parsePolicy(text source: String) -> (
    PolicyBodySyntax, [CommentSyntax], DiagnosticList
  ) {
    withUTF8(source) { bytes in
      var parser = PolicyParser(bytes: bytes)
      let range = parser.parsePolicyText()
      return (
        PolicyBodySyntax(lines: parser.takeLines(), range: range), parser.lexer.comments,
        parser.finishedDiagnostics()
      )
    }
  }

  /// Runs `body` over the UTF-8 bytes of `source`, without copying them when possible.
  private static func withUTF8<Result>(
    _ source: String, _ body: (UnsafeBufferPointer<UInt8>) -> Result
  ) -> Result {
    // `String.withUTF8` makes a bridged or otherwise non-contiguous string contiguous first.
    var source = source
    return source.withUTF8(body)
  }
}

/// The state of one parse: the lexer, the current token, and where the last token ended.
///
/// Every loop of the parser consumes at least one token per iteration or exits, so parsing
/// ends, in time linear in the text.
struct PolicyParser {
  /// The lexer, which holds the comments and its own diagnostics.
  var lexer: Lexer
  /// The parser's diagnostics, in the order found (the lexer keeps its own).
  private(set) var diagnostics = DiagnosticList()
  /// The token the parser looks at.
  private(set) var token: Token
  /// The line, the end and the column base of the last token consumed (see `Token`).
  private var previous: (line: UInt32, end: Int, base: Int) = (1, 0, 0)
  /// Whether `}` ends the current line (inside a block).
  var isInBlock = false
  /// The declarations read so far, in order.
  var declarations: [PolicyDeclarationSyntax] = []
  /// The lines of the current declaration (or of the policy text) read so far.
  var lines: [LineSyntax] = []
  /// The clauses of the current line read so far.
  var clauses: [ClauseSyntax] = []
  /// The clauses a rule's line is given room for before it is read: a rule has a few (the
  /// README's one-liner four).
  static let clausesPerRule = 4

  init(bytes: UnsafeBufferPointer<UInt8>) {
    lexer = Lexer(bytes: bytes)
    token = lexer.next()
  }

  /// The lines read since the last call, which the parser forgets.
  mutating func takeLines() -> [LineSyntax] {
    defer { lines = [] }
    return lines
  }

  // MARK: Tokens

  mutating func advance() {
    previous = (token.line, token.end, token.endBase)
    token = lexer.next()
  }

  /// The end of the last token consumed.
  @inline(__always)
  var previousEnd: SourceLocation {
    Token.location(line: previous.line, offset: previous.end, base: previous.base)
  }

  var text: String { lexer.text(token.start, token.end) }

  /// Whether the current token ends a line: a line end, the end, or `}` in a block.
  var isAtLineEnd: Bool {
    switch token.kind {
    case .newline, .end: true
    case .rightBrace: isInBlock
    default: false
    }
  }

  /// Whether the current token is a clause keyword.
  var isAtClause: Bool {
    token.kind == .word && token.clause != nil
  }

  /// Reports a syntax error; past the errors that can be shown, it is only counted.
  mutating func report(
    _ message: DiagnosticMessage, at range: SourceRange, notes: [Diagnostic] = [],
    fixIts: [FixIt]? = nil
  ) {
    diagnostics.appendError(message, at: range, notes: notes, fixIts: fixIts)
  }

  /// How many diagnostics the lexer and the parser have reported so far.
  var diagnosticCount: Int { lexer.diagnostics.foundCount + diagnostics.foundCount }

  /// The lexer's and the parser's diagnostics together (those kept, and the counts).
  func finishedDiagnostics() -> DiagnosticList {
    DiagnosticList.merged(lexer.diagnostics, diagnostics)
  }

  /// Skips to the next clause keyword of the line, or to the line's end.
  ///
  /// A word on the way that is a near miss of a clause keyword (`jiter`) is reported too, so
  /// one run shows every misspelt clause of a line, not only the first.
  mutating func skipToClause() {
    while !isAtLineEnd && !isAtClause {
      if token.kind == .word, token.keyword == nil,
        diagnostics.lastFoundStart != token.range.start,
        let suggestion = Suggestion.nearest(to: text, in: ClauseTable.clauseWords)
      {
        report(.unknownClause(text, suggestion: suggestion), at: token.range)
      }
      advance()
    }
  }

  /// Skips to the next line that starts with `policy`, or to the end.
  mutating func skipToNextPolicy() {
    while true {
      while token.kind != .newline && token.kind != .end { advance() }
      while token.kind == .newline { advance() }
      if token.kind == .end || token.keyword == .policy { return }
    }
  }
}
