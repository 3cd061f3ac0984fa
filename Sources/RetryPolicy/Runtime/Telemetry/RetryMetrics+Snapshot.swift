extension RetryMetrics {
  /// What an attempt came to: the `outcome` label of `retry_policy_attempts_total`.
  public enum AttemptOutcome: String, Sendable, Hashable, CaseIterable {
    /// The operation returned.
    case success
    /// The operation threw (cancellation and `timeout` included).
    case failure
    /// The attempt was not made: a breaker, the budget or a load-shedding clause refused it.
    case refused
  }

  /// Every value of a ``RetryMetrics`` at one moment, as plain values: what a host feeds to
  /// another metrics system.
  ///
  ///     for policy in metrics.snapshot().policies {
  ///       print(policy.policy, policy.attempts[.failure] ?? 0)
  ///     }
  public struct Snapshot: Sendable, Hashable {
    /// The values of each policy name that recorded anything, in the order of the names.
    public var policies: [PolicyValues]

    /// The values of the policy named `name` (`anonymous` for a policy without a name).
    public subscript(policy name: String) -> PolicyValues? {
      policies.first { $0.policy == name }
    }
  }

  /// The values of one policy name.
  public struct PolicyValues: Sendable, Hashable {
    /// The `policy` label: the policy's name, or `anonymous`.
    public var policy: String
    /// Attempts by outcome; every outcome is present.
    public var attempts: [AttemptOutcome: Int]
    /// Runs that succeeded.
    public var successfulRuns: Int
    /// Runs that failed, by stop reason; a reason no run stopped for is absent.
    public var failedRuns: [RetryStopReason: Int]
    /// Refused attempts by cause; every cause is present.
    public var refusals: [RefusalCause: Int]
    /// The durations of the attempts made.
    public var attemptDurations: DurationHistogram
    /// The durations of the runs, from the start of the first attempt to the end.
    public var runDurations: DurationHistogram
    /// The attempts started and not yet ended.
    public var inFlightAttempts: Int
    /// The state of the breaker of the policy's latest run; nil when its runs had none.
    public var breakerState: CircuitBreaker.State?
  }

  /// A histogram of durations in the buckets of ``upperBounds``.
  public struct DurationHistogram: Sendable, Hashable {
    /// The upper bounds of the buckets but the last, which has none (+Inf): 1 ms, 2.5 ms,
    /// 5 ms, 10 ms, 25 ms, 50 ms, 100 ms, 250 ms, 500 ms, 1 s, 2.5 s, 5 s, 10 s, 30 s, 60 s.
    public static let upperBounds: [Duration] = DurationBuckets.bounds.map {
      .nanoseconds(Int64($0))
    }

    /// The durations in each bucket (not cumulative): `bucketCounts[i]` counts those above
    /// `upperBounds[i - 1]` and at most `upperBounds[i]`; the last counts those above 60 s.
    public var bucketCounts: [Int]
    /// The durations recorded.
    public var count: Int
    /// Their sum.
    public var sum: Duration
  }

  /// Every value now, as plain values.
  public func snapshot() -> Snapshot {
    Snapshot(policies: policies().map { PolicyValues(PolicyTotals($0)) })
  }
}

/// A policy's counters summed over their stripes, read once for one snapshot or exposition.
struct PolicyTotals {
  typealias Offset = PolicyMetrics.Offset

  let metrics: PolicyMetrics
  let values: [UInt64]
  let breakerState: CircuitBreaker.State?
  /// `{policy="NAME"`, the name escaped (``PolicyMetrics/labelBytes``).
  let labelBytes: UnsafeBufferPointer<UInt8>

  init(_ metrics: PolicyMetrics) {
    self.metrics = metrics
    self.labelBytes = metrics.labelBytes
    self.values = metrics.totals()
    self.breakerState = metrics.currentBreaker?.state
  }

  func value(at offset: Int) -> UInt64 { values[offset] }

  /// The count of the histogram whose buckets start at `base`.
  func count(at base: Int) -> UInt64 {
    var sum: UInt64 = 0
    for index in base..<(base + DurationBuckets.bucketCount) { sum &+= values[index] }
    return sum
  }

  /// The count of bucket `bucket` of both histograms starting at `first` and `second`.
  func bucket(_ bucket: Int, _ first: Int, _ second: Int) -> UInt64 {
    values[first + bucket] &+ values[second + bucket]
  }

  var attemptsSucceeded: UInt64 { count(at: Offset.attemptSuccesses) }
  var attemptsFailed: UInt64 { count(at: Offset.attemptFailures) }
  var attemptsRefused: UInt64 {
    var sum: UInt64 = 0
    for cause in RetryMetrics.RefusalCause.allCases { sum &+= refusals(by: cause) }
    return sum
  }
  var runsSucceeded: UInt64 { count(at: Offset.runSuccesses) }

  func refusals(by cause: RetryMetrics.RefusalCause) -> UInt64 {
    values[Offset.refusals + cause.index]
  }

  func runsFailed(for reason: RetryStopReason) -> UInt64 {
    values[Offset.runReasons + reason.metricsIndex]
  }

  /// Started less ended; never below zero (the counters are not read at one instant).
  var inFlight: UInt64 {
    let started = values[Offset.started]
    let ended = attemptsSucceeded &+ attemptsFailed
    return started > ended ? started - ended : 0
  }
}

extension PolicyMetrics {
  /// Every counter summed over the stripes, by offset; joint successes are folded into both
  /// the attempts' and the runs' successes.
  func totals() -> [UInt64] {
    var totals = [UInt64](repeating: 0, count: Offset.stride)
    for stripe in 0..<Self.stripeCount {
      let base = stripe * Offset.stride
      for offset in 0..<Offset.stride {
        totals[offset] &+= cell(at: base + offset)
      }
    }
    for bucket in 0..<DurationBuckets.bucketCount {
      let joint = totals[Offset.jointSuccesses + bucket]
      totals[Offset.attemptSuccesses + bucket] &+= joint
      totals[Offset.runSuccesses + bucket] &+= joint
    }
    totals[Offset.attemptSum] &+= totals[Offset.jointSum]
    totals[Offset.runSum] &+= totals[Offset.jointSum]
    return totals
  }
}

extension RetryMetrics.PolicyValues {
  init(_ totals: PolicyTotals) {
    typealias Offset = PolicyMetrics.Offset
    policy = totals.metrics.name
    attempts = [
      .success: Int(clamping: totals.attemptsSucceeded),
      .failure: Int(clamping: totals.attemptsFailed),
      .refused: Int(clamping: totals.attemptsRefused),
    ]
    successfulRuns = Int(clamping: totals.runsSucceeded)
    var failed: [RetryStopReason: Int] = [:]
    for index in 0..<RetryStopReason.metricsCount {
      let count = totals.value(at: Offset.runReasons + index)
      guard count > 0, let reason = RetryStopReason.metricsCase(at: index) else { continue }
      failed[reason] = Int(clamping: count)
    }
    failedRuns = failed
    var refusals: [RetryMetrics.RefusalCause: Int] = [:]
    for cause in RetryMetrics.RefusalCause.allCases {
      refusals[cause] = Int(clamping: totals.refusals(by: cause))
    }
    self.refusals = refusals
    attemptDurations = .init(
      totals, Offset.attemptSuccesses, Offset.attemptFailures, sum: Offset.attemptSum)
    runDurations = .init(totals, Offset.runSuccesses, Offset.runFailures, sum: Offset.runSum)
    inFlightAttempts = Int(clamping: totals.inFlight)
    breakerState = totals.breakerState
  }
}

extension RetryMetrics.DurationHistogram {
  init(_ totals: PolicyTotals, _ first: Int, _ second: Int, sum: Int) {
    bucketCounts = (0..<DurationBuckets.bucketCount).map {
      Int(clamping: totals.bucket($0, first, second))
    }
    count = bucketCounts.reduce(0, &+)
    let nanoseconds = totals.value(at: sum)
    self.sum = .nanoseconds(Int64(clamping: nanoseconds))
  }
}
