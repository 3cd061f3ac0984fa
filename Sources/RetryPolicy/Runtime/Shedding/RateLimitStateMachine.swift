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
/// Tokens may also be handed out ahead (``handOut(now:upTo:)``), for takers who take them
/// without reading the clock: they are charged at the next reading (``settle(now:)``), as if
/// all were taken then. A token taken ahead was in the bucket when it was handed out, and a
/// bucket only loses tokens when they are taken, so it was there still: never more than the
/// rate allows. Charging late is the cautious side: the bucket refills at most the handed-out
/// tokens' intervals later than it would have.
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
  /// Tokens handed out ahead and not yet charged (``handOut(now:upTo:)``).
  package private(set) var ahead = 0

  /// A bucket of `policy`'s rate and burst, full.
  package init(policy: RatePolicy) {
    let period = CircuitBreakerClock.nanoseconds(policy.period)
    interval = Swift.max(period / Int64(Swift.max(policy.count, 1)), 1)
    tolerance = interval.multipliedClamped(by: Int64(Swift.max(policy.burst, 1) - 1))
  }

  /// The tokens in the bucket at `now`, whole ones only; `unused` of the tokens handed out
  /// ahead were not taken yet (the others count as taken at `now`).
  package func tokens(now: Int64, unused: Int = 0) -> Int {
    let early = Swift.max(theoreticalArrival, now).subtractingClamped(now)
    let room = tolerance.addingClamped(interval).subtractingClamped(early)
    let settled = Swift.max(Int(room / interval), 0)
    return Swift.max(settled - Swift.max(ahead - Swift.max(unused, 0), 0), 0)
  }

  /// Charges the tokens handed out ahead at `now`: all of them were taken by then.
  package mutating func settle(now: Int64) {
    guard ahead > 0 else { return }
    theoreticalArrival = Swift.max(theoreticalArrival, now).addingClamped(
      interval.multipliedClamped(by: Int64(ahead)))
    ahead = 0
  }

  /// Hands out up to `limit` of the tokens in the bucket at `now`; returns how many.
  ///
  /// They are taken without reading the clock. Those handed out before must have been taken:
  /// they are charged now (``settle(now:)``).
  package mutating func handOut(now: Int64, upTo limit: Int) -> Int {
    settle(now: now)
    ahead = Swift.min(tokens(now: now), Swift.max(limit, 0))
    return ahead
  }

  /// The shortest wait, of an attempt that asks for a token at some time from `earliest` to
  /// `latest` and finds the tokens handed out ahead all taken, whatever the time.
  ///
  /// A refusal needs no exact time: a wait past the deadline even at `latest` is refused.
  package func shortestWait(from earliest: Int64, to latest: Int64) -> Int64 {
    let arrival = Swift.max(theoreticalArrival, earliest).addingClamped(
      interval.multipliedClamped(by: Int64(ahead)))
    return Swift.max(arrival.subtractingClamped(tolerance).subtractingClamped(latest), 0)
  }

  /// Asks for a token at `now`; a wait past `maxWait` nanoseconds (nil: no bound) is refused.
  ///
  /// The tokens handed out ahead must have been taken: they are charged first.
  package mutating func reserve(now: Int64, maxWait: Int64? = nil) -> Reservation {
    settle(now: now)
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
