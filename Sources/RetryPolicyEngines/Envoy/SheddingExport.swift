import RetryPolicy

extension EnvoyExport {
  /// The `thresholds[]` entry of `limit N queue M`: `max_requests` N, `max_pending_requests` M.
  static func limitThresholds(_ limit: Int, queue: Int) -> [JSONMember] {
    [
      JSONMember("max_requests", .int(limit)),
      JSONMember("max_pending_requests", .int(queue)),
    ]
  }

  /// The HTTP filters of `limit adaptive`, `throttle` and `rate` (contract §14), in the clause
  /// table's order; each inexact part noted at its clause.
  static func httpFilters(
    _ policy: CompiledPolicy, locator: ExportLocator, result: inout ExportResult
  ) -> [JSONValue] {
    var filters: [JSONValue] = []
    if case .adaptive(let minimum, let maximum)? = policy.limit {
      result.note(
        "Envoy's adaptive_concurrency filter is a gradient controller on the p90 latency for the"
          + " whole proxy; it has no lowest limit (min \(minimum)) and starts from its own"
          + " minimum-RTT measurement, not at min(20, max)",
        at: locator.policyWide(.limit))
      filters.append(
        filter(
          "envoy.filters.http.adaptive_concurrency",
          type: "envoy.extensions.filters.http.adaptive_concurrency.v3.AdaptiveConcurrency",
          [
            JSONMember(
              "gradient_controller_config",
              .object([
                JSONMember(
                  "sample_aggregate_percentile", .object([JSONMember("value", .double(90))])),
                JSONMember(
                  "concurrency_limit_params",
                  .object([
                    JSONMember("max_concurrency_limit", .int(maximum)),
                    JSONMember("concurrency_update_interval", .string("0.100s")),
                  ])),
                JSONMember(
                  "min_rtt_calc_params",
                  .object([
                    JSONMember("interval", .string("30s")),
                    JSONMember(
                      "request_count", .int(AdaptiveLimitController.calibrationSamples)),
                    JSONMember(
                      "min_concurrency",
                      .int(
                        min(maximum, max(minimum, AdaptiveLimitController.calibrationConcurrency)))),
                    JSONMember(
                      "buffer",
                      .object([
                        JSONMember("value", .double(AdaptiveLimitController.buffer * 100))
                      ])),
                  ])),
              ]))
          ]))
    }
    if let throttle = policy.throttle {
      result.note(
        "Envoy's admission_control counts a success by its own criteria (a status below 500),"
          + " not by the policy's rules, per proxy rather than per client",
        at: locator.policyWide(.throttle))
      // Envoy refuses with ((requests − accepts / threshold) / (requests + 1))^(1 / aggression):
      // the SRE formula with threshold 1/K and aggression 1.
      filters.append(
        filter(
          "envoy.filters.http.admission_control",
          type: "envoy.extensions.filters.http.admission_control.v3.AdmissionControl",
          [
            JSONMember(
              "success_criteria",
              .object([JSONMember("http_criteria", .object([]))])),
            JSONMember("sampling_window", .string(throttle.window.protobufText)),
            JSONMember(
              "aggression",
              .object([
                JSONMember("default_value", .double(1)),
                JSONMember("runtime_key", .string("retry_policy.throttle.aggression")),
              ])),
            JSONMember(
              "sr_threshold",
              .object([
                JSONMember(
                  "default_value",
                  .object([JSONMember("value", .double(percent(1 / throttle.factor)))])),
                JSONMember("runtime_key", .string("retry_policy.throttle.sr_threshold")),
              ])),
            JSONMember(
              "max_rejection_probability",
              .object([
                JSONMember("default_value", .object([JSONMember("value", .double(100))])),
                JSONMember("runtime_key", .string("retry_policy.throttle.max_rejection")),
              ])),
          ]))
    }
    if let rate = policy.rate {
      result.note(
        "Envoy's local_ratelimit refuses a request that finds no token (429) instead of"
          + " waiting for one, and adds \(rate.count) tokens once per"
          + " \(rate.period.policyText) rather than one at a time",
        at: locator.policyWide(.rate))
      let enabled = JSONValue.object([
        JSONMember(
          "default_value",
          .object([
            JSONMember("numerator", .int(100)), JSONMember("denominator", .string("HUNDRED")),
          ])),
        JSONMember("runtime_key", .string("retry_policy.rate.enabled")),
      ])
      filters.append(
        filter(
          "envoy.filters.http.local_ratelimit",
          type: "envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit",
          [
            JSONMember("stat_prefix", .string("retry_policy_rate")),
            JSONMember(
              "token_bucket",
              .object([
                JSONMember("max_tokens", .int(rate.burst)),
                JSONMember("tokens_per_fill", .int(rate.count)),
                JSONMember("fill_interval", .string(rate.period.protobufText)),
              ])),
            JSONMember("filter_enabled", enabled),
            JSONMember("filter_enforced", enabled),
          ]))
    }
    return filters
  }

  /// A fraction as a percentage with at most four decimals.
  private static func percent(_ fraction: Double) -> Double {
    (fraction * 100 * 10_000).rounded() / 10_000
  }

  /// An HTTP filter: its name and its typed config of type `type`.
  private static func filter(_ name: String, type: String, _ config: [JSONMember]) -> JSONValue {
    .object([
      JSONMember("name", .string(name)),
      JSONMember(
        "typed_config",
        .object([JSONMember("@type", .string("type.googleapis.com/" + type))] + config)),
    ])
  }
}
