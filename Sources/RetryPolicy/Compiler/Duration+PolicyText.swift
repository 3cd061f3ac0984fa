extension Duration {
  /// The duration in the policy language's own notation: `250ms`, `1.5s`, `2m`, `1h`.
  ///
  /// Whole minutes and hours use `m` and `h`; below a second, whole milliseconds use `ms`;
  /// everything else is seconds with as many decimals as needed (at most 9).
  package var policyText: String {
    let (whole, attoseconds) = exactComponents
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
    let (whole, attoseconds) = exactComponents
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

extension Duration {
  /// The duration as ``policyText`` writes it, rounded to the nearest millisecond (a positive
  /// duration to at least 1 ms): what messages and events print, never `1.948000001s`.
  package var messageText: String {
    let (seconds, attoseconds) = components
    let perMillisecond: Int64 = 1_000_000_000_000_000
    guard seconds >= 0, attoseconds >= 0 else { return policyText }
    var milliseconds = attoseconds / perMillisecond
    if attoseconds % perMillisecond >= perMillisecond / 2 { milliseconds += 1 }
    if seconds == 0, milliseconds == 0, attoseconds > 0 { milliseconds = 1 }
    var whole = seconds
    if milliseconds == 1000 {
      guard whole < .max else { return policyText }
      whole += 1
      milliseconds = 0
    }
    return Duration(
      secondsComponent: whole, attosecondsComponent: milliseconds * perMillisecond
    ).policyText
  }
}
