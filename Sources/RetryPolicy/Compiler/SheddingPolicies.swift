/// `limit N [queue M]` or `limit adaptive [min A] [max B]`: how many attempts of a policy may be
/// in flight at once, across every run that shares the policy's ``ConcurrencyLimiter``.
///
///     // limit 8 queue 16
///     ConcurrencyLimitPolicy.fixed(limit: 8, queue: 16)
///     // limit adaptive
///     ConcurrencyLimitPolicy.adaptive(minimum: 1, maximum: 200)
public enum ConcurrencyLimitPolicy: Sendable, Hashable {
  /// At most `limit` attempts in flight; up to `queue` more wait in line, first come first
  /// served, for a free slot.
  case fixed(limit: Int, queue: Int)
  /// A limit that follows the measured latency of attempts, within `minimum` … `maximum`.
  case adaptive(minimum: Int, maximum: Int)

  /// The allowed values of `N` in `limit N`.
  public static let limitRange = 1...1_000_000
  /// The allowed values of `M` in `queue M`.
  public static let queueRange = 0...1_000_000
  /// The allowed values of `min` and `max` in `limit adaptive`.
  public static let adaptiveRange = 1...1_000_000
  /// The default of `min` in `limit adaptive`.
  public static let defaultAdaptiveMinimum = 1
  /// The default of `max` in `limit adaptive`.
  public static let defaultAdaptiveMaximum = 200
  /// The most an adaptive limit starts at: it starts at min(20, `max`).
  public static let adaptiveInitialLimit = 20
}

/// `throttle xK [over D]`: adaptive client throttling (Google SRE, "Handling Overload").
///
/// Over the last ``window``, an attempt is refused locally with probability
/// max(0, (requests − K × accepts) / (requests + 1)); the state belongs to an
/// ``AdaptiveThrottle`` the host owns.
///
///     // throttle x2 over 2m
///     ThrottlePolicy(factor: 2)
public struct ThrottlePolicy: Sendable, Hashable {
  /// The default of `over`: 2 minutes.
  public static let defaultWindow: Duration = .seconds(120)
  /// The allowed values of `K`.
  public static let factorRange: ClosedRange<Double> = 1...10
  /// The allowed lengths of `over`: 1 second to 1 day.
  public static let windowRange: ClosedRange<Duration> = .seconds(1) ... .seconds(86_400)

  /// `K`: how many requests per accept the throttle lets through before it refuses any.
  public var factor: Double
  /// How far back requests and accepts count (`over`), in 20 buckets.
  public var window: Duration

  /// Creates a throttle clause; the default window is the language's.
  public init(factor: Double, window: Duration = ThrottlePolicy.defaultWindow) {
    self.factor = factor
    self.window = window
  }
}

/// `rate N/s [burst M]` or `rate N/m [burst M]`: at most N attempts per second (per minute)
/// across every run that shares the policy's ``RateLimiter``, a token bucket of `burst` tokens.
///
///     // rate 50/s burst 100
///     RatePolicy(count: 50, per: .seconds(1), burst: 100)
public struct RatePolicy: Sendable, Hashable {
  /// The allowed values of `N`.
  public static let countRange = 1...1_000_000
  /// The allowed values of `burst`.
  public static let burstRange = 1...1_000_000

  /// `N`: the tokens added per ``period``.
  public var count: Int
  /// One second (`/s`) or one minute (`/m`).
  public var period: Duration
  /// `M`: the most tokens the bucket holds, at least 1; `N` when not written.
  public var burst: Int

  /// Creates a rate clause; `burst` defaults to `count`.
  public init(count: Int, per period: Duration, burst: Int? = nil) {
    self.count = count
    self.period = period
    self.burst = burst ?? Swift.max(count, 1)
  }

  /// The rate as policy text: `50/s`, `30/m`; a period of another length (set through the
  /// library) is written after the slash, `5/10s`, which the language does not take.
  package var policyText: String {
    switch period {
    case .seconds(1): "\(count)/s"
    case .seconds(60): "\(count)/m"
    default: "\(count)/\(period.policyText)"
    }
  }

  /// The attempts allowed per second, such as 0.5 for `rate 30/m`.
  public var perSecond: Double {
    let seconds =
      Double(period.components.seconds)
      + Double(period.components.attoseconds) / 1e18
    return seconds > 0 ? Double(count) / seconds : 0
  }
}
