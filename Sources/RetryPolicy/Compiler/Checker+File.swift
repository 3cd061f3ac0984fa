// The checker at the level of a file: what concerns several policies together.

extension PolicyChecker {
  /// Reports every policy whose name an earlier policy of the file already has; returns,
  /// for each declaration, whether it is such a duplicate.
  static func checkNames(
    of declarations: [PolicyDeclarationSyntax], into diagnostics: inout [Diagnostic]
  ) -> [Bool] {
    var isDuplicate = [Bool](repeating: false, count: declarations.count)
    guard declarations.count > 1 else { return isDuplicate }
    var firsts: [String: NameSyntax] = [:]
    for (index, declaration) in declarations.enumerated() where !declaration.name.text.isEmpty {
      let name = declaration.name
      if let first = firsts[name.text] {
        isDuplicate[index] = true
        diagnostics.append(
          Diagnostic(
            .duplicatePolicy(name.text), at: name.range,
            notes: [Diagnostic(.firstGivenHere(name.text), at: first.range)]))
      } else {
        firsts[name.text] = name
      }
    }
    return isDuplicate
  }

  /// The diagnostics in the order of the text; diagnostics at one place keep their order.
  static func sortedByPosition(_ diagnostics: [Diagnostic]) -> [Diagnostic] {
    guard diagnostics.count > 1 else { return diagnostics }
    return diagnostics.enumerated().sorted { lhs, rhs in
      let (left, right) = (lhs.element.range.start.offset, rhs.element.range.start.offset)
      return left != right ? left < right : lhs.offset < rhs.offset
    }.map(\.element)
  }
}
