import RetryPolicy

/// A policy written for another engine: the document, and a warning for each clause the
/// engine cannot express exactly.
///
/// The text and the warnings are those `retry-policy export` prints: the same bytes on
/// standard output, the same `LINE:COL: warning:` lines on standard error.
///
///     let exported = try EnvoyRetrySettings.export(policy: "retry 3 on 503 backoff 100ms")
///     print(exported.yaml)
///     for warning in exported.warnings { print("<policy>:\(warning)") }
public struct EngineDocument: Sendable {
  /// The document as a value.
  package var value: JSONValue

  /// One warning per inexact mapping, at the clause it is about, in the order of the text;
  /// empty when the engine runs the policy exactly.
  ///
  /// Each has the identifier ``RetryPolicy/DiagnosticID/inexactExport`` and severity
  /// `warning`.
  public var warnings: [Diagnostic]

  /// The document as JSON, indented by two spaces and ending with a line end.
  public var json: String { JSONWriter().write(value) + "\n" }

  /// The document as block-style YAML, ending with a line end.
  public var yaml: String { YAMLWriter().write(value) }

  /// The document and the warnings of an export's result.
  package init(_ result: ExportResult) {
    value = result.document
    warnings = result.diagnostics(isStrict: false)
  }
}

extension DiagnosticID {
  /// The diagnostic of an export: a clause the engine cannot express exactly.
  ///
  /// A warning (an error under `retry-policy export --strict`); `check` and `compile` never
  /// report it.
  public static let inexactExport = DiagnosticID(tool: "inexact-export")
}

extension ExportResult {
  /// The notes as diagnostics in the order of the text: warnings, or errors when `isStrict`.
  package func diagnostics(isStrict: Bool) -> [Diagnostic] {
    notes.map {
      Diagnostic(
        id: .inexactExport, severity: isStrict ? .error : .warning, summary: $0.message,
        at: $0.range)
    }.sorted { $0.range.start.offset < $1.range.start.offset }
  }
}

/// The one policy of `text`, with its ranges, or the error `compile(policy:)` throws.
func checkedPolicy(_ text: String) throws -> CheckedPolicy {
  let analysis = analyze(policy: text)
  guard !analysis.hasErrors, let checked = analysis.checked.first else {
    throw PolicyCompileError(diagnostics: analysis.diagnostics)
  }
  return checked
}
