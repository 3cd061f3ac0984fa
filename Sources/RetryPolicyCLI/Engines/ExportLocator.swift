import RetryPolicy

/// Where the clauses of an exported policy stand in its text, so that each warning about an
/// inexact mapping points at the clause it is about.
struct ExportLocator {
  /// The policy's body as written.
  let body: PolicyBodySyntax

  /// The lines that are rules (`retry N …`), in order: rule `index` of the compiled policy.
  private var ruleLines: [LineSyntax] { body.lines.filter { $0.head != nil } }

  /// The range of the keyword `keyword` in rule `rule`, else of the rule's head.
  func clause(_ keyword: String, inRule rule: Int) -> SourceRange {
    let lines = ruleLines
    guard rule >= 0, rule < lines.count else { return body.range }
    let line = lines[rule]
    if let clause = line.clauses.first(where: { $0.keyword == keyword }) {
      return clause.keywordRange
    }
    return line.head?.range ?? line.range
  }

  /// The range of the head (`retry N`) of rule `rule`.
  func head(ofRule rule: Int) -> SourceRange {
    let lines = ruleLines
    guard rule >= 0, rule < lines.count else { return body.range }
    return lines[rule].head?.countRange ?? lines[rule].range
  }

  /// The range of the class name `name` in the `on` list of rule `rule`, else of `on`.
  func className(_ name: String, inRule rule: Int) -> SourceRange {
    let lines = ruleLines
    guard rule >= 0, rule < lines.count else { return body.range }
    for clause in lines[rule].clauses {
      if case .on(let names) = clause.kind, let found = names.first(where: { $0.text == name }) {
        return found.range
      }
    }
    return clause("on", inRule: rule)
  }

  /// The range of the policy-wide clause `keyword`, wherever it stands.
  func policyWide(_ keyword: String) -> SourceRange {
    for line in body.lines {
      if let clause = line.clauses.first(where: { $0.keyword == keyword }) {
        return clause.keywordRange
      }
    }
    return body.range
  }
}

/// What an export gives: the document, and what it could not say exactly.
struct ExportResult {
  /// The document to print.
  var document: JSONValue
  /// One note per inexact mapping, at its clause.
  var notes: [(range: SourceRange, message: String)] = []

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
