/// The error of a run whose first attempt a concurrency limit refused (`limit`).
///
/// The operation was not called. Its error class is `limitExceeded`, and no rule retries it.
/// A run refused after its first attempt throws that attempt's last error instead, as a run
/// out of budget does.
public struct LimitExceededError: Error, Hashable, CustomStringConvertible {
  /// The limit in force when the attempt was refused.
  public var limit: Int
  /// Whether the attempt waited in line first (and left it when its wait would pass
  /// `within`).
  public var waited: Bool

  /// Creates the error of an attempt refused by a limit of `limit` attempts in flight.
  public init(limit: Int, waited: Bool = false) {
    self.limit = limit
    self.waited = waited
  }

  /// A phrase such as `concurrency limit of 8 reached`.
  public var description: String {
    waited
      ? "concurrency limit of \(limit) reached: no slot before the deadline"
      : "concurrency limit of \(limit) reached"
  }
}

/// The error of a run whose first attempt adaptive client throttling refused (`throttle`).
///
/// The operation was not called. Its error class is `throttled`, and no rule retries it.
/// A run refused after its first attempt throws that attempt's last error instead.
public struct ThrottledError: Error, Hashable, CustomStringConvertible {
  /// The probability of refusal when the attempt was refused, in [0, 1).
  public var probability: Double

  /// Creates the error of an attempt refused with probability `probability`.
  public init(probability: Double) {
    self.probability = probability
  }

  /// A phrase such as `throttled locally: 42% of attempts refused`.
  public var description: String {
    let percent = Int((probability * 100).rounded())
    return "throttled locally: \(percent)% of attempts refused"
  }
}

/// The error of a run whose first attempt a rate limit refused (`rate`): its token would come
/// past the `within` deadline.
///
/// The operation was not called. Its error class is `rateLimited`, and no rule retries it.
/// A run refused after its first attempt throws that attempt's last error instead.
public struct RateLimitedError: Error, Hashable, CustomStringConvertible {
  /// How long the attempt would have waited for its token.
  public var wait: Duration

  /// Creates the error of an attempt whose token would come after `wait`.
  public init(wait: Duration) {
    self.wait = wait
  }

  /// A phrase such as `rate limited: the next token comes in 2s, past the deadline`.
  public var description: String {
    "rate limited: the next token comes in \(wait.policyText), past the deadline"
  }
}
