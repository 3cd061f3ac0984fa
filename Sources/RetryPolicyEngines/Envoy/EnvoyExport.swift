import RetryPolicy

/// `retry-policy export --to envoy`: a route's `retry_policy`, `timeout` and `hedge_policy`
/// (fields of `config.route.v3.RouteAction`) and a cluster's `retry_budget` (in
/// `config.cluster.v3.CircuitBreakers`), as `{"route": …, "cluster": …}`.
///
/// Envoy's back-off is always exponential with factor 2 and full jitter, retry n waiting up to
/// (2^n − 1) × base; its hedging only fires on a per-try timeout. Each clause Envoy cannot say
/// exactly adds a note.
///
/// Numeric statuses (`on 503, 5xx`, issue 11) go to `retriable_status_codes` with the
/// `retriable-status-codes` condition: see ``retryConditions(_:locator:result:)``.
package enum EnvoyExport {
  /// The `num_retries` of `retry forever`, bounded in practice by the route's `timeout`.
  static let foreverRetries = 100
  /// The class names Envoy's `retry_on` has a condition for, by the name `on` uses.
  ///
  /// The built-in class of a timed-out attempt is Envoy's `reset`.
  static let conditions: [String: String] = [
    "cancelled": "cancelled", "deadlineExceeded": "deadline-exceeded", "internal": "internal",
    "resourceExhausted": "resource-exhausted", "unavailable": "unavailable",
    "reset": "reset", "connectFailure": "connect-failure",
    "gatewayError": "gateway-error", "serverError": "5xx", "refusedStream": "refused-stream",
    "retriable4xx": "retriable-4xx",
  ].merging(ErrorClassName.timeout.map { [$0: "reset"] } ?? [:]) { first, _ in first }

  package static func export(_ policy: CompiledPolicy, locator: ExportLocator) -> ExportResult {
    var result = ExportResult(document: .null)
    var route: [JSONMember] = []
    if let deadline = policy.deadline {
      route.append(JSONMember("timeout", .string(deadline.protobufText)))
      result.note(
        "Envoy's route 'timeout' also cancels the attempt in flight at \(deadline.policyText);"
          + " '\(Keyword.within.text)' only stops new retries", at: locator.policyWide(.within))
    }
    var retry: [JSONMember] = []
    let (conditions, statuses) = retryConditions(policy, locator: locator, result: &result)
    if let rule = policy.rules.first, !conditions.isEmpty {
      retry.append(JSONMember("retry_on", .string(conditions.joined(separator: ","))))
      retry.append(JSONMember("num_retries", .int(retries(rule, policy, locator, &result))))
      if !statuses.isEmpty {
        retry.append(JSONMember("retriable_status_codes", .array(statuses.map(JSONValue.int))))
      }
      if let hedge = policy.hedge {
        retry.append(JSONMember("per_try_timeout", .string(hedge.delay.protobufText)))
        if policy.attemptTimeout != nil {
          result.note(
            "Envoy hedges when an attempt passes its per_try_timeout: '\(Keyword.timeout.text)' is replaced by"
              + " the hedge delay", at: locator.policyWide(.timeout))
        }
      } else if let timeout = policy.attemptTimeout {
        retry.append(JSONMember("per_try_timeout", .string(timeout.protobufText)))
      }
      // No retries: no back-off to say anything about.
      if policy.hedge == nil, rule.behavior.maxCount != 0 {
        retry.append(JSONMember("retry_back_off", backOff(rule, locator, &result)))
      }
      if rule.honorsRetryAfter {
        var limited: [JSONMember] = [
          JSONMember(
            "reset_headers",
            .array([
              .object([
                JSONMember("name", .string("retry-after")),
                JSONMember("format", .string("SECONDS")),
              ])
            ]))
        ]
        if let cap = rule.maxDelay {
          limited.append(JSONMember("max_interval", .string(cap.protobufText)))
        }
        retry.append(JSONMember("rate_limited_retry_back_off", .object(limited)))
        result.note(
          "Envoy reads Retry-After as seconds only, not as an HTTP date",
          at: locator.clause(.honoringRetryAfter, inRule: 0))
      }
      route.append(JSONMember("retry_policy", .object(retry)))
    }
    if let hedge = policy.hedge {
      route.append(
        JSONMember("hedge_policy", .object([JSONMember("hedge_on_per_try_timeout", .bool(true))])))
      result.note(
        "Envoy hedges only when an attempt passes its per_try_timeout: '\(Keyword.hedge.text) \(hedge.count) \(Keyword.after.text)"
          + " \(hedge.delay.policyText)' becomes per_try_timeout \(hedge.delay.policyText), and"
          + " a failed attempt is retried after Envoy's back-off",
        at: locator.policyWide(.hedge))
    }
    var document = [JSONMember("route", .object(route))]
    var cluster: [JSONMember] = []
    // The cluster's settings, in the clause table's order. The `switch` has a case for every
    // clause, so that a new clause is placed here: in the cluster or in the route.
    for clause in Clause.allCases {
      switch clause {
      case .budget:
        guard let ratio = policy.budgetRatio else { continue }
        var thresholds: [JSONMember] = []
        if case .fixed(let limit, let queue)? = policy.limit {
          thresholds = limitThresholds(limit, queue: queue)
        }
        cluster.append(retryBudget(ratio, with: thresholds))
        result.note(
          "Envoy's retry budget limits concurrent retries to a share of active requests (at least"
            + " \(RetryBudget.initialTokens)), not retries to a share of first attempts",
          at: locator.policyWide(.budget))
      case .breaker:
        guard let breaker = policy.breaker else { continue }
        cluster.append(outlierDetection(breaker, locator: locator, result: &result))
      case .limit:
        // With `budget`, the thresholds went into the budget's entry (above).
        guard case .fixed(let limit, let queue)? = policy.limit, policy.budgetRatio == nil
        else { continue }
        cluster.append(
          JSONMember(
            "circuit_breakers",
            .object([
              JSONMember(
                "thresholds", .array([.object(limitThresholds(limit, queue: queue))]))
            ])))
      // HTTP filters (below).
      case .throttle, .rate:
        continue
      // The route's (above).
      case .within, .timeout, .hedge, .on, .except, .immediately, .delay, .backoff, .delays,
        .jitter, .max, .after, .honoringRetryAfter:
        continue
      }
    }
    if !cluster.isEmpty { document.append(JSONMember("cluster", .object(cluster))) }
    let filters = httpFilters(policy, locator: locator, result: &result)
    if !filters.isEmpty { document.append(JSONMember("http_filters", .array(filters))) }
    result.document = .object(document)
    return result
  }

  /// The cluster's `circuit_breakers` for `budget P%`: a retry budget of P percent.
  static func retryBudget(_ ratio: Double, with thresholds: [JSONMember] = []) -> JSONMember {
    let budget = JSONValue.object([
      JSONMember("budget_percent", .object([JSONMember("value", .double(ratio * 100))])),
      JSONMember("min_retry_concurrency", .int(RetryBudget.initialTokens)),
    ])
    return JSONMember(
      "circuit_breakers",
      .object([
        JSONMember(
          "thresholds", .array([.object(thresholds + [JSONMember("retry_budget", budget)])]))
      ]))
  }

  /// The `retry_on` conditions and `retriable_status_codes` of every rule's `on`.
  ///
  /// A status (`503`) or class (`5xx`) in `on` goes to `statuses`, every code of it, with the
  /// condition `retriable-status-codes`: exact, where Envoy's `5xx` condition would also
  /// retry resets. `transient` becomes its statuses plus `reset` and `connect-failure`, noted.
  static func retryConditions(
    _ policy: CompiledPolicy, locator: ExportLocator, result: inout ExportResult
  ) -> ([String], [Int]) {
    var conditions: [String] = []
    var statuses: [Int] = []
    func add(_ condition: String) {
      if !conditions.contains(condition) { conditions.append(condition) }
    }
    for (index, rule) in policy.rules.enumerated() {
      if index > 0 {
        result.note(
          "Envoy has one retry policy per route: rule \(index + 1)'s conditions join rule 1's,"
            + " and its count and delays are left out", at: locator.head(ofRule: index))
      }
      if rule.errorClasses.isEmpty {
        result.note(
          "Envoy retries only the conditions it lists; a rule without '\(Keyword.on.text)' becomes"
            + " '5xx,reset,connect-failure'", at: locator.head(ofRule: index))
        for condition in ["5xx", "reset", "connect-failure"] { add(condition) }
      }
      for name in rule.errorClasses {
        // A status (`503`) or class (`5xx`): the codes themselves, exactly. Envoy's own `5xx`
        // condition would also retry resets and connect failures, which `on 5xx` does not.
        if let codes = HTTPErrorClasses.statuses(of: name) {
          add("retriable-status-codes")
          for code in codes where !statuses.contains(code) { statuses.append(code) }
          continue
        }
        if name == "transient" {
          add("retriable-status-codes")
          for code in HTTPErrorClasses.transientStatuses where !statuses.contains(code) {
            statuses.append(code)
          }
          for condition in ["reset", "connect-failure"] { add(condition) }
          result.note(
            "Envoy has no 'transient': it becomes statuses 408, 500, 502, 503 and 504 with"
              + " 'reset' and 'connect-failure', which differ from the URL errors it names",
            at: locator.className(name, inRule: index))
          continue
        }
        let key = GRPCStatus.canonical(name).map(GRPCStatus.camelCase) ?? name
        guard let condition = Self.conditions[key] else {
          result.note(
            "Envoy has no retry condition for '\(name)'; it is left out",
            at: locator.className(name, inRule: index))
          continue
        }
        add(condition)
      }
      // `except 501` under `on 5xx` is exact: the code is not listed. Other names cannot be.
      var unexpressed = false
      for name in rule.excludedClasses {
        guard let codes = HTTPErrorClasses.statuses(of: name) else {
          unexpressed = true
          continue
        }
        statuses.removeAll { codes.contains($0) }
      }
      if unexpressed {
        result.note(
          "Envoy has no '\(Keyword.except.text)'; it is left out",
          at: locator.clause(.except, inRule: index))
      }
      if let hook = rule.hook {
        result.note(
          "Envoy runs no hooks; '\(Keyword.after.text) \(hook)' is left out",
          at: locator.clause(.after, inRule: index))
      }
    }
    return (conditions, statuses)
  }

  private static func retries(
    _ rule: RetryRule, _ policy: CompiledPolicy, _ locator: ExportLocator,
    _ result: inout ExportResult
  ) -> Int {
    if let hedge = policy.hedge { return hedge.count }
    guard let count = rule.behavior.maxCount else {
      result.note(
        "Envoy needs a retry count: '\(Keyword.retry.text) \(Keyword.forever.text)' becomes \(foreverRetries) retries",
        at: locator.head(ofRule: 0))
      return foreverRetries
    }
    return count
  }

  /// `retry_back_off`: base and cap; Envoy's factor is 2 and its jitter full.
  private static func backOff(
    _ rule: RetryRule, _ locator: ExportLocator, _ result: inout ExportResult
  ) -> JSONValue {
    let backoff = EngineBackoff(rule, attempts: (rule.behavior.maxCount ?? foreverRetries) + 1)
    var changes: [String] = []
    if !backoff.isPositive {
      changes.append("a positive back-off is needed, so retries wait up to 1ms, not 0s")
    } else {
      if backoff.multiplier != 2 {
        changes.append(
          "Envoy's back-off grows by a factor of 2, not \(NumberText.decimal(backoff.multiplier))")
      }
      changes.append(
        "retry n waits a uniform time in [0, (2^n − 1) × \(backoff.initial.policyText)], capped,"
          + " not \(EngineBackoff.jitterText(rule.jitter))")
    }
    result.note(changes.joined(separator: "; "), at: backoff.range(locator))
    return .object([
      JSONMember("base_interval", .string(backoff.initial.protobufText)),
      JSONMember("max_interval", .string(backoff.maximum.protobufText)),
    ])
  }
}
