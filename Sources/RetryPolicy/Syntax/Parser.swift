/// Reads policy text into a syntax tree, reporting every error and recovering after each.
///
/// The parser records what was written, in order; it does not judge meaning (duplicate
/// clauses, conflicts, ranges), which is the checker's business. After an error it skips to
/// the next clause keyword on the line, else to the next line, else (at the top of a file) to
/// the next `policy`, so that one run reports every error of a text, one per broken clause.
package enum Parser {
  /// Parses a policy file: `policy NAME = …` and `policy NAME { … }` declarations.
  package static func parseFile(_ source: String) -> (SourceFileSyntax, [Diagnostic]) {
    var collector = LineCollector()
    let (range, comments, diagnostics) = parseFile(source, keepsComments: true, into: &collector)
    let file = SourceFileSyntax(
      policies: collector.takeDeclarations(), comments: comments, range: range)
    return (file, diagnostics.sortedByPosition)
  }

  /// Parses the text of one policy: lines of rules and policy-wide clauses, no `policy` keyword.
  package static func parsePolicy(_ source: String) -> (
    PolicyBodySyntax, [CommentSyntax], [Diagnostic]
  ) {
    var lines = LineCollector()
    let (range, comments, diagnostics) = parsePolicy(source, keepsComments: true, into: &lines)
    return (
      PolicyBodySyntax(lines: lines.takeLines(), range: range), comments,
      diagnostics.sortedByPosition
    )
  }

  /// Parses a policy file and hands its declarations to `consumer`, line by line and clause
  /// by clause, as they are read; returns the file's range, its comments (none unless
  /// `keepsComments`) and the diagnostics, as `parseFile(_:)` does.
  ///
  /// Nothing of the file is kept but what the consumer keeps.
  static func parseFile<Consumer: DeclarationConsumer>(
    _ source: String, keepsComments: Bool = false, into consumer: inout Consumer
  ) -> (SourceRange, [CommentSyntax], DiagnosticList) {
    parse(source, keepsComments: keepsComments, into: &consumer) { $0.parseFile() }
  }

  /// Parses the text of one policy and hands its lines to `consumer`, clause by clause, as
  /// they are read, without building a tree; returns the body's range, the comments (none
  /// unless `keepsComments`) and the diagnostics, as `parsePolicy(_:)` does.
  static func parsePolicy<Consumer: LineConsumer>(
    _ source: String, keepsComments: Bool = false, into consumer: inout Consumer
  ) -> (SourceRange, [CommentSyntax], DiagnosticList) {
    parse(source, keepsComments: keepsComments, into: &consumer) { $0.parsePolicyText() }
  }

  /// Parses a policy file given as UTF-8 bytes (which may not be UTF-8: each ill-formed
  /// stretch is an `invalid-utf8` error), as `parseFile(_:keepsComments:into:)` does.
  static func parseFile<Consumer: DeclarationConsumer>(
    bytes: UnsafeBufferPointer<UInt8>, keepsComments: Bool = false,
    into consumer: inout Consumer
  ) -> (SourceRange, [CommentSyntax], DiagnosticList) {
    parse(bytes: bytes, keepsComments: keepsComments, into: &consumer) { $0.parseFile() }
  }

  /// Parses the declarations of a part of a file, `bytes[offset...]`, which starts at line
  /// `line` with a `policy` that starts the line, and hands them to `consumer`; returns the
  /// range of the part's end and the lexer's and the parser's diagnostics, apart.
  static func parseFilePart<Consumer: DeclarationConsumer>(
    bytes: UnsafeBufferPointer<UInt8>, lineStartingAt offset: Int, line: UInt32,
    into consumer: inout Consumer
  ) -> (end: SourceRange, lexer: DiagnosticList, parser: DiagnosticList) {
    withUnsafeMutablePointer(to: &consumer) { consumer in
      var parser = PolicyParser(
        bytes: bytes, lineStartingAt: offset, line: line, consumer: consumer)
      let range = parser.parseFile()
      return (range, parser.lexer.diagnostics, parser.diagnostics)
    }
  }

  /// Runs `body` with a parser over `source` handing on to `consumer`; returns the range
  /// `body` returns, the comments and the diagnostics.
  private static func parse<Consumer: LineConsumer>(
    _ source: String, keepsComments: Bool, into consumer: inout Consumer,
    _ body: (inout PolicyParser<Consumer>) -> SourceRange
  ) -> (SourceRange, [CommentSyntax], DiagnosticList) {
    withUTF8(source) { bytes in
      parse(bytes: bytes, keepsComments: keepsComments, into: &consumer, body)
    }
  }

  /// Runs `body` with a parser over `bytes` handing on to `consumer`.
  private static func parse<Consumer: LineConsumer>(
    bytes: UnsafeBufferPointer<UInt8>, keepsComments: Bool, into consumer: inout Consumer,
    _ body: (inout PolicyParser<Consumer>) -> SourceRange
  ) -> (SourceRange, [CommentSyntax], DiagnosticList) {
    // The parser reaches the consumer through a pointer valid for the parse: a checker is
    // large, and copying it in and out of the parser cost more than the parse itself.
    withUnsafeMutablePointer(to: &consumer) { consumer in
      var parser = PolicyParser(bytes: bytes, keepsComments: keepsComments, consumer: consumer)
      let range = body(&parser)
      return (range, parser.lexer.comments, parser.finishedDiagnostics())
    }
  }

  /// Runs `body` over the UTF-8 bytes of `source`, without copying them when possible.
  private static func withUTF8<Result>(
    _ source: String, _ body: (UnsafeBufferPointer<UInt8>) -> Result
  ) -> Result {
    // `String.withUTF8` makes a bridged or otherwise non-contiguous string contiguous first;
    // it returns the result as it is, where `withContiguousStorageIfAvailable` wraps it in an
    // optional that costs a generic destroy for every parse.
    var source = source
    return source.withUTF8(body)
  }
}

/// The state of one parse: the lexer, the current token, and where the last token ended.
///
/// Every loop of the parser consumes at least one token per iteration or exits, so parsing
/// ends, in time linear in the text.
struct PolicyParser<Consumer: LineConsumer> {
  /// The lexer, which holds the comments and its own diagnostics.
  var lexer: Lexer
  /// What each line is handed to as it is read; valid for the whole parse.
  let consumer: UnsafeMutablePointer<Consumer>
  /// The parser's diagnostics, in the order found (the lexer keeps its own).
  private(set) var diagnostics = DiagnosticList()
  /// The token the parser looks at.
  private(set) var token: Token
  /// The line, the end and the column base of the last token consumed (see `Token`).
  private var previous: (line: UInt32, end: Int, base: Int) = (1, 0, 0)
  /// Whether `}` ends the current line (inside a block).
  var isInBlock = false
  /// The names of the current line's `on` and `except` clauses, in order: the consumer gets
  /// each clause's as a slice of it, and all of them at the line's end.
  var lineNames: [NameSyntax] = []

  init(
    bytes: UnsafeBufferPointer<UInt8>, keepsComments: Bool,
    consumer: UnsafeMutablePointer<Consumer>
  ) {
    self.consumer = consumer
    lexer = Lexer(bytes: bytes)
    lexer.keepsComments = keepsComments
    token = lexer.next()
  }

  /// A parser over `bytes` from the start of line `line` at byte `offset`, keeping no
  /// comments: for a part of a file that starts with a declaration.
  init(
    bytes: UnsafeBufferPointer<UInt8>, lineStartingAt offset: Int, line: UInt32,
    consumer: UnsafeMutablePointer<Consumer>
  ) {
    self.consumer = consumer
    lexer = Lexer(bytes: bytes, lineStartingAt: offset, line: line)
    lexer.keepsComments = false
    previous = (lexer.line, lexer.offset, lexer.offset)
    token = lexer.next()
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
    _ message: DiagnosticMessage, at range: SourceRange, notes: [Diagnostic] = []
  ) {
    diagnostics.appendError(message, at: range, notes: notes)
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
