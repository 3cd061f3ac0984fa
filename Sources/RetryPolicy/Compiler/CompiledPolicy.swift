/// How a rule spaces its retries and how many it makes: the compiled form of a rule's
/// count and delay clause, in the spirit of RxSwiftExt's `RepeatBehavior`.
///
/// `maxCount` is the number of *retries* after the first attempt (so `maxCount: 5` allows
/// six attempts in all), or nil for `retry forever`. It is never negative.
///
///     // retry 5 backoff 1s x1.5
///     RepeatBehavior.exponential(maxCount: 5, initial: .seconds(1), multiplier: 1.5)
public enum RepeatBehavior: Sendable, Hashable {
  /// Retries at once: `immediately`, or a rule with no delay clause.
  case immediate(maxCount: Int?)
  /// The same delay before every retry: `delay D`.
  case delayed(maxCount: Int?, delay: Duration)
  /// Retry n waits `initial × multiplier^(n−1)`: `backoff D` or `backoff D xF`.
  case exponential(maxCount: Int?, initial: Duration, multiplier: Double)
  /// Retry n waits `initial + (n−1) × increment`: `backoff D +I`.
  case linear(maxCount: Int?, initial: Duration, increment: Duration)
  /// Retry n waits `delays[n−1]`; past the end the last delay repeats: `delays D1, D2, …`.
  case customTimerDelayed(maxCount: Int?, delays: [Duration])

  /// The most retries after the first attempt, or nil for no limit.
  public var maxCount: Int? {
    switch self {
    case .immediate(let maxCount), .delayed(let maxCount, _), .exponential(let maxCount, _, _),
      .linear(let maxCount, _, _), .customTimerDelayed(let maxCount, _):
      maxCount.map { Swift.max(0, $0) }
    }
  }

  /// The kind's name as `explain --json` writes it: `immediate`, `delayed`, `exponential`,
  /// `linear` or `custom`.
  package var kindName: String {
    switch self {
    case .immediate: "immediate"
    case .delayed: "delayed"
    case .exponential: "exponential"
    case .linear: "linear"
    case .customTimerDelayed: "custom"
    }
  }
}

/// How each delay is randomized, so that many clients do not retry in step.
public enum Jitter: Sendable, Hashable {
  /// `jitter P%`: the delay times a uniform factor in [1 − fraction, 1 + fraction].
  case proportional(fraction: Double)
  /// `jitter full`: a delay d becomes uniform in [0, d].
  case full
  /// `jitter equal`: a delay d becomes d/2 plus uniform in [0, d/2].
  case equal
  /// `jitter decorrelated`: uniform in [first delay, 3 × previous delay], then capped.
  case decorrelated

  /// The kind's name as `explain --json` writes it.
  package var kindName: String {
    switch self {
    case .proportional: "proportional"
    case .full: "full"
    case .equal: "equal"
    case .decorrelated: "decorrelated"
    }
  }
}

/// One compiled `retry` rule: which errors it takes, how often and how long it waits.
public struct RetryRule: Sendable, Hashable {
  /// The count and the delays.
  public var behavior: RepeatBehavior
  /// The classes of `on`; empty means any error but cancellation.
  public var errorClasses: [String] {
    didSet { matcher = RuleMatcher(on: errorClasses, except: excludedClasses) }
  }
  /// The classes of `except`: errors never retried by this rule.
  public var excludedClasses: [String] {
    didSet { matcher = RuleMatcher(on: errorClasses, except: excludedClasses) }
  }
  /// How delays are randomized, if at all.
  public var jitter: Jitter?
  /// The cap on every delay (`max`), applied after jitter.
  public var maxDelay: Duration?
  /// The host hook run before each retry (`after NAME`).
  public var hook: String?
  /// Whether a delay carried by the error replaces the computed one (`honoring retry-after`).
  public var honorsRetryAfter: Bool
  /// The `on` and `except` classes resolved once, when the rule is made or its classes are
  /// set: what a run classifies a failure with, without reading the classes' text again.
  package private(set) var matcher: RuleMatcher

  /// Creates a rule; every part but the behavior is optional.
  ///
  /// Out-of-range values are clamped, never trapped on: a `maxDelay` into
  /// [0, 10^9 s] and a proportional jitter's fraction into [0, 1] (NaN: 0). The behavior is
  /// kept as given; every use of it (schedules, delays, printing) treats a negative count as
  /// 0, a negative or NaN delay as 0, and saturates at 10^9 s.
  public init(
    behavior: RepeatBehavior,
    errorClasses: [String] = [],
    excludedClasses: [String] = [],
    jitter: Jitter? = nil,
    maxDelay: Duration? = nil,
    hook: String? = nil,
    honorsRetryAfter: Bool = false
  ) {
    self.behavior = behavior
    self.errorClasses = errorClasses
    self.excludedClasses = excludedClasses
    self.matcher = RuleMatcher(on: errorClasses, except: excludedClasses)
    if case .proportional(let fraction)? = jitter {
      let clamped = fraction.isNaN ? 0 : Swift.min(Swift.max(fraction, 0), 1)
      self.jitter = .proportional(fraction: clamped)
    } else {
      self.jitter = jitter
    }
    self.maxDelay = maxDelay.map(Duration.clampedForPolicy)
    self.hook = hook
    self.honorsRetryAfter = honorsRetryAfter
  }
}

/// A compiled policy: its rules, in order, and the policy-wide clauses.
///
/// A plain value: `==` compares every clause, and equal policies behave the same. The budget
/// that `budget P%` draws on is not part of the value: it is a ``RetryBudget`` the host owns
/// and passes in the ``RetryEnvironment``.
///
///     let policy = try compile(policy: "retry 5 on serverError backoff 1s x1.5 jitter 10%")
///     let value = try await policy.run { try await client.fetch() }
public struct CompiledPolicy: Sendable, Hashable {
  /// The policy's name in its file, or nil for a policy compiled from a single text.
  public var name: String?
  /// The rules; an error goes to the first rule that names it, else to the first rule without
  /// `on` that takes it (see `run`).
  public var rules: [RetryRule]
  /// The overall deadline from the first attempt (`within`).
  public var deadline: Duration?
  /// The limit on each attempt (`timeout`).
  public var attemptTimeout: Duration?
  /// The retry budget (`budget P%`) as a fraction of first attempts, such as 0.1: each run's
  /// first attempt deposits this much of a token in the run's ``RetryBudget``.
  public var budgetRatio: Double?
  /// Concurrent extra attempts (`hedge N after D`), run by ``runHedged(in:_:)-(_,()->Success)``.
  public var hedge: HedgePolicy?
  /// When the circuit opens (`breaker P% …`); the state is a ``CircuitBreaker`` the host owns.
  public var breaker: CircuitBreakerPolicy?
  /// How many attempts may be in flight at once (`limit N [queue M]`, `limit adaptive`); the
  /// state is a ``ConcurrencyLimiter`` the host owns.
  public var limit: ConcurrencyLimitPolicy?
  /// Adaptive client throttling (`throttle xK [over D]`); the state is an
  /// ``AdaptiveThrottle`` the host owns.
  public var throttle: ThrottlePolicy?
  /// The rate of attempts (`rate N/s [burst M]`); the state is a ``RateLimiter`` the host owns.
  public var rate: RatePolicy?

  /// Creates a policy from its parts.
  ///
  /// Out-of-range values are clamped, never trapped on: `deadline` and `attemptTimeout`
  /// into [0, 10^9 s], `budgetRatio` into [0, 1], a NaN ratio counting as 0 (a budget that
  /// allows only its floor of retries), as ``RetryBudget`` treats it.
  public init(
    name: String? = nil,
    rules: [RetryRule],
    deadline: Duration? = nil,
    attemptTimeout: Duration? = nil,
    budgetRatio: Double? = nil,
    hedge: HedgePolicy? = nil,
    breaker: CircuitBreakerPolicy? = nil,
    limit: ConcurrencyLimitPolicy? = nil,
    throttle: ThrottlePolicy? = nil,
    rate: RatePolicy? = nil
  ) {
    self.name = name
    self.rules = rules
    self.deadline = deadline.map(Duration.clampedForPolicy)
    self.attemptTimeout = attemptTimeout.map(Duration.clampedForPolicy)
    self.budgetRatio = budgetRatio.map(RetryBudget.clampedRatio)
    self.hedge = hedge
    self.breaker = breaker
    self.limit = limit
    self.throttle = throttle
    self.rate = rate
  }
}

/// `hedge N after D`: up to `count` extra concurrent attempts, one every `delay` while none
/// has succeeded.
///
///     // retry 2 on unavailable hedge 2 after 100ms
///     HedgePolicy(count: 2, delay: .milliseconds(100))
public struct HedgePolicy: Sendable, Hashable {
  /// The most extra attempts beyond the first (so `count + 1` attempts in all).
  public var count: Int
  /// The time between attempt starts while no attempt has finished.
  public var delay: Duration

  /// Creates a hedging clause; a negative count is clamped to 0, `delay` into [0, 10^9 s].
  public init(count: Int, delay: Duration) {
    self.count = Swift.max(0, count)
    self.delay = Duration.clampedForPolicy(delay)
  }
}

extension Duration {
  /// The duration within [0, ``saturatedDelay``]: what the public initializers keep.
  static func clampedForPolicy(_ duration: Duration) -> Duration {
    Swift.min(Swift.max(duration, .zero), .saturatedDelay)
  }
}
