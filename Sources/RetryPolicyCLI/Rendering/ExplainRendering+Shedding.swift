import RetryPolicy
import RetryPolicyEngines

// `explain` for `limit`, `throttle` and `rate`: the rows and the JSON members (contract §14).

extension ExplainRendering {
  /// The `limit` row.
  ///
  ///     limit  at most 16 attempts in flight at once; 4 more wait in line, first come first
  ///            served, until 'within'
  static func limitText(_ limit: ConcurrencyLimitPolicy) -> String {
    switch limit {
    case .fixed(let count, let queue):
      let line =
        queue == 0
        ? "an attempt past them is refused ('limitExceeded')"
        : "\(queue) more wait in line, first come first served, until 'within'; further ones"
          + " are refused ('limitExceeded')"
      return "at most \(count) attempts in flight at once; " + line
    case .adaptive(let minimum, let maximum):
      return "adapts to the p90 latency of attempts between \(minimum) and \(maximum) in"
        + " flight, starting at \(min(ConcurrencyLimitPolicy.adaptiveInitialLimit, maximum));"
        + " attempts past it are refused ('limitExceeded')"
    }
  }

  /// The `throttle` row.
  static func throttleText(_ throttle: ThrottlePolicy) -> String {
    let factor = CompiledPolicy.numberText(throttle.factor)
    return "refuses attempts locally with probability max(0, (requests − \(factor) × accepts)"
      + " / (requests + 1)) over the last \(throttle.window.policyText) ('throttled')"
  }

  /// The `rate` row.
  static func rateText(_ rate: RatePolicy) -> String {
    let period =
      switch rate.period {
      case .seconds(1): "second"
      case .seconds(60): "minute"
      default: rate.period.policyText
      }
    let interval = (rate.period / Swift.max(rate.count, 1)).policyText
    return "\(rate.count) attempts per \(period) (a token every \(interval)), bursts of"
      + " \(rate.burst); an attempt waits for its token, refused ('rateLimited') when it would"
      + " come past 'within'"
  }

  /// `"limit": {"max": N, "queue": M}` or `{"adaptive": {"min": A, "max": B}}`, or null.
  static func limitJSON(_ limit: ConcurrencyLimitPolicy?) -> JSONValue {
    switch limit {
    case .fixed(let count, let queue)?:
      return .object([JSONMember("max", .int(count)), JSONMember("queue", .int(queue))])
    case .adaptive(let minimum, let maximum)?:
      return .object([
        JSONMember(
          "adaptive", .object([JSONMember("min", .int(minimum)), JSONMember("max", .int(maximum))]))
      ])
    case nil:
      return .null
    }
  }

  /// `"throttle": {"factor": K, "window": seconds}` or null.
  static func throttleJSON(_ throttle: ThrottlePolicy?) -> JSONValue {
    guard let throttle else { return .null }
    return .object([
      JSONMember("factor", .double(throttle.factor)),
      JSONMember("window", .seconds(throttle.window)),
    ])
  }

  /// `"rate": {"perSecond": x, "burst": M}` or null.
  static func rateJSON(_ rate: RatePolicy?) -> JSONValue {
    guard let rate else { return .null }
    return .object([
      JSONMember("perSecond", .double(rate.perSecond)),
      JSONMember("burst", .int(rate.burst)),
    ])
  }
}
