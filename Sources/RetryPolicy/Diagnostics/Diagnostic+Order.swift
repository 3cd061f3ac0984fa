// The order diagnostics are shown in, shared by every stage that reports.

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
