// The order diagnostics are shown in, shared by every stage that reports, and how many.

extension Diagnostic {
  /// The diagnostics in the order of the text; diagnostics at one place keep their order.
  static func sortedByPosition(_ diagnostics: [Diagnostic]) -> [Diagnostic] {
    guard diagnostics.count > 1 else { return diagnostics }
    var isSorted = true
    for index in 1..<diagnostics.count
    where diagnostics[index].range.start.offset < diagnostics[index - 1].range.start.offset {
      isSorted = false
      break
    }
    if isSorted { return diagnostics }
    return diagnostics.enumerated().sorted { lhs, rhs in
      let (left, right) = (lhs.element.range.start.offset, rhs.element.range.start.offset)
      return left != right ? left < right : lhs.offset < rhs.offset
    }.map(\.element)
  }
}

extension Diagnostic {
  /// The most errors, and the most warnings, kept for one text: past them, only a count.
  package static let shownLimit = 100

  /// The first ``shownLimit`` errors and the first ``shownLimit`` warnings of `diagnostics`
  /// (each with its notes), in order; then, when the text has more (`errorCount` and
  /// `warningCount` count every one found, kept or not), one `diagnostics-omitted` note at the
  /// first left out (here or, `firstDropped`, by a stage), saying how many; and the counts
  /// left out.
  static func capped(
    _ diagnostics: [Diagnostic], errorCount: Int, warningCount: Int,
    firstDropped: SourceRange? = nil
  ) -> (
    diagnostics: [Diagnostic], omittedErrors: Int, omittedWarnings: Int
  ) {
    var kept: [Diagnostic] = []
    kept.reserveCapacity(Swift.min(diagnostics.count, 2 * shownLimit + 1))
    // Shown, for errors (index 0) and warnings (index 1).
    var shown = [0, 0]
    var firstOmitted: SourceRange?
    for diagnostic in diagnostics {
      let index = diagnostic.severity == .error ? 0 : 1
      if diagnostic.severity == .note || shown[index] < shownLimit {
        if diagnostic.severity != .note { shown[index] += 1 }
        kept.append(diagnostic)
      } else {
        firstOmitted = firstOmitted ?? diagnostic.range
      }
    }
    let omittedErrors = Swift.max(0, errorCount - shown[0])
    let omittedWarnings = Swift.max(0, warningCount - shown[1])
    if omittedErrors + omittedWarnings > 0 {
      // A stage keeps only what can be shown: the first left out may not be at hand.
      var place = firstOmitted ?? firstDropped ?? SourceRange(start: .start, end: .start)
      if let firstOmitted, let firstDropped, firstDropped.start < firstOmitted.start {
        place = firstDropped
      }
      kept.append(
        Diagnostic(
          .diagnosticsOmitted(errors: omittedErrors, warnings: omittedWarnings), at: place))
    }
    return (kept, omittedErrors, omittedWarnings)
  }
}
