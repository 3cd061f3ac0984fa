import Testing

@testable import RetryPolicy

/// The counters of ``RetryMetrics`` as recorded directly, and the text and snapshot they give.
@Suite("RetryMetrics recording")
struct RetryMetricsRecordingTests {
  @Test("attempts are counted by outcome, refused attempts by cause too")
  func attemptsByOutcome() {
    let metrics = RetryMetrics()
    let payments = metrics.policy(named: "payments")
    for _ in 0..<3 { payments.attemptStarted() }
    payments.attemptEnded(succeeded: true, after: .milliseconds(3))
    payments.attemptEnded(succeeded: false, after: .milliseconds(20))
    payments.attemptRefused(by: .breaker)
    payments.attemptRefused(by: .budget)
    payments.attemptRefused(by: .budget)
    let values = metrics.snapshot()[policy: "payments"]
    #expect(values?.attempts == [.success: 1, .failure: 1, .refused: 3])
    #expect(values?.refusals == [.breaker: 1, .budget: 2, .limit: 0, .throttle: 0, .rate: 0])
    #expect(values?.inFlightAttempts == 1)
    let text = metrics.openMetricsText()
    #expect(
      text.contains("retry_policy_attempts_total{policy=\"payments\",outcome=\"success\"} 1\n"))
    #expect(
      text.contains("retry_policy_attempts_total{policy=\"payments\",outcome=\"failure\"} 1\n"))
    #expect(
      text.contains("retry_policy_attempts_total{policy=\"payments\",outcome=\"refused\"} 3\n"))
    #expect(text.contains("retry_policy_refusals_total{policy=\"payments\",by=\"budget\"} 2\n"))
    #expect(text.contains("retry_policy_refusals_total{policy=\"payments\",by=\"rate\"} 0\n"))
    #expect(text.contains("retry_policy_in_flight_attempts{policy=\"payments\"} 1\n"))
  }

  @Test("runs are counted by outcome and the stop reason's case name")
  func runsByReason() {
    let metrics = RetryMetrics()
    let policy = metrics.policy(named: nil)
    policy.runEnded(.succeeded, after: .seconds(1))
    policy.runEnded(.failed(.retriesExhausted), after: .seconds(3))
    policy.runEnded(.failed(.retriesExhausted), after: .seconds(4))
    policy.runEnded(.failed(.circuitOpen), after: .zero)
    let values = metrics.snapshot()[policy: "anonymous"]
    #expect(values?.successfulRuns == 1)
    #expect(values?.failedRuns == [.retriesExhausted: 2, .circuitOpen: 1])
    let text = metrics.openMetricsText()
    #expect(
      text.contains(
        "retry_policy_runs_total{policy=\"anonymous\",outcome=\"success\",reason=\"\"} 1\n"))
    #expect(
      text.contains(
        "retry_policy_runs_total{policy=\"anonymous\",outcome=\"failure\",reason=\"retriesExhausted\"} 2\n"
      ))
    #expect(
      text.contains(
        "retry_policy_runs_total{policy=\"anonymous\",outcome=\"failure\",reason=\"circuitOpen\"} 1\n"
      ))
    #expect(!text.contains("reason=\"cancelled\""))
  }

  @Test("durations fall in the bucket whose bound they do not exceed")
  func histogramBuckets() {
    let metrics = RetryMetrics()
    let policy = metrics.policy(named: "search")
    policy.attemptEnded(succeeded: true, after: .milliseconds(1))
    policy.attemptEnded(succeeded: false, after: .microseconds(1001))
    policy.attemptEnded(succeeded: true, after: .milliseconds(250))
    policy.attemptEnded(succeeded: true, after: .seconds(61))
    let histogram = metrics.snapshot()[policy: "search"]?.attemptDurations
    #expect(histogram?.bucketCounts == [1, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1])
    #expect(histogram?.count == 4)
    #expect(histogram?.sum == .nanoseconds(61_252_001_000))
    let text = metrics.openMetricsText()
    let lines = text.split(separator: "\n").filter {
      $0.hasPrefix("retry_policy_attempt_duration_seconds")
    }
    #expect(
      lines == [
        #"retry_policy_attempt_duration_seconds_bucket{policy="search",le="0.001"} 1"#,
        #"retry_policy_attempt_duration_seconds_bucket{policy="search",le="0.0025"} 2"#,
        #"retry_policy_attempt_duration_seconds_bucket{policy="search",le="0.005"} 2"#,
        #"retry_policy_attempt_duration_seconds_bucket{policy="search",le="0.01"} 2"#,
        #"retry_policy_attempt_duration_seconds_bucket{policy="search",le="0.025"} 2"#,
        #"retry_policy_attempt_duration_seconds_bucket{policy="search",le="0.05"} 2"#,
        #"retry_policy_attempt_duration_seconds_bucket{policy="search",le="0.1"} 2"#,
        #"retry_policy_attempt_duration_seconds_bucket{policy="search",le="0.25"} 3"#,
        #"retry_policy_attempt_duration_seconds_bucket{policy="search",le="0.5"} 3"#,
        #"retry_policy_attempt_duration_seconds_bucket{policy="search",le="1.0"} 3"#,
        #"retry_policy_attempt_duration_seconds_bucket{policy="search",le="2.5"} 3"#,
        #"retry_policy_attempt_duration_seconds_bucket{policy="search",le="5.0"} 3"#,
        #"retry_policy_attempt_duration_seconds_bucket{policy="search",le="10.0"} 3"#,
        #"retry_policy_attempt_duration_seconds_bucket{policy="search",le="30.0"} 3"#,
        #"retry_policy_attempt_duration_seconds_bucket{policy="search",le="60.0"} 3"#,
        #"retry_policy_attempt_duration_seconds_bucket{policy="search",le="+Inf"} 4"#,
        #"retry_policy_attempt_duration_seconds_count{policy="search"} 4"#,
        #"retry_policy_attempt_duration_seconds_sum{policy="search"} 61.252001"#,
      ])
  }

  @Test("a run's duration goes to the run histogram, whatever its outcome")
  func runHistogram() {
    let metrics = RetryMetrics()
    let policy = metrics.policy(named: "search")
    policy.runEnded(.succeeded, after: .milliseconds(40))
    policy.runEnded(.failed(.deadlineExceeded), after: .seconds(30))
    let histogram = metrics.snapshot()[policy: "search"]?.runDurations
    #expect(histogram?.count == 2)
    #expect(histogram?.bucketCounts[5] == 1)
    #expect(histogram?.bucketCounts[13] == 1)
    #expect(histogram?.sum == .milliseconds(30_040))
    let text = metrics.openMetricsText()
    #expect(
      text.contains("retry_policy_run_duration_seconds_bucket{policy=\"search\",le=\"0.05\"} 1\n"))
    #expect(
      text.contains("retry_policy_run_duration_seconds_bucket{policy=\"search\",le=\"30.0\"} 2\n"))
    #expect(text.contains("retry_policy_run_duration_seconds_count{policy=\"search\"} 2\n"))
    #expect(text.contains("retry_policy_run_duration_seconds_sum{policy=\"search\"} 30.04\n"))
  }

  @Test("the breaker's state is 1 for the current state and 0 for the others")
  func breakerState() {
    let metrics = RetryMetrics()
    let breaker = CircuitBreaker()
    let policy = metrics.policy(named: "payments")
    policy.observe(breaker)
    _ = metrics.policy(named: "search")
    #expect(metrics.snapshot()[policy: "payments"]?.breakerState == .closed)
    #expect(metrics.snapshot()[policy: "search"]?.breakerState == nil)
    breaker.isolate()
    let text = metrics.openMetricsText()
    #expect(text.contains("retry_policy_breaker_state{policy=\"payments\",state=\"closed\"} 0\n"))
    #expect(text.contains("retry_policy_breaker_state{policy=\"payments\",state=\"open\"} 1\n"))
    #expect(
      text.contains("retry_policy_breaker_state{policy=\"payments\",state=\"half_open\"} 0\n"))
    #expect(!text.contains("retry_policy_breaker_state{policy=\"search\""))
  }

  @Test("label values are escaped and the text has every family's headers, then # EOF")
  func textFormat() {
    let metrics = RetryMetrics()
    metrics.policy(named: "a\\b\"c\nd").attemptStarted()
    let text = metrics.openMetricsText()
    #expect(text.contains(#"retry_policy_in_flight_attempts{policy="a\\b\"c\nd"} 1"#))
    #expect(text.hasSuffix("\n# EOF\n"))
    for (family, type) in [
      ("retry_policy_attempts", "counter"), ("retry_policy_runs", "counter"),
      ("retry_policy_refusals", "counter"),
      ("retry_policy_attempt_duration_seconds", "histogram"),
      ("retry_policy_run_duration_seconds", "histogram"),
      ("retry_policy_in_flight_attempts", "gauge"), ("retry_policy_breaker_state", "gauge"),
    ] {
      #expect(text.contains("# TYPE \(family) \(type)\n"))
      #expect(text.contains("# HELP \(family) "))
    }
    #expect(text.contains("# UNIT retry_policy_attempt_duration_seconds seconds\n"))
    #expect(text.contains("# UNIT retry_policy_run_duration_seconds seconds\n"))
  }

  @Test("policies appear in the order of their names; one name is one set of counters")
  func policiesInOrder() {
    let metrics = RetryMetrics()
    for name in ["zeta", "alpha", "mid", "alpha"] {
      metrics.policy(named: name).attemptStarted()
    }
    // Names that share the lookup cache's entry still find their own counters.
    for name in ["ab", "ab", "ba", "ab"] {
      metrics.policy(named: name).attemptStarted()
    }
    let snapshot = metrics.snapshot()
    #expect(snapshot.policies.map(\.policy) == ["ab", "alpha", "ba", "mid", "zeta"])
    #expect(snapshot[policy: "alpha"]?.inFlightAttempts == 2)
    #expect(snapshot[policy: "ab"]?.inFlightAttempts == 3)
    #expect(snapshot[policy: "ba"]?.inFlightAttempts == 1)
  }

  @Test("empty metrics are only the headers and # EOF")
  func empty() {
    let text = RetryMetrics().openMetricsText()
    #expect(!text.contains("{"))
    #expect(text.hasSuffix("# EOF\n"))
    #expect(RetryMetrics().snapshot().policies.isEmpty)
  }

  @Test(
    "each stop reason's label is its case name",
    arguments: zip(
      RetryStopReason.metricsCases,
      [
        "retriesExhausted", "errorNotMatched", "deadlineExceeded", "budgetExhausted",
        "cancelled", "hookFailed", "hedgeLimitReached", "circuitOpen", "throttled",
        "limitExceeded", "rateLimited",
      ]))
  func caseNames(reason: RetryStopReason, name: String) {
    #expect(RetryStopReason.metricsCases[reason.metricsIndex] == reason)
    #expect(reason.caseName == name)
  }

  @Test("the core's reasons have places of their own, then the refusals' places")
  func reasonPlaces() {
    #expect(RetryStopReason.metricsCases.count == 11)
    #expect(RetryStopReason.metricsCount == 11 + RefusalSlots.count)
    #expect(RetryStopReason.metricsCase(at: 0) == .retriesExhausted)
    #expect(RetryStopReason.metricsCase(at: 10) == .rateLimited)
  }

  @Test("seven refusal names are counted apart; any further name shares 'retriesRefused'")
  func refusalPlaces() {
    let slots = RefusalSlots()
    let refusals = (0..<9).map { RetryRefusal(name: "refusal\($0)", description: "refused \($0)") }
    #expect(slots.refusal(atSlot: 0) == nil)
    #expect(refusals.map(slots.slot(of:)) == [0, 1, 2, 3, 4, 5, 6, 7, 7])
    // A name keeps its place; another description under the same name is the same label.
    #expect(slots.slot(of: RetryRefusal(name: "refusal2", description: "other")) == 2)
    #expect(slots.refusal(atSlot: 2) == refusals[2])
    #expect(slots.refusal(atSlot: 7) == RefusalSlots.overflow)
    #expect(RetryStopReason.retriesRefused(RefusalSlots.overflow).caseName == "retriesRefused")
  }

  @Test("the classic text names counters' families with _total and has no UNIT or EOF")
  func classicText() {
    let metrics = RetryMetrics()
    let policy = metrics.policy(named: "payments")
    policy.attemptStarted()
    policy.attemptEnded(succeeded: true, after: .milliseconds(2))
    let text = metrics.prometheusText()
    #expect(text.contains("# TYPE retry_policy_attempts_total counter\n"))
    #expect(text.contains("# HELP retry_policy_runs_total "))
    #expect(text.contains("# TYPE retry_policy_attempt_duration_seconds histogram\n"))
    #expect(!text.contains("# UNIT"))
    #expect(!text.contains("# EOF"))
    let samples = { (text: String) in text.split(separator: "\n").filter { !$0.hasPrefix("#") } }
    #expect(samples(text) == samples(metrics.openMetricsText()))
  }
}
