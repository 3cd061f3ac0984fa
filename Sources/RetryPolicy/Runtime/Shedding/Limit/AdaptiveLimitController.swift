/// The controller of `limit adaptive [min A] [max B]`: a gradient controller on the 90th
/// percentile of attempt latency, after Envoy's `adaptive_concurrency` filter and the
/// Vegas-style limiters of Netflix's concurrency-limits and failsafe-go.
///
/// It is pure: the caller passes each attempt's start and end (nanoseconds on the limiter's
/// clock) and the attempts in flight, and applies the limit it returns. ``ConcurrencyLimiter``
/// passes every attempt while fewer than 512 ask in 100 ms, and past that one in a power of
/// two (at most one in 64), so that a window still gets 256 or more samples each 100 ms.
///
/// - **Start.** The limit starts at min(20, B) (contract §14), clamped to A … B.
/// - **Windows.** Latencies are gathered in windows; a window closes at the first sample that
///   finds it holding at least ``minimumSamples`` (20) samples and lasting at least
///   max(2 × baseline, ``minimumWindow`` (100 ms)). Up to ``sampleCapacity`` (256) samples
///   are kept a window (later ones overwrite the oldest); its p90 is the window's latency.
/// - **Baseline.** The latency of the service unloaded. It is measured by calibration: for
///   ``calibrationSamples`` (20) attempts, all started after calibration began, the limit is
///   held at min(B, max(A, ``calibrationConcurrency`` (3))), and the p90 of their latencies is
///   the baseline. Calibration runs after the first window and then every
///   ``recalibrationInterval`` (30 s), as Envoy measures its minimum RTT.
/// - **Smoothing.** Each window's p90 goes into an exponentially weighted moving average,
///   weight ``smoothing`` (0.2) for the new window, started at the baseline after each
///   calibration (failsafe-go smooths its p90 the same way). In between calibrations, an
///   average lower than the baseline lowers it. The p90 of one window of 20 samples varies
///   a lot with a service whose latency varies; lowering the baseline to the lowest single
///   window would bring it far under the service's real latency, and the limit with it.
/// - **Gradient.** At each window's close: gradient = clamp(baseline × (1 + ``buffer``) /
///   average, 0.5, 1) with the buffer 20 % (Envoy's default is 25 %); the new limit is gradient ×
///   limit + √limit (Envoy's headroom), rounded down and clamped to A … B. The limit does
///   not grow past
///   twice the most attempts in flight seen in the window, so an unused limit does not
///   climb.
///
/// With a service that queues past its capacity C, the limit settles where the latency is
/// about 1.2 × baseline + √limit of queueing: near 1.2 × C + √(1.2 × C) attempts.
///
/// The buffer absorbs how far a window's p90 sits above the baseline on a service that is not
/// loaded: the baseline is the p90 of the first 20 attempts to end after a calibration began
/// (the slowest of those started are still running, so it reads low), and between
/// calibrations it follows the lowest the moving average reached. With a buffer of 10 %, the
/// limit of a client with a few attempts in flight settled just above them after a slowdown
/// and went on refusing one or two attempts in a hundred of a healthy service (`retry-policy
/// storm`: its fleet never recovered). With Envoy's 25 %, a server that serves 16 requests at
/// once and queues the rest (`.ci/overload-e2e`) saw the limit settle near 21 and its p99
/// latency reach 2.02–2.04× the unloaded one, past the 2× that check allows; 20 % keeps both
/// (storm recovers in 35 s; p99 1.93×).
package struct AdaptiveLimitController: Sendable {
  /// Samples a window needs before it may close.
  package static let minimumSamples = 20
  /// The shortest window, in nanoseconds (100 ms).
  package static let minimumWindow: Int64 = 100_000_000
  /// Samples kept a window.
  package static let sampleCapacity = 256
  /// Samples a calibration takes.
  package static let calibrationSamples = 20
  /// The concurrency a calibration holds the limit at (within A … B).
  package static let calibrationConcurrency = 3
  /// Time between calibrations, in nanoseconds (30 s).
  package static let recalibrationInterval: Int64 = 30_000_000_000
  /// The latency above baseline tolerated before the limit shrinks: 20 % (Envoy's default is
  /// 25 %; see the type's documentation).
  package static let buffer = 0.2
  /// The quantile of a window's latencies the controller follows.
  package static let quantile = 0.9
  /// The weight of a new window's p90 in the moving average the gradient follows.
  package static let smoothing = 0.2

  private enum Phase: Sendable {
    /// The first window, before any calibration.
    case warmingUp
    /// Holding the limit low since `since`; `saved` is the limit to return to.
    case calibrating(since: Int64, saved: Int)
    /// Following the gradient; the next calibration at `next`.
    case running(nextCalibration: Int64)
  }

  /// The lowest limit (`min`).
  package let minimum: Int
  /// The highest limit (`max`).
  package let maximum: Int
  /// The limit the controller follows, apart from calibration.
  private var target: Int
  private var phase: Phase = .warmingUp
  /// The unloaded latency, in nanoseconds, once measured.
  package private(set) var baseline: Int64?
  /// The moving average of the windows' p90 since the last calibration, in nanoseconds.
  private var smoothed: Int64?
  private var samples: [Int64] = []
  private var sampleCount = 0
  private var windowStart: Int64?
  private var peakInFlight = 0

  /// A controller for `limit adaptive min minimum max maximum`.
  package init(minimum: Int, maximum: Int) {
    let low = Swift.max(minimum, 1)
    let high = Swift.max(maximum, low)
    self.minimum = low
    self.maximum = high
    self.target = Swift.min(
      Swift.max(Swift.min(ConcurrencyLimitPolicy.adaptiveInitialLimit, high), low), high)
    samples.reserveCapacity(Self.sampleCapacity)
  }

  /// The limit in force now: the calibration's while calibrating.
  package var limit: Int {
    switch phase {
    case .calibrating: Swift.min(maximum, Swift.max(minimum, Self.calibrationConcurrency))
    case .warmingUp, .running: target
    }
  }

  /// Whether the controller is measuring its baseline.
  package var isCalibrating: Bool {
    if case .calibrating = phase { return true }
    return false
  }

  /// Takes the latency of an attempt that started at `start` and ended at `end`, with
  /// `inFlight` attempts in flight when it ended (itself included); returns the new limit
  /// when the limit in force changed.
  package mutating func record(start: Int64, end: Int64, inFlight: Int) -> Int? {
    let before = limit
    let latency = Swift.max(end &- start, 0)
    switch phase {
    case .calibrating(let since, let saved):
      guard start >= since else { return nil }
      append(latency)
      guard sampleCount >= Self.calibrationSamples else { return nil }
      let measured = percentile()
      baseline = measured
      smoothed = measured
      target = saved
      phase = .running(nextCalibration: end.addingClamped(Self.recalibrationInterval))
      resetWindow(at: end)
    case .warmingUp, .running:
      peakInFlight = Swift.max(peakInFlight, inFlight)
      if windowStart == nil { windowStart = start }
      append(latency)
      closeWindowIfDue(at: end)
    }
    let after = limit
    return after == before ? nil : after
  }

  private mutating func closeWindowIfDue(at now: Int64) {
    let span = Swift.max(Self.minimumWindow, (baseline ?? 0).multipliedClamped(by: 2))
    guard sampleCount >= Self.minimumSamples, let windowStart,
      now.subtractingClamped(windowStart) >= span
    else { return }
    let latency = percentile()
    switch phase {
    case .warmingUp:
      beginCalibration(at: now)
      return
    case .running(let next):
      let average = smoothed.map { previous in
        // Both are at least 0, so the average is too; saturates below 2^63.
        let value = Double(previous) * (1 - Self.smoothing) + Double(latency) * Self.smoothing
        return value < 9.0e18 ? Int64(value) : Int64.max
      }
      smoothed = average ?? latency
      let followed = average ?? latency
      if let current = baseline, followed < current { baseline = followed }
      adjust(toward: followed)
      if now >= next {
        beginCalibration(at: now)
        return
      }
    case .calibrating:
      return
    }
    resetWindow(at: now)
  }

  private mutating func adjust(toward latency: Int64) {
    guard let baseline else { return }
    var gradient = 1.0
    if latency > 0 {
      gradient = Double(baseline) * (1 + Self.buffer) / Double(latency)
      gradient = Swift.min(Swift.max(gradient, 0.5), 1)
    }
    let current = Double(target)
    var next = Int((gradient * current + current.squareRoot()).rounded(.down))
    if next > target {
      next = Swift.min(next, Swift.max(target, peakInFlight.multipliedClamped(by: 2)))
    }
    target = Swift.min(Swift.max(next, minimum), maximum)
  }

  private mutating func beginCalibration(at now: Int64) {
    phase = .calibrating(since: now, saved: target)
    resetWindow(at: nil)
  }

  private mutating func resetWindow(at start: Int64?) {
    samples.removeAll(keepingCapacity: true)
    sampleCount = 0
    peakInFlight = 0
    windowStart = start
  }

  private mutating func append(_ latency: Int64) {
    if samples.count < Self.sampleCapacity {
      samples.append(latency)
    } else {
      samples[sampleCount % Self.sampleCapacity] = latency
    }
    sampleCount += 1
  }

  /// The window's p90, found in place (the samples are discarded after).
  private mutating func percentile() -> Int64 {
    guard !samples.isEmpty else { return 0 }
    let rank = Swift.min(
      samples.count - 1, Int((Double(samples.count) * Self.quantile).rounded(.up)) - 1)
    return samples.select(rank: Swift.max(rank, 0))
  }
}

extension Array where Element == Int64 {
  /// The element that would be at `rank` if the array were sorted (quickselect, in place,
  /// without allocating); the array is left partly reordered.
  mutating func select(rank: Int) -> Int64 {
    var low = 0
    var high = count - 1
    while low < high {
      let pivot = self[low + (high - low) / 2]
      var left = low
      var right = high
      while left <= right {
        while self[left] < pivot { left += 1 }
        while self[right] > pivot { right -= 1 }
        if left <= right {
          swapAt(left, right)
          left += 1
          right -= 1
        }
      }
      if rank <= right {
        high = right
      } else if rank >= left {
        low = left
      } else {
        return self[rank]
      }
    }
    return self[rank]
  }
}

extension Int64 {
  /// `self + other`, saturating at the bounds.
  func addingClamped(_ other: Int64) -> Int64 {
    let (sum, overflow) = addingReportingOverflow(other)
    guard overflow else { return sum }
    return other > 0 ? .max : .min
  }

  /// `self - other`, saturating at the bounds.
  func subtractingClamped(_ other: Int64) -> Int64 {
    let (difference, overflow) = subtractingReportingOverflow(other)
    guard overflow else { return difference }
    return other > 0 ? .min : .max
  }

  /// `self × factor`, saturating at the bounds.
  func multipliedClamped(by factor: Int64) -> Int64 {
    let (product, overflow) = multipliedReportingOverflow(by: factor)
    guard overflow else { return product }
    return (self > 0) == (factor > 0) ? .max : .min
  }
}

extension Int {
  /// `self × factor`, saturating at the bounds.
  func multipliedClamped(by factor: Int) -> Int {
    let (product, overflow) = multipliedReportingOverflow(by: factor)
    guard overflow else { return product }
    return (self > 0) == (factor > 0) ? .max : .min
  }
}
