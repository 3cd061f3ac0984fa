extension Duration {
  /// The longest delay the library computes: 10^9 seconds (about 31.7 years).
  ///
  /// Delay arithmetic saturates here instead of overflowing: `retry 1000 backoff 1s x10`
  /// simply reaches this ceiling, and every larger delay is this one.
  public static let saturatedDelay: Duration = .seconds(1_000_000_000)

  /// ``saturatedDelay`` in seconds.
  package static let saturatedSeconds = 1e9

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
  /// multiplication corrects it. Beyond that, `components` itself. Same results as
  /// `components`: both parts truncated toward zero, with the sign of the duration.
  package var exactComponents: (seconds: Int64, attoseconds: Int64) {
    let unit: Int64 = 1_000_000_000_000_000_000
    let total = attoseconds
    if let small = Int64(exactly: total) {
      let (whole, fraction) = small.quotientAndRemainder(dividingBy: unit)
      return (whole, fraction)
    }
    guard total.magnitude < (1 as UInt128) << 100 else { return components }
    let estimate = Double(_high) * 0x1p64 + Double(_low)
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

  /// The duration in the policy language's own notation: `250ms`, `1.5s`, `2m`, `1h`.
  ///
  /// Whole minutes and hours use `m` and `h`; below a second, whole milliseconds use `ms`;
  /// everything else is seconds with as many decimals as needed (at most 9).
  package var policyText: String {
    let (whole, attoseconds) = components
    if attoseconds == 0, whole != 0 {
      if whole % 3600 == 0 { return "\(whole / 3600)h" }
      if whole % 60 == 0 { return "\(whole / 60)m" }
    }
    if whole == 0, attoseconds != 0, attoseconds % 1_000_000_000_000_000 == 0 {
      return "\(attoseconds / 1_000_000_000_000_000)ms"
    }
    return Self.decimalSeconds(whole: whole, attoseconds: attoseconds) + "s"
  }

  /// The duration as a plain decimal number of seconds, such as `5.0625` or `0.25`.
  package var secondsText: String {
    let (whole, attoseconds) = components
    return Self.decimalSeconds(whole: whole, attoseconds: attoseconds)
  }

  private static func decimalSeconds(whole: Int64, attoseconds: Int64) -> String {
    guard whole >= 0, attoseconds >= 0 else { return "-" + Duration.zero.secondsText }
    let nanoseconds = attoseconds / 1_000_000_000
    guard nanoseconds != 0 else { return "\(whole)" }
    var fraction = String(nanoseconds)
    fraction = String(repeating: "0", count: 9 - fraction.count) + fraction
    while fraction.hasSuffix("0") { fraction.removeLast() }
    return "\(whole).\(fraction)"
  }
}
