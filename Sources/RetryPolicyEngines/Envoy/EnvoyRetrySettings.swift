import RetryPolicy

/// Envoy's retry settings for a policy: the fields of a route's `RouteAction` and of a
/// cluster.
///
/// `route` holds `timeout` (from `within`), `retry_policy` and `hedge_policy`; `cluster`
/// holds the `circuit_breakers` with the `retry_budget` (from `budget`) and, under
/// `breaker`, `outlier_detection`. Grammar/Engines.md describes each mapping.
///
///     let exported = try EnvoyRetrySettings.export(
///       policy: "retry 3 on 503 backoff 100ms max 1s within 10s")
///     print(exported.yaml)
public enum EnvoyRetrySettings {
  /// Exports the one policy of `text`, as `retry-policy export --to envoy` does.
  ///
  /// - Parameter text: the text of one policy, as ``RetryPolicy/compile(policy:vocabulary:)``
  ///   reads it.
  /// - Returns: the document (``EngineDocument/yaml`` or ``EngineDocument/json``) and a
  ///   warning for each clause Envoy cannot express exactly.
  /// - Throws: ``RetryPolicy/PolicyCompileError`` when the text has an error.
  public static func export(policy text: String) throws -> EngineDocument {
    let checked = try checkedPolicy(text)
    return EngineDocument(EnvoyExport.export(checked.policy, locator: ExportLocator(checked)))
  }
}
