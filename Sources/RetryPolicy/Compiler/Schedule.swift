/// One row of a rule's schedule: the delay before a retry and the range jitter can give.
public struct ScheduleEntry: Sendable, Hashable {
  /// The retry the delay comes before, counted from 1.
  public var retry: Int
  /// The delay without jitter, after the cap.
  public var delay: Duration
  /// The shortest delay jitter can give, after the cap.
  public var minimum: Duration
  /// The longest delay jitter can give, after the cap.
  public var maximum: Duration
}

/// A rule's delays, as `explain` shows them.
public struct Schedule: Sendable, Hashable {
  /// The rows, one a retry, at most the limit asked for.
  public var entries: [ScheduleEntry]
  /// Whether there are more retries than rows (always true for `retry forever`).
  public var isTruncated: Bool
  /// The most time all the rule's delays can add up to; nil for `retry forever`.
  public var worstCaseTotal: Duration?
}

// The delay arithmetic. Everything here is a pure function of the rule and the retry number,
// computed in seconds as `Double` and converted with `Duration.saturating(seconds:)`, so no
// input overflows or traps: huge values stop at `Duration.saturatedDelay`, nothing goes below 0.
extension RepeatBehavior {
  /// The delay before retry `n` (counted from 1) without jitter or cap, in seconds.
  package func baseSeconds(beforeRetry n: Int) -> Double {
    let index = Swift.max(1, n) - 1
    switch self {
    case .immediate:
      return 0
    case .delayed(_, let delay):
      return delay.seconds
    case .exponential(_, let initial, let multiplier):
      let start = initial.seconds
      guard start > 0, multiplier.isFinite, multiplier > 0 else { return Swift.max(0, start) }
      // A factor ≥ 1 only grows; stop early once past the ceiling so huge `n` stays cheap.
      let growth = Double.pow(multiplier, Double(index))
      return start * growth
    case .linear(_, let initial, let increment):
      return initial.seconds + Double(index) * increment.seconds
    case .customTimerDelayed(_, let delays):
      guard let last = delays.indices.last else { return 0 }
      return delays[Swift.min(index, last)].seconds
    }
  }
}

extension Double {
  fileprivate static func pow(_ base: Double, _ exponent: Double) -> Double {
    // Repeated squaring keeps this free of Foundation; saturates to +infinity.
    var result = 1.0
    var factor = base
    var remaining = exponent
    while remaining >= 1 {
      if remaining.truncatingRemainder(dividingBy: 2) >= 1 { result *= factor }
      factor *= factor
      remaining = (remaining / 2).rounded(.down)
      if result.isInfinite || result == 0 { break }
    }
    return result
  }
}

extension RetryRule {
  /// The ceiling on delays: the rule's `max`, or the saturation point.
  private var capSeconds: Double {
    Self.capSeconds(maxDelay)
  }

  /// The ceiling on delays under `max` `maxDelay`, or the saturation point without one.
  private static func capSeconds(_ maxDelay: Duration?) -> Double {
    guard let maxDelay else { return Duration.saturatedSeconds }
    return Swift.min(maxDelay.seconds, Duration.saturatedSeconds)
  }

  /// The delay before retry `n` (counted from 1) without jitter, after the cap.
  public func nominalDelay(beforeRetry n: Int) -> Duration {
    .saturating(seconds: Swift.min(behavior.baseSeconds(beforeRetry: n), capSeconds))
  }

  /// The shortest and longest delay jitter can give before retry `n`, after the cap.
  public func delayBounds(beforeRetry n: Int) -> ClosedRange<Duration> {
    let (low, high) = boundsInSeconds(beforeRetry: n)
    let lower = Duration.saturating(seconds: low)
    return lower...Swift.max(lower, Duration.saturating(seconds: high))
  }

  /// The delay before retry `n` without jitter or cap, in seconds, clamped to
  /// [0, ``Duration/saturatedDelay``] before any jitter, so that jitter spreads a saturated
  /// delay over a finite range (uniform in [0, ∞] would have no meaning).
  private func clampedBaseSeconds(beforeRetry n: Int) -> Double {
    Self.clampedBaseSeconds(behavior, beforeRetry: n)
  }

  private static func clampedBaseSeconds(
    _ behavior: borrowing RepeatBehavior, beforeRetry n: Int
  ) -> Double {
    let base = behavior.baseSeconds(beforeRetry: n)
    guard base > 0 else { return 0 }  // also NaN
    return Swift.min(base, Duration.saturatedSeconds)
  }

  private func boundsInSeconds(beforeRetry n: Int) -> (Double, Double) {
    let base = clampedBaseSeconds(beforeRetry: n)
    let cap = capSeconds
    switch jitter {
    case nil:
      return (Swift.min(base, cap), Swift.min(base, cap))
    case .proportional(let fraction)?:
      let spread = Swift.min(Swift.max(fraction, 0), 1)
      return (Swift.min(base * (1 - spread), cap), Swift.min(base * (1 + spread), cap))
    case .full?:
      return (0, Swift.min(base, cap))
    case .equal?:
      return (Swift.min(base / 2, cap), Swift.min(base, cap))
    case .decorrelated?:
      let first = clampedBaseSeconds(beforeRetry: 1)
      let exponent = Double(Swift.max(1, n))
      let high = first > 0 ? first * Double.pow(3, exponent) : 0  // 0 × ∞ would be NaN
      return (Swift.min(first, cap), Swift.min(high, cap))
    }
  }

  /// Draws the delay before retry `n` (counted from 1), jitter and cap applied.
  ///
  /// `previous` is the delay drawn before the previous retry; decorrelated jitter grows from
  /// it. The result always lies in ``delayBounds(beforeRetry:)``.
  package func delay(
    beforeRetry n: Int,
    previous: Duration?,
    using generator: inout some RandomNumberGenerator
  ) -> Duration {
    Self.drawDelay(
      behavior: behavior, jitter: jitter, maxDelay: maxDelay, beforeRetry: n, previous: previous,
      using: &generator)
  }

  /// ``delay(beforeRetry:previous:using:)`` of a rule with these delay clauses, which it only
  /// borrows: the runtime draws from a rule it reads in place, without copying its names.
  package static func drawDelay(
    behavior: borrowing RepeatBehavior,
    jitter: Jitter?,
    maxDelay: Duration?,
    beforeRetry n: Int,
    previous: Duration?,
    using generator: inout some RandomNumberGenerator
  ) -> Duration {
    let base = clampedBaseSeconds(behavior, beforeRetry: n)
    let cap = capSeconds(maxDelay)
    let drawn: Double
    switch jitter {
    case nil:
      drawn = base
    case .proportional(let fraction)?:
      let spread = Swift.min(Swift.max(fraction, 0), 1)
      drawn = base * Self.uniform(1 - spread, 1 + spread, using: &generator)
    case .full?:
      drawn = Self.uniform(0, base, using: &generator)
    case .equal?:
      drawn = base / 2 + Self.uniform(0, base / 2, using: &generator)
    case .decorrelated?:
      let first = clampedBaseSeconds(behavior, beforeRetry: 1)
      let last = previous.map { $0.seconds } ?? first
      drawn = Self.uniform(first, Swift.max(first, 3 * last), using: &generator)
    }
    return .saturating(seconds: Swift.min(drawn, cap))
  }

  /// A uniform draw in [low, high]; the low end when the range is empty or not finite.
  private static func uniform(
    _ low: Double, _ high: Double, using generator: inout some RandomNumberGenerator
  ) -> Double {
    guard low.isFinite, high.isFinite, high > low else {
      return Swift.max(0, low.isFinite ? low : 0)
    }
    let unit = Double(generator.next() >> 11) * 0x1.0p-53
    return low + (high - low) * unit
  }

  /// The rule's delays, at most `limit` rows (and never more than 10,000), and the
  /// worst-case total of all of them.
  ///
  /// For `retry forever` the rows stop at the limit and the total is nil. Any `limit` is
  /// accepted: zero or less gives no rows. The total of a huge count is computed without
  /// visiting every retry: once the delays stop changing, the rest are multiplied out.
  public func schedule(limit: Int = 100) -> Schedule {
    let count = behavior.maxCount
    let rows = Swift.min(Swift.max(0, limit), Self.maximumRows, count ?? Int.max)
    var entries: [ScheduleEntry] = []
    entries.reserveCapacity(rows)
    for retry in stride(from: 1, through: rows, by: 1) {
      let bounds = delayBounds(beforeRetry: retry)
      entries.append(
        ScheduleEntry(
          retry: retry, delay: nominalDelay(beforeRetry: retry),
          minimum: bounds.lowerBound, maximum: bounds.upperBound))
    }
    return Schedule(
      entries: entries, isTruncated: count.map { $0 > rows } ?? true,
      worstCaseTotal: count.map(worstCaseTotal(ofRetries:)))
  }

  /// The most rows a schedule has.
  private static let maximumRows = 10_000

  /// The sum of the longest delays of retries 1 through `count`, saturated.
  ///
  /// The first retries are added one by one; once the delays settle (capped, saturated or
  /// constant) the rest are multiplied out, and past ``explicitTotalRows`` retries the rest
  /// are summed in closed form (see ``tailTotal(from:through:)``), so that any count, up to
  /// `Int.max`, costs at most a few hundred delay computations.
  private func worstCaseTotal(ofRetries count: Int) -> Duration {
    // From this retry on, a rule's delays can stay the same: past an explicit schedule's end.
    var settled = 1
    if case .customTimerDelayed(_, let delays) = behavior { settled = delays.count + 1 }
    let explicitRows = Swift.max(settled + 1, Self.explicitTotalRows)
    var seconds = 0.0
    var previous: Double?
    var retry = 1
    while retry <= count {
      let longest = longestSeconds(beforeRetry: retry)
      seconds += longest
      if seconds >= Duration.saturatedSeconds { break }
      // Equal delays in a row are the delay of every later retry when they are the ceiling
      // (the cap, or the saturation point) or the rule's delays are constant by kind; not
      // otherwise: `backoff 1ns x1.1` rounds to 1 ns twice, then grows.
      if retry > settled, let previous, previous == longest,
        longest >= ceilingSeconds || hasConstantDelays
      {
        seconds += longest * Double(count - retry)
        break
      }
      previous = longest
      if retry >= explicitRows, retry < count {
        seconds += tailTotal(from: retry + 1, through: count)
        break
      }
      retry += 1
    }
    return .saturating(seconds: seconds)
  }

  /// The longest delay any retry can have, in seconds: the cap, or the saturation point.
  private var ceilingSeconds: Double {
    Duration.saturating(seconds: capSeconds).seconds
  }

  /// Whether every delay past an explicit schedule's end is the same, by the rule's kind.
  private var hasConstantDelays: Bool {
    if case .decorrelated? = jitter { return false }
    switch behavior {
    case .immediate, .delayed, .customTimerDelayed: return true
    case .linear(_, _, let increment): return increment == .zero
    case .exponential(_, let initial, let multiplier): return multiplier == 1 || initial <= .zero
    }
  }

  /// The retries whose delays ``worstCaseTotal(ofRetries:)`` adds one by one.
  private static let explicitTotalRows = 256

  /// The longest delay before retry `n`, in seconds.
  private func longestSeconds(beforeRetry n: Int) -> Double {
    delayBounds(beforeRetry: n).upperBound.seconds
  }

  /// The sum of the longest delays of retries `first` through `last` (first ≤ last), past an
  /// explicit schedule's end, where the longest delay is a monotonic function of the retry.
  ///
  /// Monotonic, it is constant on a first and a last stretch (zero, capped or saturated),
  /// found by bisection, and between them it is the behavior's own sequence: arithmetic for
  /// `linear`, geometric for `exponential` (and for decorrelated jitter's bound, × 3), summed
  /// in closed form. Delays are rounded to the nanosecond, so the middle stretch's sum is
  /// exact to that rounding.
  private func tailTotal(from first: Int, through last: Int) -> Double {
    let low = longestSeconds(beforeRetry: first)
    let high = longestSeconds(beforeRetry: last)
    guard low != high else { return low * (Double(last - first) + 1) }
    // The last retry of the first stretch, and the first retry of the last one.
    let lowEnd = boundary(from: first, through: last) { longestSeconds(beforeRetry: $0) != low }
    let highStart =
      boundary(from: first, through: last) { longestSeconds(beforeRetry: $0) == high }
    var total = low * Double(lowEnd - first) + high * (Double(last - highStart) + 1)
    let middleFirst = lowEnd
    let middleLast = highStart - 1
    guard middleFirst <= middleLast else { return total }
    let a = longestSeconds(beforeRetry: middleFirst)
    let b = longestSeconds(beforeRetry: middleLast)
    let terms = Double(middleLast - middleFirst) + 1
    var ratio: Double?
    if case .exponential(_, _, let multiplier) = behavior { ratio = multiplier }
    if case .decorrelated? = jitter { ratio = 3 }
    if let ratio, ratio.isFinite, ratio > 0, ratio != 1 {
      total += (b * ratio - a) / (ratio - 1)
    } else {
      total += terms * (a + b) / 2
    }
    return total
  }

  /// The first retry in `first ... last` for which `isPast` holds, `isPast` being false and
  /// then true along the range; `last + 1` when it never holds.
  private func boundary(from first: Int, through last: Int, _ isPast: (Int) -> Bool) -> Int {
    var low = first
    var high = last
    guard isPast(high) else { return last + 1 }
    while low < high {
      let middle = low + (high - low) / 2
      if isPast(middle) { high = middle } else { low = middle + 1 }
    }
    return low
  }
}
