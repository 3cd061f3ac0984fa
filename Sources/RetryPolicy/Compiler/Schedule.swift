/// One row of a rule's schedule: the delay before a retry, how short and how long the wait
/// before it can be, and the longest time all the waits up to it can add up to.
///
/// The bounds are those of the wait, not only of the computed delay: under
/// `honoring retry-after` a delay carried by the error replaces the computed one, so the
/// wait can be anything from zero to the cap (`max`), and has no upper bound without one.
/// ``RetryRule/delayBounds(beforeRetry:)`` gives the computed delay's range alone.
public struct ScheduleEntry: Sendable, Hashable {
  /// The retry the delay comes before, counted from 1.
  public var retry: Int
  /// The computed delay without jitter, after the cap.
  public var delay: Duration
  /// The shortest wait before the retry, after the cap: the low end of jitter's range, or
  /// zero under `honoring retry-after` (a carried delay may be shorter than the computed one).
  public var minimum: Duration
  /// The longest wait before the retry, after the cap: the high end of jitter's range, or
  /// under `honoring retry-after` the cap; nil (unbounded) under `honoring retry-after`
  /// without `max`.
  public var maximum: Duration?
  /// The longest the waits before retries 1 through this one can add up to, saturated; nil
  /// when one of them is unbounded.
  public var worstCaseElapsed: Duration?
}

/// A rule's delays, as `explain` shows them: a row a retry, and the worst-case total.
///
///     let rule = try compile(policy: "retry 30 backoff 1s max 10s honoring retry-after").rules[0]
///     let schedule = rule.schedule(limit: 20)
///     schedule.entries[0].maximum    // 10 seconds: a carried Retry-After may take the cap
///     schedule.last?.retry           // 30
///     schedule.worstCaseTotal        // 300 seconds: 30 retries that each wait the cap
public struct Schedule: Sendable, Hashable {
  /// The rows, one a retry, at most the limit asked for.
  public var entries: [ScheduleEntry]
  /// Whether there are more retries than rows (always true for `retry forever`).
  public var isTruncated: Bool
  /// The row of the rule's last retry; nil for `retry forever` and for a rule without retries.
  ///
  /// It is there also when ``entries`` stop before the last retry. Its
  /// ``ScheduleEntry/worstCaseElapsed`` is ``worstCaseTotal``.
  public var last: ScheduleEntry?
  /// The most time all the rule's waits can add up to, saturated; nil when unbounded: for
  /// `retry forever`, and under `honoring retry-after` without `max`.
  ///
  /// Under `honoring retry-after` with `max`, every retry may wait the cap, so the total is
  /// the count times the cap.
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
  ///
  /// These bound the computed delay; under `honoring retry-after` a carried delay may replace
  /// it, and ``schedule(limit:)`` gives the bounds of the wait itself.
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

  /// The rule's delays, at most `limit` rows (and never more than 10,000), the row of its
  /// last retry, and the worst-case total of all of them.
  ///
  /// For `retry forever` the rows stop at the limit and the total is nil. Any `limit` is
  /// accepted: zero or less gives no rows. The total of a huge count is computed without
  /// visiting every retry: once the delays stop changing, the rest are multiplied out.
  ///
  /// Under `honoring retry-after` the wait before each retry may be a delay carried by the
  /// error instead of the computed one, capped by `max`: each row's bounds are zero and the
  /// cap, and the total is the count times the cap (unbounded without `max`).
  public func schedule(limit: Int = 100) -> Schedule {
    let count = behavior.maxCount
    let rows = Swift.min(Swift.max(0, limit), Self.maximumRows, count ?? Int.max)
    var entries: [ScheduleEntry] = []
    entries.reserveCapacity(rows)
    var elapsed: Double? = 0
    for retry in stride(from: 1, through: rows, by: 1) {
      let bounds = waitBounds(beforeRetry: retry)
      elapsed = elapsed.flatMap { sum in bounds.maximum.map { sum + $0.seconds } }
      entries.append(
        ScheduleEntry(
          retry: retry, delay: nominalDelay(beforeRetry: retry),
          minimum: bounds.minimum, maximum: bounds.maximum,
          worstCaseElapsed: elapsed.map { .saturating(seconds: $0) }))
    }
    let total = count.flatMap(worstCaseTotal(ofRetries:))
    var last: ScheduleEntry?
    if let count, count > 0 {
      let bounds = waitBounds(beforeRetry: count)
      last = ScheduleEntry(
        retry: count, delay: nominalDelay(beforeRetry: count),
        minimum: bounds.minimum, maximum: bounds.maximum, worstCaseElapsed: total)
    }
    return Schedule(
      entries: entries, isTruncated: count.map { $0 > rows } ?? true, last: last,
      worstCaseTotal: total)
  }

  /// The shortest and longest wait before retry `n`: jitter's range of the computed delay,
  /// or under `honoring retry-after` zero to the cap (nil, unbounded, without one).
  private func waitBounds(beforeRetry n: Int) -> (minimum: Duration, maximum: Duration?) {
    guard honorsRetryAfter else {
      let bounds = delayBounds(beforeRetry: n)
      return (bounds.lowerBound, bounds.upperBound)
    }
    return (.zero, maxDelay)
  }

  /// The longest the waits before retries 1 through `count` can add up to, saturated; nil
  /// under `honoring retry-after` without `max`.
  private func worstCaseTotal(ofRetries count: Int) -> Duration? {
    guard honorsRetryAfter else { return worstCaseDelayTotal(ofRetries: count) }
    guard let cap = maxDelay else { return nil }
    return .saturating(seconds: Double(count) * cap.seconds)
  }

  /// The most rows a schedule has.
  private static let maximumRows = 10_000

  /// The sum of the longest computed delays of retries 1 through `count`, saturated.
  ///
  /// The first retries are added one by one; once the delays settle (capped, saturated or
  /// constant) the rest are multiplied out, and past ``explicitTotalRows`` retries the rest
  /// are summed in closed form (see ``tailTotal(from:through:)``), so that any count, up to
  /// `Int.max`, costs at most a few hundred delay computations.
  private func worstCaseDelayTotal(ofRetries count: Int) -> Duration {
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

  /// The retries whose delays ``worstCaseDelayTotal(ofRetries:)`` adds one by one.
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
