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
    return writer.finish()
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
    return writer.finish()
  }

  /// The content type of ``prometheusText()``.
  public static let prometheusContentType = "text/plain; version=0.0.4; charset=utf-8"
}

/// Writes the OpenMetrics text of policies' totals into bytes, or Prometheus' classic text.
struct OpenMetricsWriter: ~Copyable {
  typealias Offset = PolicyMetrics.Offset
  private var bytes: ByteBuffer
  /// OpenMetrics 1.0; else the classic text format 0.0.4.
  private let isOpenMetrics: Bool

  init(capacity: Int, isOpenMetrics: Bool) {
    bytes = ByteBuffer(capacity: capacity)
    self.isOpenMetrics = isOpenMetrics
  }

  /// The text written.
  func finish() -> String { bytes.finish() }

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
    // Every line is the sample's name, the policy's label (rendered once per policy, see
    // ``PolicyMetrics/labelBytes``), the rest of its labels and its value: the constant
    // parts are rendered once for the process (``OpenMetricsPieces``), so that a line is a
    // few copies of bytes, with no reference counted, and a number.
    let pieces = OpenMetricsPieces.shared
    family(
      "retry_policy_attempts", type: "counter",
      help: "Attempts of runs of retry policies, by outcome.")
    for policy in policies {
      sample(pieces.attempts, policy, pieces.outcomes[0], policy.attemptsSucceeded)
      sample(pieces.attempts, policy, pieces.outcomes[1], policy.attemptsFailed)
      sample(pieces.attempts, policy, pieces.outcomes[2], policy.attemptsRefused)
    }
    family(
      "retry_policy_runs", type: "counter",
      help: "Runs of retry policies, by outcome and stop reason.")
    for policy in policies {
      sample(pieces.runs, policy, pieces.succeeded, policy.runsSucceeded)
      for (index, reason) in RetryStopReason.metricsCases.enumerated() {
        let count = policy.runsFailed(for: reason)
        guard count > 0 else { continue }
        sample(pieces.runs, policy, pieces.reasons[index], count)
      }
      // The refusals' places, labelled with each refusal's name (rendered here: the names
      // are the hosts').
      for index in RetryStopReason.metricsCases.count..<RetryStopReason.metricsCount {
        let count = policy.value(at: Offset.runReasons + index)
        guard count > 0, let reason = RetryStopReason.metricsCase(at: index) else { continue }
        var suffix = Array(",outcome=\"failure\",reason=\"".utf8)
        Self.appendEscaped(reason.caseName, to: &suffix)
        suffix.append(contentsOf: "\"} ".utf8)
        suffix.withUnsafeBufferPointer { sample(pieces.runs, policy, $0, count) }
      }
    }
    family(
      "retry_policy_refusals", type: "counter",
      help: "Attempts of retry policies refused before they were made, by cause.")
    for policy in policies {
      for (index, cause) in RetryMetrics.RefusalCause.allCases.enumerated() {
        sample(pieces.refusals, policy, pieces.causes[index], policy.refusals(by: cause))
      }
    }
    histogram(
      "retry_policy_attempt_duration_seconds", pieces.attemptHistogram,
      help: "Durations of the attempts of retry policies.", policies,
      Offset.attemptSuccesses, Offset.attemptFailures, sum: Offset.attemptSum)
    histogram(
      "retry_policy_run_duration_seconds", pieces.runHistogram,
      help: "Durations of the runs of retry policies, waits included.", policies,
      Offset.runSuccesses, Offset.runFailures, sum: Offset.runSum)
    family(
      "retry_policy_in_flight_attempts", type: "gauge",
      help: "Attempts of retry policies started and not yet ended.")
    for policy in policies {
      sample(pieces.inFlight, policy, pieces.close, policy.inFlight)
    }
    family(
      "retry_policy_breaker_state", type: "gauge",
      help: "1 for the current state of the circuit breaker of a retry policy, else 0.")
    for policy in policies {
      guard let state = policy.breakerState else { continue }
      for (index, shown) in OpenMetricsPieces.breakerStates.enumerated() {
        sample(pieces.breakerState, policy, pieces.states[index], state == shown ? 1 : 0)
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

  /// `NAME{policy="P"SUFFIX COUNT`, `suffix` closing the labels: `,by="budget"} `.
  @inline(__always)
  private mutating func sample(
    _ name: UnsafeBufferPointer<UInt8>, _ policy: borrowing PolicyTotals,
    _ suffix: UnsafeBufferPointer<UInt8>, _ count: UInt64
  ) {
    bytes.append(contentsOf: name)
    bytes.append(contentsOf: policy.labelBytes)
    bytes.append(contentsOf: suffix)
    append(count)
    newline()
  }

  private mutating func histogram(
    _ name: String, _ pieces: OpenMetricsPieces.Histogram, help: String,
    _ policies: [PolicyTotals], _ first: Int, _ second: Int, sum: Int
  ) {
    family(name, type: "histogram", help: help, unit: "seconds")
    let close = OpenMetricsPieces.shared.close
    for policy in policies {
      var cumulative: UInt64 = 0
      for index in 0..<DurationBuckets.bucketCount {
        cumulative &+= policy.bucket(index, first, second)
        sample(pieces.bucket, policy, pieces.bounds[index], cumulative)
      }
      sample(pieces.count, policy, close, cumulative)
      bytes.append(contentsOf: pieces.sum)
      bytes.append(contentsOf: policy.labelBytes)
      bytes.append(contentsOf: close)
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
  @inline(__always)
  private mutating func append(_ value: UInt64) {
    bytes.appendDecimal(value)
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

/// The constant parts of the exposition's lines, rendered once for the process: sample names
/// and label suffixes as bytes that are never freed (a few kilobytes), which the writer
/// copies without counting a reference.
struct OpenMetricsPieces: @unchecked Sendable {
  // Sound: every buffer is initialized in `init` and never written or freed after.
  /// The pieces of a histogram family.
  struct Histogram {
    let bucket: UnsafeBufferPointer<UInt8>
    let count: UnsafeBufferPointer<UInt8>
    let sum: UnsafeBufferPointer<UInt8>
    /// `,le="0.001"} ` … `,le="+Inf"} `.
    let bounds: [UnsafeBufferPointer<UInt8>]

    init(_ name: String) {
      bucket = OpenMetricsPieces.render(name + "_bucket")
      count = OpenMetricsPieces.render(name + "_count")
      sum = OpenMetricsPieces.render(name + "_sum")
      bounds = (0..<DurationBuckets.bucketCount).map { index in
        let label = index < DurationBuckets.labels.count ? DurationBuckets.labels[index] : "+Inf"
        return OpenMetricsPieces.render(",le=\"\(label)\"} ")
      }
    }
  }

  static let shared = OpenMetricsPieces()
  /// The breaker's states in the order of ``states``.
  static let breakerStates: [CircuitBreaker.State] = [.closed, .open, .halfOpen]

  let attempts = render("retry_policy_attempts_total")
  /// In the order of ``RetryMetrics/AttemptOutcome``: success, failure, refused.
  let outcomes = ["success", "failure", "refused"].map { render(",outcome=\"\($0)\"} ") }
  let runs = render("retry_policy_runs_total")
  let succeeded = render(",outcome=\"success\",reason=\"\"} ")
  /// In the order of ``RetryStopReason/metricsCases``.
  let reasons = RetryStopReason.metricsCases.map {
    render(",outcome=\"failure\",reason=\"\($0.caseName)\"} ")
  }
  let refusals = render("retry_policy_refusals_total")
  /// In the order of ``RetryMetrics/RefusalCause/allCases``.
  let causes = RetryMetrics.RefusalCause.allCases.map { render(",by=\"\($0.rawValue)\"} ") }
  let attemptHistogram = Histogram("retry_policy_attempt_duration_seconds")
  let runHistogram = Histogram("retry_policy_run_duration_seconds")
  let inFlight = render("retry_policy_in_flight_attempts")
  let breakerState = render("retry_policy_breaker_state")
  /// In the order of ``breakerStates``.
  let states = ["closed", "open", "half_open"].map { render(",state=\"\($0)\"} ") }
  let close = render("} ")

  /// `text`'s bytes, kept for the life of the process.
  static func render(_ text: String) -> UnsafeBufferPointer<UInt8> {
    let buffer = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: text.utf8.count)
    _ = buffer.initialize(from: text.utf8)
    return UnsafeBufferPointer(buffer)
  }
}

/// The bytes of an exposition, in one buffer that grows by doubling: an append is a copy
/// after one comparison, and the text is made from it once.
struct ByteBuffer: ~Copyable {
  private var base: UnsafeMutablePointer<UInt8>
  private var capacity: Int
  private(set) var count = 0

  init(capacity: Int) {
    self.capacity = max(capacity, 64)
    base = UnsafeMutablePointer<UInt8>.allocate(capacity: self.capacity)
  }

  /// Makes room for `extra` more bytes.
  @inline(__always)
  private mutating func reserve(_ extra: Int) {
    guard count &+ extra > capacity else { return }
    grow(to: count &+ extra)
  }

  @inline(never)
  private mutating func grow(to needed: Int) {
    var larger = capacity
    while larger < needed { larger &*= 2 }
    let moved = UnsafeMutablePointer<UInt8>.allocate(capacity: larger)
    moved.update(from: base, count: count)
    base.deallocate()
    base = moved
    capacity = larger
  }

  @inline(__always)
  mutating func append(_ byte: UInt8) {
    reserve(1)
    base[count] = byte
    count &+= 1
  }

  @inline(__always)
  mutating func append(contentsOf piece: UnsafeBufferPointer<UInt8>) {
    guard let source = piece.baseAddress else { return }
    reserve(piece.count)
    (base + count).update(from: source, count: piece.count)
    count &+= piece.count
  }

  mutating func append(contentsOf text: String.UTF8View) {
    for byte in text { append(byte) }
  }

  /// `value` in decimal.
  @inline(__always)
  mutating func appendDecimal(_ value: UInt64) {
    var digits = 1
    var rest = value / 10
    while rest > 0 {
      digits &+= 1
      rest /= 10
    }
    reserve(digits)
    var index = count &+ digits
    rest = value
    repeat {
      index &-= 1
      base[index] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest % 10)
      rest /= 10
    } while rest > 0
    count &+= digits
  }

  deinit {
    base.deallocate()
  }

  /// The bytes as text.
  func finish() -> String {
    String(decoding: UnsafeBufferPointer(start: base, count: count), as: UTF8.self)
  }
}
