// The checker at the level of a file: what concerns several policies together.

/// The names of a file's policies, declaration by declaration: reports every name an earlier
/// policy of the file already has.
struct PolicyNameChecker {
  /// Where each name was first given.
  private var firsts: [String: SourceRange] = [:]
  /// The `duplicate-policy` diagnostics, in the order of the file.
  private(set) var diagnostics: [Diagnostic] = []

  /// Records the next declaration's name; returns whether an earlier policy has it.
  mutating func isDuplicate(_ name: NameSyntax) -> Bool {
    guard !name.text.isEmpty else { return false }
    guard let first = firsts[name.text] else {
      firsts[name.text] = name.range
      return false
    }
    diagnostics.append(
      Diagnostic(
        .duplicatePolicy(name.text), at: name.range,
        notes: [Diagnostic(.firstGivenHere(name.text), at: first)]))
    return true
  }
}

extension PolicyChecker {
  /// Reports every policy whose name an earlier policy of the file already has; returns,
  /// for each declaration, whether it is such a duplicate.
  static func checkNames(
    of declarations: [PolicyDeclarationSyntax], into diagnostics: inout [Diagnostic]
  ) -> [Bool] {
    var names = PolicyNameChecker()
    let isDuplicate = declarations.map { names.isDuplicate($0.name) }
    diagnostics += names.diagnostics
    return isDuplicate
  }
}
