import RetryPolicy

// `breaker P% over D min N for D` in the engines' configurations: Envoy's outlier detection,
// and gRPC's nothing.

extension EnvoyExport {
  /// The cluster's `outlier_detection` (`config.cluster.v3.OutlierDetection`) for `breaker`:
  /// failure-percentage ejection only, the other detectors turned off, with a note at the
  /// clause on what differs.
  ///
  ///     breaker 50% over 30s min 20 for 5s
  ///     → {"interval": "30s", "base_ejection_time": "5s", "max_ejection_percent": 100,
  ///        "failure_percentage_threshold": 50, "failure_percentage_request_volume": 20,
  ///        "failure_percentage_minimum_hosts": 1, "enforcing_failure_percentage": 100,
  ///        "enforcing_consecutive_5xx": 0, "enforcing_consecutive_gateway_failure": 0,
  ///        "enforcing_success_rate": 0}
  static func outlierDetection(
    _ breaker: CircuitBreakerPolicy, locator: ExportLocator, result: inout ExportResult
  ) -> JSONMember {
    result.note(
      "Envoy ejects a failing host from the cluster (outlier detection), per host and for the"
        + " whole proxy, not a circuit per client; it counts over fixed intervals of"
        + " \(breaker.window.policyText), not a sliding window, and doubles the ejection time of"
        + " a host ejected again; there is no single half-open probe",
      at: locator.policyWide(.breaker))
    return JSONMember(
      "outlier_detection",
      .object([
        JSONMember("interval", .string(breaker.window.protobufText)),
        JSONMember("base_ejection_time", .string(breaker.openDuration.protobufText)),
        JSONMember("max_ejection_percent", .int(100)),
        JSONMember("failure_percentage_threshold", .int(breaker.failurePercent)),
        JSONMember("failure_percentage_request_volume", .int(breaker.minimumAttempts)),
        JSONMember("failure_percentage_minimum_hosts", .int(1)),
        JSONMember("enforcing_failure_percentage", .int(100)),
        JSONMember("enforcing_consecutive_5xx", .int(0)),
        JSONMember("enforcing_consecutive_gateway_failure", .int(0)),
        JSONMember("enforcing_success_rate", .int(0)),
      ]))
  }
}
