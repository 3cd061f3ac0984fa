/// The token bucket of `rate N/s [burst M]` and `rate N/m [burst M]`, as a pure state machine.
///
/// Kept as the generic cell rate algorithm: instead of a count of tokens refilled by a timer,
/// it keeps the *theoretical arrival time* of the next token, which is the same bucket with
/// no refill to perform. A token comes every `interval` (the period divided by N, rounded
/// down to a nanosecond); the bucket holds M tokens, so M attempts may start at once after a
/// quiet period. An attempt that finds no token reserves the next one and waits until it
/// comes; one whose wait would end past its deadline (`within`) is refused and reserves
/// nothing; a cancelled wait gives its token back.
///
/// It performs nothing: ``RateLimiter`` keeps it behind a lock and passes the time in
/// nanoseconds since it was made.
package struct RateLimitStateMachine: Sendable {
  /// What happens to an attempt that asks for a token.
  package enum Reservation: Sendable, Hashable {
    /// It has a token now.
    case now
    /// It has the token that comes after this many nanoseconds: it waits that long first.
    case after(Int64)
    /// Its wait (this many nanoseconds) would end past its deadline; nothing was reserved.
    case refused(wait: Int64)
  }

  /// The nanoseconds between two tokens.
  package let interval: Int64
  /// How far ahead of time a token may be taken: (M − 1) × interval.
  private let tolerance: Int64
  /// When the bucket is full again if nothing else is taken; a token taken moves it on by one
  /// interval.
  private var theoreticalArrival: Int64 = 0

  /// A bucket of `policy`'s rate and burst, full.
  package init(policy: RatePolicy) {
    let period = CircuitBreakerClock.nanoseconds(policy.period)
    interval = Swift.max(period / Int64(Swift.max(policy.count, 1)), 1)
    tolerance = interval.multipliedClamped(by: Int64(Swift.max(policy.burst, 1) - 1))
  }

  /// The tokens in the bucket at `now`, whole ones only.
  package func tokens(now: Int64) -> Int {
    let ahead = Swift.max(theoreticalArrival, now).subtractingClamped(now)
    let room = tolerance.addingClamped(interval).subtractingClamped(ahead)
    return Swift.max(Int(room / interval), 0)
  }

  /// Asks for a token at `now`; a wait past `maxWait` nanoseconds (nil: no bound) is refused.
  package mutating func reserve(now: Int64, maxWait: Int64? = nil) -> Reservation {
    let base = Swift.max(theoreticalArrival, now)
    let start = base.subtractingClamped(tolerance)
    let wait = Swift.max(start.subtractingClamped(now), 0)
    if let maxWait, wait > maxWait { return .refused(wait: wait) }
    theoreticalArrival = base.addingClamped(interval)
    return wait == 0 ? .now : .after(wait)
  }

  /// Gives back the token of a reservation whose wait was cancelled at `now`.
  package mutating func cancel(now: Int64) {
    theoreticalArrival = Swift.max(theoreticalArrival.subtractingClamped(interval), now)
  }
}
