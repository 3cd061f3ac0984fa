import RetryPolicy

// The names of the generated Swift: how code refers to `RetryPolicies.NAME`, and the names it
// cannot declare or refer to, which `generate` and `check` report as errors.
//
// What Swift 6 makes of `RetryPolicies.NAME` (a member access after a type name), found by
// type-checking a use of each keyword and contextual word as a `static let`:
// - `Type` and `Protocol`, with or without backticks, are the metatype (`RetryPolicies.Type`)
//   and a protocol's metatype (refused for an enum): no spelling refers to such a member.
// - `init` and `self` refer to the member only in backticks (``RetryPolicies.`init` ``,
//   ``RetryPolicies.`self` ``); written plainly they are the initializer and the type itself.
// - Every other keyword (`default`, `class`, `Self`, `Any`, `nil`, …) may follow the dot as it
//   is, and also in backticks.
// - `_` stays an error as a policy name and as a hook name: as an argument label (a hook's, in
//   the generated method) it means no label at all.

extension PolicySwiftSource {
  /// The identifier of `generate`'s and `check`'s diagnostics about names that the generated
  /// Swift cannot declare or refer to.
  static let swiftNameID = DiagnosticID(tool: "swift-name")

  /// Policy names that code cannot refer to as `RetryPolicies.NAME`, in any spelling, and
  /// what Swift takes the member access for.
  static let unreferableNames: [String: String] = [
    "Type": "the metatype of 'RetryPolicies'",
    "Protocol": "the metatype of a protocol",
  ]

  /// Policy names that code refers to only in backticks: ``RetryPolicies.`init` ``.
  static let backtickedMemberNames: Set<String> = ["init", "self"]

  /// The name as a Swift identifier: in backticks when it is a keyword.
  static func identifier(_ name: String) -> String {
    swiftKeywords.contains(name) ? "`\(name)`" : name
  }

  /// How code refers to the policy `name`: `RetryPolicies.quick`, ``RetryPolicies.`init` ``.
  static func memberReference(_ name: String) -> String {
    "RetryPolicies." + (backtickedMemberNames.contains(name) ? "`\(name)`" : name)
  }

  /// Whether the name cannot be a Swift identifier even in backticks: `_` alone.
  static func isReserved(_ name: String) -> Bool {
    name == "_"
  }

  /// The errors about the names of a file that the generated Swift cannot use: a policy
  /// named `_`, `Type` or `Protocol`, each at its name, and a hook named `_`, at the hook.
  static func nameDiagnostics(of file: SourceFileSyntax) -> [Diagnostic] {
    var diagnostics: [Diagnostic] = []
    func error(_ summary: String, at range: SourceRange) {
      diagnostics.append(
        Diagnostic(id: swiftNameID, severity: .error, summary: summary, at: range))
    }
    for declaration in file.policies {
      let name = declaration.name
      if isReserved(name.text) {
        error("policy name '\(name.text)' is not a Swift identifier", at: name.range)
      } else if let meaning = unreferableNames[name.text] {
        error(
          "policy name '\(name.text)' cannot be referred to in Swift: 'RetryPolicies.\(name.text)'"
            + " is \(meaning); rename the policy", at: name.range)
      }
      for line in declaration.body.lines {
        for clause in line.clauses {
          guard clause.clause == .after, case .name(let hook)? = clause.arguments.first,
            isReserved(hook.text)
          else { continue }
          error("hook name '\(hook.text)' is not a Swift identifier", at: hook.range)
        }
      }
    }
    return diagnostics
  }

  /// `diagnostics` with `added` among them in the order of the text; a closing
  /// `diagnostics-omitted` note stays last.
  static func merging(_ added: [Diagnostic], into diagnostics: [Diagnostic]) -> [Diagnostic] {
    guard !added.isEmpty else { return diagnostics }
    var ordered = diagnostics
    var closing: Diagnostic?
    if ordered.last?.id == .diagnosticsOmitted { closing = ordered.removeLast() }
    for diagnostic in added {
      let index =
        ordered.firstIndex { $0.range.start.offset > diagnostic.range.start.offset }
        ?? ordered.endIndex
      ordered.insert(diagnostic, at: index)
    }
    if let closing { ordered.append(closing) }
    return ordered
  }

  /// Swift's keywords, and the words that need backticks as a member name.
  static let swiftKeywords: Set<String> = [
    "associatedtype", "borrowing", "class", "consuming", "deinit", "enum", "extension",
    "fileprivate", "func", "import", "init", "inout", "internal", "let", "nonisolated",
    "open", "operator", "private", "precedencegroup", "protocol", "public", "rethrows",
    "static", "struct", "subscript", "typealias", "var", "break", "case", "catch",
    "continue", "default", "defer", "do", "else", "fallthrough", "for", "guard", "if", "in",
    "repeat", "return", "throw", "switch", "where", "while", "Any", "as", "await", "false",
    "is", "nil", "self", "Self", "super", "throws", "true", "try", "Type", "Protocol",
  ]
}
