/// Turns diagnostics into the text a person reads, in the compiler's form.
///
///     payments.retry:3:14: error: unknown unit 'd'; did you mean 's'?
///         retry 5 delay 2d
///                       ^
///
/// Color (ANSI escapes) is used only when asked for; callers decide from the terminal and
/// `NO_COLOR`.
public struct DiagnosticRenderer: Sendable {
  /// The name the text is reported under: a file path, or `<policy>`.
  public var sourceName: String
  /// Whether to color severities and the marker with ANSI escapes.
  public var usesColor: Bool
  private let lines: [Substring]

  /// The widest stretch of a source line shown; longer lines are cut around the column.
  static let maximumShownColumns = 120

  /// Creates a renderer for the diagnostics of one text.
  public init(source: String, sourceName: String, usesColor: Bool = false) {
    self.sourceName = sourceName
    self.usesColor = usesColor
    self.lines = source.split(omittingEmptySubsequences: false) { $0 == "\n" || $0 == "\r\n" }
  }

  /// The diagnostic, its source line and marker, then its notes the same way.
  public func render(_ diagnostic: Diagnostic) -> String {
    var output = ""
    append(diagnostic, to: &output)
    for note in diagnostic.notes {
      append(note, to: &output)
    }
    return output
  }

  /// Every diagnostic rendered, in order.
  public func render(_ diagnostics: [Diagnostic]) -> String {
    diagnostics.map(render).joined()
  }

  private func append(_ diagnostic: Diagnostic, to output: inout String) {
    let severity = diagnostic.severity.rawValue
    let label =
      usesColor ? color(for: diagnostic.severity) + severity + ":\u{1B}[0m" : severity + ":"
    let location = "\(sourceName):\(diagnostic.line):\(diagnostic.column):"
    let head = usesColor ? "\u{1B}[1m\(location)\u{1B}[0m" : location
    let message = usesColor ? "\u{1B}[1m\(diagnostic.message)\u{1B}[0m" : diagnostic.message
    output += "\(head) \(label) \(message)\n"
    guard diagnostic.line >= 1, diagnostic.line <= lines.count else { return }
    let (shown, markerColumn) = window(
      of: lines[diagnostic.line - 1], around: diagnostic.column)
    output += shown + "\n"
    let marker = usesColor ? "\u{1B}[1;32m^\u{1B}[0m" : "^"
    output += String(repeating: " ", count: max(0, markerColumn - 1)) + marker + "\n"
  }

  /// The part of a line to show, with tabs turned into spaces, and the marker's column in it.
  private func window(of line: Substring, around column: Int) -> (String, Int) {
    let scalars = Array(line.unicodeScalars)
    let limit = Self.maximumShownColumns
    var start = 0
    var prefix = ""
    if scalars.count > limit, column > limit / 2 {
      start = min(column - 1 - limit / 2, max(0, scalars.count - limit))
      prefix = "…"
    }
    let end = min(scalars.count, start + limit)
    var text = prefix
    var markerColumn = prefix.isEmpty ? 1 : 2
    for index in start..<end {
      let scalar = scalars[index]
      let shown: String
      if scalar == "\t" {
        shown = " "
      } else if scalar.value < 0x20 || scalar.value == 0x7F {
        shown = "?"
      } else {
        shown = String(scalar)
      }
      if index < column - 1 { markerColumn += 1 }
      text += shown
    }
    if end < scalars.count { text += "…" }
    return (text, markerColumn)
  }

  private func color(for severity: Diagnostic.Severity) -> String {
    switch severity {
    case .error: "\u{1B}[1;31m"
    case .warning: "\u{1B}[1;35m"
    case .note: "\u{1B}[1;36m"
    }
  }
}
