// The one file of `Duration` arithmetic, shared by the compiler's schedules, the runtime and
// the test clocks of `RetryPolicyTesting`. Everything is `package`: an extension of a standard
// type that every importer would see does not belong in the public API. Only public
// `Duration` members are used (`attoseconds`, `components`, the operators), never the
// underscored storage.

extension Duration {
  /// The longest delay the library computes: 10^9 seconds (about 31.7 years).
  ///
  /// Delay arithmetic saturates here instead of overflowing: `retry 1000 backoff 1s x10`
  /// simply reaches this ceiling, and every larger delay is this one.
  package static let saturatedDelay: Duration = .seconds(1_000_000_000)

  /// ``saturatedDelay`` in seconds.
  package static let saturatedSeconds = 1e9

  /// The bound of the runtime's and the virtual clocks' sums: 2^50 s (about 36 million
  /// years), far inside what `Duration` can hold, so a sum of two such values never overflows.
  package static let clampLimit: Duration = .seconds(1 << 50)

  /// A quarter of ``clampLimit``: two durations within it add up exactly, inside the limit.
  private static let exactSumLimit: Duration = .seconds(1 << 48)

  /// `Duration.zero`, built in place (`zero` is a call into the standard library).
  @inlinable
  @inline(__always)
  package static var zeroInline: Duration {
    Duration(attoseconds: 0)
  }

  /// Whether the duration is above zero, compared in place as `Int128` attoseconds
  /// (`Duration`'s `<` is a call into the standard library).
  @inlinable
  @inline(__always)
  package var isPositive: Bool {
    attoseconds > 0
  }

  /// The duration as seconds in a `Double`: the whole seconds exactly, plus the fraction.
  ///
  /// (Dividing all the attoseconds at once would be cheaper, but rounds large durations such
  /// as `10000h` up past themselves, so a capped delay could exceed its cap.)
  package var seconds: Double {
    let (whole, attoseconds) = exactComponents
    return Double(whole) + Double(attoseconds) / 1e18
  }

  /// `components` without its 128-bit division, for the durations delays are made of.
  ///
  /// Below 2^63 attoseconds (about 9.2 s) a 64-bit division by a constant does it, which the
  /// compiler turns into a multiplication. Below 2^100 attoseconds (about 40,000 years) a
  /// `Double` estimate of the whole seconds is off by at most one, and an exact 128-bit
  /// multiplication corrects it. Beyond that, a 128-bit division. Same results as
  /// `components`: both parts truncated toward zero, with the sign of the duration; but
  /// where `components` would trap (past Int64.max seconds), the seconds saturate.
  package var exactComponents: (seconds: Int64, attoseconds: Int64) {
    let unit: Int64 = 1_000_000_000_000_000_000
    let total = attoseconds
    if let small = Int64(exactly: total) {
      let (whole, fraction) = small.quotientAndRemainder(dividingBy: unit)
      return (whole, fraction)
    }
    guard total.magnitude < (1 as UInt128) << 100 else {
      // `components` traps past Int64.max seconds (a `Duration(attoseconds: .max)` is
      // 1.7 × 10^20 s): the whole seconds saturate there instead.
      let (whole, fraction) = total.quotientAndRemainder(dividingBy: Int128(unit))
      guard let seconds = Int64(exactly: whole) else { return (total > 0 ? .max : .min, 0) }
      return (seconds, Int64(truncatingIfNeeded: fraction))
    }
    let high = Int64(truncatingIfNeeded: total >> 64)
    let low = UInt64(truncatingIfNeeded: total)
    let estimate = Double(high) * 0x1p64 + Double(low)
    var whole = Int64((estimate / 1e18).rounded(.towardZero))
    var fraction = total - Int128(whole) * Int128(unit)
    // Truncation toward zero: the fraction lies in [0, unit) for a positive duration, in
    // (−unit, 0] for a negative one.
    while total > 0, fraction < 0 {
      whole -= 1
      fraction += Int128(unit)
    }
    while total > 0, fraction >= Int128(unit) {
      whole += 1
      fraction -= Int128(unit)
    }
    while total < 0, fraction > 0 {
      whole += 1
      fraction -= Int128(unit)
    }
    while total < 0, fraction <= -Int128(unit) {
      whole -= 1
      fraction += Int128(unit)
    }
    return (whole, Int64(truncatingIfNeeded: fraction))
  }

  /// A duration from seconds, rounded to the nanosecond and clamped to
  /// [0, ``saturatedDelay``]; NaN becomes zero.
  package static func saturating(seconds: Double) -> Duration {
    guard seconds > 0 else { return .zero }  // also NaN
    guard seconds < saturatedSeconds else { return saturatedDelay }
    let nanoseconds = Int64((seconds * 1e9).rounded())
    // Below 10^18 nanoseconds, so the product fits in 128 bits with room to spare.
    return Duration(attoseconds: Int128(nanoseconds) * 1_000_000_000)
  }

  /// The sum, stopping at ±``clampLimit`` instead of overflowing.
  package func addingClamped(_ other: Duration) -> Duration {
    clamped(attoseconds, other.attoseconds, negatingOther: false)
  }

  /// The difference, stopping at ±``clampLimit`` instead of overflowing.
  package func subtractingClamped(_ other: Duration) -> Duration {
    clamped(attoseconds, other.attoseconds, negatingOther: true)
  }

  /// `lhs ± rhs` in attoseconds, clamped to ±``clampLimit``.
  @inline(__always)
  private func clamped(_ lhs: Int128, _ rhs: Int128, negatingOther: Bool) -> Duration {
    // Within ±2^48 s each, the result is exact and inside the limit: one 128-bit operation.
    let exact = Duration.exactSumLimit.attoseconds
    if Swift.max(lhs, rhs) < exact, Swift.min(lhs, rhs) > -exact {
      return Duration(attoseconds: negatingOther ? lhs - rhs : lhs + rhs)
    }
    // Otherwise the exact 128-bit result, or its sign when it overflows, then clamped.
    let limit = Duration.clampLimit.attoseconds
    let (total, overflow) =
      negatingOther ? lhs.subtractingReportingOverflow(rhs) : lhs.addingReportingOverflow(rhs)
    if overflow { return Duration(attoseconds: lhs > 0 ? limit : -limit) }
    return Duration(attoseconds: Swift.min(Swift.max(total, -limit), limit))
  }
}
