// The checker at the level of a file: what concerns several policies together.

/// The names of a file's policies, declaration by declaration: reports every name an earlier
/// policy of the file already has.
struct PolicyNameChecker {
  /// Where each name was first given.
  private var firsts: [String: SourceRange] = [:]
  /// The `duplicate-policy` diagnostics, in the order of the file.
  private(set) var diagnostics = DiagnosticList()

  /// Makes room for `count` names, so that the table is not rehashed as it grows.
  mutating func reserveCapacity(_ count: Int) {
    firsts.reserveCapacity(count)
  }

  /// Records the next declaration's name; returns whether an earlier policy has it.
  mutating func isDuplicate(_ name: NameSyntax) -> Bool {
    guard !name.text.isEmpty else { return false }
    // One lookup for a new name (the common case); a duplicate puts the first place back.
    guard let first = firsts.updateValue(name.range, forKey: name.text) else { return false }
    firsts[name.text] = first
    diagnostics.append(
      Diagnostic(
        .duplicatePolicy(name.text), at: name.range,
        notes: [Diagnostic(.firstGivenHere(name.text), at: first)]))
    return true
  }
}

/// Checks and compiles a file's declarations, one at a time: each policy's lines go to a
/// checker of its own, and names are checked across the file.
struct FileChecker {
  /// The checker of the declaration being read; reset for each one, so its room is reused.
  private var checker: PolicyChecker
  private var names = PolicyNameChecker()
  /// The checkers' diagnostics, in the order found.
  private var checkerDiagnostics = DiagnosticList()
  /// The policies without an error of their own, with their sources, in the order of the file.
  private(set) var policies: [CheckedPolicy] = []

  init(vocabulary: Vocabulary) {
    checker = PolicyChecker(vocabulary: vocabulary)
  }

  /// Makes room for the policies and names of `count` declarations.
  mutating func reserveCapacity(_ count: Int) {
    names.reserveCapacity(count)
    policies.reserveCapacity(count)
  }

  /// The names' and the checkers' diagnostics, in the order found.
  var diagnostics: DiagnosticList { DiagnosticList.merged(names.diagnostics, checkerDiagnostics) }

  /// Checks one declaration of the tree.
  mutating func check(_ declaration: PolicyDeclarationSyntax) {
    checker.reset()
    let isDuplicate = names.isDuplicate(declaration.name)
    let policy = checker.compile(
      declaration.body, name: declaration.name.text, emptyRange: declaration.name.range,
      hasSyntaxErrors: declaration.hasSyntaxErrors)
    checkerDiagnostics.append(contentsOf: checker.diagnostics)
    if let policy, !isDuplicate {
      policies.append(CheckedPolicy(policy: policy, declaration: declaration))
    }
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
