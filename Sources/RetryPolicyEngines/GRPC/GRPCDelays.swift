import RetryPolicy

/// gRPC's delays as a rule's delay clause: exact whenever the language can say them.
enum GRPCDelays {
  /// The longest duration the language accepts: 10000h.
  static let longest = Duration.seconds(36_000_000)

  /// The duration nearest `seconds`, in whole nanoseconds (protobuf's precision), between
  /// 1ns and ``longest``.
  static func duration(seconds: Double) -> Duration {
    let nanoseconds = (seconds * 1e9).rounded()
    guard nanoseconds >= 1 else { return .nanoseconds(1) }
    guard nanoseconds < 3.6e16 else { return longest }
    return .nanoseconds(Int64(nanoseconds))
  }

  /// The delay clause for gRPC's delays.
  ///
  /// Retry n waits min(initial × multiplier^(n−1), maximum),
  /// n = 1 … `retries` (jitter aside, which gRPC draws after the cap):
  /// - one delay, or a multiplier of 1: `delay` with the smaller of initial and maximum;
  /// - a multiplier above 1 whose cap no jittered delay reaches (1.2 × the last delay ≤
  ///   maximum): `backoff initial xF max maximum` (the cap then never acts, and is kept for
  ///   the round trip);
  /// - otherwise (a multiplier below 1, or a cap reached): the explicit `delays` list.
  static func behavior(
    retries: Int, initial: Duration, maximum: Duration, multiplier: Double
  ) -> (behavior: RepeatBehavior, maxDelay: Duration?) {
    let first = min(initial, maximum)
    if retries <= 1 || multiplier == 1 || (multiplier > 1 && maximum <= initial) {
      return (.delayed(maxCount: retries, delay: first), nil)
    }
    let start = initial / .seconds(1)
    let cap = maximum / .seconds(1)
    var last = start
    for _ in 1..<retries { last *= multiplier }
    if multiplier > 1, multiplier <= 1000, last.isFinite, last * 1.2 <= cap, maximum <= longest {
      return (.exponential(maxCount: retries, initial: initial, multiplier: multiplier), maximum)
    }
    var delays: [Duration] = []
    var nominal = start
    for _ in 0..<retries {
      delays.append(duration(seconds: min(nominal, cap)))
      nominal *= multiplier
    }
    if let firstDelay = delays.first, delays.allSatisfy({ $0 == firstDelay }) {
      return (.delayed(maxCount: retries, delay: firstDelay), nil)
    }
    return (.customTimerDelayed(maxCount: retries, delays: delays), nil)
  }
}
