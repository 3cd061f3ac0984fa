/// The diagnostics a stage finds, kept up to the first ``Diagnostic/shownLimit`` errors and as
/// many warnings, and counted past them.
///
/// A hostile text can hold millions of errors; a stage keeps at most the ones that can be
/// shown, so memory stays bounded, and counts the rest, so the report can say how many there
/// are. Its elements are the kept diagnostics, in the order found. An error found past the
/// limit need not even be built (``isKeepingErrors``).
struct DiagnosticList: RandomAccessCollection, Sendable {
  private var kept: [Diagnostic] = []
  /// The errors found, kept or not.
  private(set) var errorCount = 0
  /// The warnings found, kept or not.
  private(set) var warningCount = 0
  /// The notes found on their own (not attached to an error or warning).
  private(set) var noteCount = 0
  private var keptErrors = 0
  private var keptWarnings = 0
  /// Where the last diagnostic found starts, kept or not.
  private(set) var lastFoundStart: SourceLocation?

  init() {}

  /// Every diagnostic found, kept or not.
  var foundCount: Int { errorCount + warningCount + noteCount }

  var startIndex: Int { kept.startIndex }
  var endIndex: Int { kept.endIndex }
  subscript(position: Int) -> Diagnostic { kept[position] }

  /// Whether the next error will be kept: when it is not, its message need not be built.
  var isKeepingErrors: Bool { keptErrors < Diagnostic.shownLimit }

  /// Adds an error; `message` may be nil when ``isKeepingErrors`` is false (it is only
  /// counted then).
  mutating func appendError(
    _ message: DiagnosticMessage?, at range: SourceRange, notes: [Diagnostic] = [],
    fixIts: [FixIt]? = nil
  ) {
    errorCount += 1
    lastFoundStart = range.start
    guard let message, keptErrors < Diagnostic.shownLimit else {
      noteDropped(range)
      return
    }
    keptErrors += 1
    kept.append(Diagnostic(message, at: range, notes: notes, fixIts: fixIts))
  }

  /// Where the first diagnostic left out stands, in the order of the text.
  private(set) var firstDropped: SourceRange?

  private mutating func noteDropped(_ range: SourceRange) {
    if let first = firstDropped, first.start <= range.start { return }
    firstDropped = range
  }

  /// Adds a diagnostic of any severity.
  mutating func append(_ diagnostic: Diagnostic) {
    lastFoundStart = diagnostic.range.start
    switch diagnostic.severity {
    case .error:
      errorCount += 1
      guard keptErrors < Diagnostic.shownLimit else { return noteDropped(diagnostic.range) }
      keptErrors += 1
    case .warning:
      warningCount += 1
      guard keptWarnings < Diagnostic.shownLimit else { return noteDropped(diagnostic.range) }
      keptWarnings += 1
    case .note:
      noteCount += 1
    }
    kept.append(diagnostic)
  }

  /// Adds another stage's diagnostics: its kept ones, up to this list's limits, and its counts.
  mutating func append(contentsOf other: DiagnosticList) {
    // Nearly always empty: nothing to do (a loop over an empty list still costs its iterator).
    guard other.foundCount > 0 || other.firstDropped != nil else { return }
    let (errors, warnings, notes) = (errorCount, warningCount, noteCount)
    for index in other.kept.indices { append(other.kept[index]) }
    errorCount = errors + other.errorCount
    warningCount = warnings + other.warningCount
    noteCount = notes + other.noteCount
    if let dropped = other.firstDropped { noteDropped(dropped) }
  }

  /// The kept diagnostics in the order of the text, capped, with the counts of the rest: what
  /// a report shows (``Diagnostic/capped(_:errorCount:warningCount:)``).
  func finished() -> (diagnostics: [Diagnostic], omittedErrors: Int, omittedWarnings: Int) {
    Diagnostic.capped(
      Diagnostic.sortedByPosition(kept), errorCount: errorCount, warningCount: warningCount,
      firstDropped: firstDropped)
  }

  /// Two stages' kept diagnostics together, in the order of the text, and their counts.
  static func merged(_ first: DiagnosticList, _ second: DiagnosticList) -> DiagnosticList {
    var all = first
    all.append(contentsOf: second)
    return all
  }

  /// The kept diagnostics in the order of the text.
  var sortedByPosition: [Diagnostic] { Diagnostic.sortedByPosition(kept) }
}
