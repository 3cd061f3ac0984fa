import RetryPolicy

/// Where the clauses of an exported policy stand in its text, so that each warning about an
/// inexact mapping points at the clause it is about: read from the analysis's source ranges,
/// never by parsing or matching text.
package struct ExportLocator {
  /// The policy and its ranges.
  let checked: CheckedPolicy

  package init(_ checked: CheckedPolicy) {
    self.checked = checked
  }

  /// The source of compiled rule `rule`, if there is such a rule.
  private func source(ofRule rule: Int) -> RuleSource? {
    rule >= 0 && rule < checked.rules.count ? checked.rules[rule] : nil
  }

  /// The range of the keyword of `clause` in rule `rule`, else of the rule's head.
  func clause(_ clause: Clause, inRule rule: Int) -> SourceRange {
    guard let source = source(ofRule: rule) else { return checked.bodyRange }
    return source.clause(clause)?.keywordRange ?? source.headRange
  }

  /// The range of the head (`retry N`) count of rule `rule`.
  func head(ofRule rule: Int) -> SourceRange {
    source(ofRule: rule)?.countRange ?? checked.bodyRange
  }

  /// The range of the class name `name` in the `on` list of rule `rule`, else of `on`.
  func className(_ name: String, inRule rule: Int) -> SourceRange {
    if let found = source(ofRule: rule)?.errorClasses.first(where: { $0.text == name }) {
      return found.range
    }
    return clause(.on, inRule: rule)
  }

  /// The range of the policy's name, else of the whole policy.
  var policy: SourceRange { checked.nameRange ?? checked.range }

  /// The range of the keyword of the policy-wide clause `clause`, else of the body.
  func policyWide(_ clause: Clause) -> SourceRange {
    checked.policyWide(clause)?.keywordRange ?? checked.bodyRange
  }
}

/// What an export gives: the document, and what it could not say exactly.
package struct ExportResult {
  /// The document to print.
  package var document: JSONValue
  /// One note per inexact mapping, at its clause.
  package var notes: [(range: SourceRange, message: String)] = []

  mutating func note(_ message: String, at range: SourceRange) {
    notes.append((range, message))
  }
}

/// gRPC's status codes, by their canonical names, as `on` lists may name them.
enum GRPCStatus {
  /// The canonical names, in code order (code 0 is `OK`).
  static let names = [
    "OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
    "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
    "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS",
    "UNAUTHENTICATED",
  ]

  /// The canonical name of a class name written as a status: `unavailable`,
  /// `resourceExhausted`, `UNAVAILABLE`, `RESOURCE_EXHAUSTED`; nil for any other name.
  static func canonical(_ name: String) -> String? {
    let folded = name.replacingOccurrences(of: "_", with: "").lowercased()
    return names.first { $0.replacingOccurrences(of: "_", with: "").lowercased() == folded }
  }

  /// The policy-language spelling of a canonical name: `RESOURCE_EXHAUSTED` → `resourceExhausted`.
  static func camelCase(_ canonical: String) -> String {
    let parts = canonical.lowercased().split(separator: "_")
    guard let first = parts.first else { return canonical.lowercased() }
    return String(first)
      + parts.dropFirst().map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
  }

  /// The canonical name of a code number, or nil.
  static func name(ofCode code: Int) -> String? {
    code >= 0 && code < names.count ? names[code] : nil
  }
}

extension Duration {
  /// The duration as a protobuf JSON duration: `1.5s`, `0.1s`, `30s`.
  var protobufText: String { secondsText + "s" }
}
