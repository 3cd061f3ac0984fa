/// One finding about policy text: an error, a warning or a note, at a place in the text.
///
/// Detection and rendering are separate: the stages that read policies produce
/// `Diagnostic` values; ``DiagnosticRenderer`` turns them into text such as
///
///     payments.retry:3:14: error: unknown unit 'd'; did you mean 's'?
public struct Diagnostic: Sendable, Hashable, CustomStringConvertible {
  /// How serious a diagnostic is.
  public enum Severity: String, Sendable, Hashable, Comparable {
    /// The policy cannot be compiled.
    case error
    /// The policy compiles but is likely not what was meant.
    case warning
    /// Extra information attached to an error or a warning.
    case note

    private var rank: Int {
      switch self {
      case .error: 2
      case .warning: 1
      case .note: 0
      }
    }

    /// Orders severities from note (least) to error (most).
    public static func < (lhs: Severity, rhs: Severity) -> Bool { lhs.rank < rhs.rank }
  }

  /// How serious the diagnostic is.
  public var severity: Severity
  /// The stable identifier of the message in the catalogue, such as `unknown-unit`.
  public var id: DiagnosticID
  /// The message without the suggestion of its fix-its: a lowercase phrase without a final
  /// period.
  public var summary: String
  /// Where the diagnostic points: the marker goes under `range.start`.
  public var range: SourceRange
  /// Notes that belong to this diagnostic, such as where a clause was first given.
  public var notes: [Diagnostic]
  /// Edits that would fix the text, such as a misspelt keyword replaced with the right one.
  public var fixIts: [FixIt]

  /// The message as shown: the summary, then `; did you mean 'x'?` rendered from the first
  /// fix-it, when there is one.
  ///
  /// Setting it sets the summary; the fix-its stay, and their suggestion is still shown.
  public var message: String {
    get { fixIts.first.map { summary + Suggestion.didYouMean($0.replacement) } ?? summary }
    set { summary = newValue }
  }

  /// The line the diagnostic points at, counted from 1.
  public var line: Int { range.start.line }
  /// The column the diagnostic points at, in Unicode scalars, counted from 1.
  public var column: Int { range.start.column }

  /// Creates a diagnostic from a catalogue message and a place; the message's suggestion,
  /// if any, becomes a fix-it that replaces `range` unless `fixIts` are given.
  package init(
    _ message: DiagnosticMessage, at range: SourceRange, notes: [Diagnostic] = [],
    fixIts: [FixIt]? = nil
  ) {
    self.severity = message.severity
    self.id = message.id
    self.summary = message.text
    self.range = range
    self.notes = notes
    self.fixIts =
      fixIts ?? message.suggestion.map { [FixIt(range: range, replacement: $0)] } ?? []
  }

  /// Creates a diagnostic of a tool's own, outside the catalogue's messages.
  package init(
    id: DiagnosticID, severity: Severity, summary: String, at range: SourceRange,
    notes: [Diagnostic] = [], fixIts: [FixIt] = []
  ) {
    self.severity = severity
    self.id = id
    self.summary = summary
    self.range = range
    self.notes = notes
    self.fixIts = fixIts
  }

  /// `LINE:COL: SEVERITY: MESSAGE`, the form without a file name.
  public var description: String { "\(line):\(column): \(severity.rawValue): \(message)" }
}

/// An edit that fixes a diagnostic: the text of `range` becomes `replacement`.
///
/// The command line shows it as `did you mean 'replacement'?`; the language server offers it
/// as a quick fix.
public struct FixIt: Sendable, Hashable {
  /// The text to replace.
  public var range: SourceRange
  /// What replaces it.
  public var replacement: String

  /// Creates an edit of `range` to `replacement`.
  public init(range: SourceRange, replacement: String) {
    self.range = range
    self.replacement = replacement
  }
}

/// The error that compiling a policy throws: it carries every diagnostic of the text.
///
/// Its description renders each diagnostic as `<policy>:LINE:COL: error: MESSAGE`.
public struct PolicyCompileError: Error, Sendable, Hashable, CustomStringConvertible {
  /// All diagnostics of the text, errors and warnings, in the order of the text.
  public var diagnostics: [Diagnostic]
  /// The name the text is reported under: a file path, or `<policy>`.
  public var sourceName: String

  /// Creates the error from its diagnostics.
  public init(diagnostics: [Diagnostic], sourceName: String = "<policy>") {
    self.diagnostics = diagnostics
    self.sourceName = sourceName
  }

  /// Only the diagnostics of severity error.
  public var errors: [Diagnostic] { diagnostics.filter { $0.severity == .error } }

  /// Each diagnostic as `NAME:LINE:COL: SEVERITY: MESSAGE`, one a line.
  public var description: String {
    diagnostics.map { "\(sourceName):\($0.description)" }.joined(separator: "\n")
  }
}
