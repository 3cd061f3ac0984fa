extension RetryMetrics {
  /// The values now in the OpenMetrics 1.0 text exposition: what Prometheus scrapes from a
  /// `/metrics` endpoint, served with the content type ``openMetricsContentType``.
  ///
  /// Each family has its `# TYPE` and `# HELP` lines (and `# UNIT` for durations), then a
  /// sample per policy name and label values, the names in order; the text ends with
  /// `# EOF`. Label values are escaped (`\\`, `\"`, `\n`). Every policy that recorded
  /// anything has its attempts by every outcome, its refusals by every cause, its successful
  /// runs, both histograms and its in-flight gauge; failed runs appear for each stop reason
  /// once a run stopped for it, and the breaker's state once a run of the policy used one.
  ///
  ///     # TYPE retry_policy_attempts counter
  ///     # HELP retry_policy_attempts Attempts of runs of retry policies, by outcome.
  ///     retry_policy_attempts_total{policy="payments",outcome="success"} 41
  ///     …
  ///     # EOF
  public func openMetricsText() -> String {
    let totals = policies().map(PolicyTotals.init)
    var writer = OpenMetricsWriter(capacity: 256 + totals.count * 4096, isOpenMetrics: true)
    writer.write(totals)
    return writer.text
  }

  /// The content type of ``openMetricsText()``, for the response's `Content-Type` header.
  public static let openMetricsContentType =
    "application/openmetrics-text; version=1.0.0; charset=utf-8"

  /// The values now in Prometheus' classic text format (0.0.4): the same samples as
  /// ``openMetricsText()``, for a scraper that does not ask for OpenMetrics (its `Accept`
  /// header has no `application/openmetrics-text`) and for `promtool check metrics`.
  ///
  /// The classic format names a counter's family with its `_total` suffix, and has neither
  /// `# UNIT` lines nor `# EOF`. Serve it with ``prometheusContentType``.
  public func prometheusText() -> String {
    let totals = policies().map(PolicyTotals.init)
    var writer = OpenMetricsWriter(capacity: 256 + totals.count * 4096, isOpenMetrics: false)
    writer.write(totals)
    return writer.text
  }

  /// The content type of ``prometheusText()``.
  public static let prometheusContentType = "text/plain; version=0.0.4; charset=utf-8"
}

/// Writes the OpenMetrics text of policies' totals into bytes, or Prometheus' classic text.
struct OpenMetricsWriter {
  typealias Offset = PolicyMetrics.Offset
  private var bytes: [UInt8] = []
  /// OpenMetrics 1.0; else the classic text format 0.0.4.
  private let isOpenMetrics: Bool

  init(capacity: Int, isOpenMetrics: Bool) {
    bytes.reserveCapacity(capacity)
    self.isOpenMetrics = isOpenMetrics
  }

  var text: String { String(decoding: bytes, as: UTF8.self) }

  /// Appends `value` escaped as a label value: `\` as `\\`, `"` as `\"`, a line feed as `\n`.
  static func appendEscaped(_ value: String, to bytes: inout [UInt8]) {
    for byte in value.utf8 {
      switch byte {
      case UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
      case UInt8(ascii: "\""): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
      case UInt8(ascii: "\n"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
      default: bytes.append(byte)
      }
    }
  }

  mutating func write(_ policies: [PolicyTotals]) {
    family(
      "retry_policy_attempts", type: "counter",
      help: "Attempts of runs of retry policies, by outcome.")
    for policy in policies {
      for outcome in RetryMetrics.AttemptOutcome.allCases {
        let value: UInt64
        switch outcome {
        case .success: value = policy.attemptsSucceeded
        case .failure: value = policy.attemptsFailed
        case .refused: value = policy.attemptsRefused
        }
        sample("retry_policy_attempts_total", policy, ",outcome=\"", outcome.rawValue, value)
      }
    }
    family(
      "retry_policy_runs", type: "counter",
      help: "Runs of retry policies, by outcome and stop reason.")
    for policy in policies {
      sample(
        "retry_policy_runs_total", policy, ",outcome=\"success\",reason=\"", "",
        policy.runsSucceeded)
      for reason in RetryStopReason.metricsCases {
        let count = policy.runsFailed(for: reason)
        guard count > 0 else { continue }
        sample(
          "retry_policy_runs_total", policy, ",outcome=\"failure\",reason=\"", reason.caseName,
          count)
      }
    }
    family(
      "retry_policy_refusals", type: "counter",
      help: "Attempts of retry policies refused before they were made, by cause.")
    for policy in policies {
      for cause in RetryMetrics.RefusalCause.allCases {
        sample(
          "retry_policy_refusals_total", policy, ",by=\"", cause.rawValue,
          policy.refusals(by: cause))
      }
    }
    histogram(
      "retry_policy_attempt_duration_seconds",
      help: "Durations of the attempts of retry policies.", policies,
      Offset.attemptSuccesses, Offset.attemptFailures, sum: Offset.attemptSum)
    histogram(
      "retry_policy_run_duration_seconds",
      help: "Durations of the runs of retry policies, waits included.", policies,
      Offset.runSuccesses, Offset.runFailures, sum: Offset.runSum)
    family(
      "retry_policy_in_flight_attempts", type: "gauge",
      help: "Attempts of retry policies started and not yet ended.")
    for policy in policies {
      append("retry_policy_in_flight_attempts")
      bytes.append(contentsOf: policy.metrics.labelPrefix)
      append("} ")
      append(policy.inFlight)
      newline()
    }
    family(
      "retry_policy_breaker_state", type: "gauge",
      help: "1 for the current state of the circuit breaker of a retry policy, else 0.")
    for policy in policies {
      guard let state = policy.breakerState else { continue }
      for (label, shown) in [
        ("closed", CircuitBreaker.State.closed), ("open", .open), ("half_open", .halfOpen),
      ] {
        sample(
          "retry_policy_breaker_state", policy, ",state=\"", label, state == shown ? 1 : 0)
      }
    }
    if isOpenMetrics { append("# EOF\n") }
  }

  /// The `# TYPE`, `# UNIT` and `# HELP` lines of family `family` (a counter's family is
  /// named without `_total` in OpenMetrics, with it in the classic format).
  private mutating func family(
    _ family: String, type: String, help: String, unit: String? = nil
  ) {
    let name = isOpenMetrics || type != "counter" ? family : family + "_total"
    append("# TYPE ")
    append(name)
    append(" ")
    append(type)
    newline()
    if let unit, isOpenMetrics {
      append("# UNIT ")
      append(name)
      append(" ")
      append(unit)
      newline()
    }
    append("# HELP ")
    append(name)
    append(" ")
    append(help)
    newline()
  }

  /// `NAME{policy="P"LABEL VALUE"} COUNT`, `label` ending in `="`.
  private mutating func sample(
    _ name: String, _ policy: PolicyTotals, _ label: String, _ value: String, _ count: UInt64
  ) {
    append(name)
    bytes.append(contentsOf: policy.metrics.labelPrefix)
    append(label)
    append(value)
    append("\"} ")
    append(count)
    newline()
  }

  private mutating func histogram(
    _ name: String, help: String, _ policies: [PolicyTotals], _ first: Int, _ second: Int,
    sum: Int
  ) {
    family(name, type: "histogram", help: help, unit: "seconds")
    for policy in policies {
      var cumulative: UInt64 = 0
      for bucket in 0..<DurationBuckets.bucketCount {
        cumulative &+= policy.bucket(bucket, first, second)
        append(name)
        append("_bucket")
        bytes.append(contentsOf: policy.metrics.labelPrefix)
        append(",le=\"")
        append(bucket < DurationBuckets.labels.count ? DurationBuckets.labels[bucket] : "+Inf")
        append("\"} ")
        append(cumulative)
        newline()
      }
      append(name)
      append("_count")
      bytes.append(contentsOf: policy.metrics.labelPrefix)
      append("} ")
      append(cumulative)
      newline()
      append(name)
      append("_sum")
      bytes.append(contentsOf: policy.metrics.labelPrefix)
      append("} ")
      appendSeconds(nanoseconds: policy.value(at: sum))
      newline()
    }
  }

  private mutating func append(_ text: String) {
    bytes.append(contentsOf: text.utf8)
  }

  private mutating func newline() {
    bytes.append(UInt8(ascii: "\n"))
  }

  /// A count in decimal.
  private mutating func append(_ value: UInt64) {
    guard value >= 10 else {
      bytes.append(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: value))
      return
    }
    var digits: (UInt64, Int) = (value, 0)
    let start = bytes.count
    while digits.0 > 0 {
      bytes.append(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: digits.0 % 10))
      digits.0 /= 10
      digits.1 += 1
    }
    bytes[start...].reverse()
  }

  /// Nanoseconds as seconds with up to nine decimals: `0.25`, `3.0`.
  private mutating func appendSeconds(nanoseconds: UInt64) {
    append(nanoseconds / 1_000_000_000)
    bytes.append(UInt8(ascii: "."))
    var fraction = nanoseconds % 1_000_000_000
    guard fraction > 0 else {
      bytes.append(UInt8(ascii: "0"))
      return
    }
    var divisor: UInt64 = 100_000_000
    while fraction > 0 {
      bytes.append(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: fraction / divisor))
      fraction %= divisor
      divisor /= 10
    }
  }
}
