import Foundation

/// The local client throttle of `throttle xK [over D]`, owned and shared by the host.
///
/// It counts, over the last `over` (2 minutes by default), the attempts asked for and those
/// the service accepted (a success, or an error no rule matches), and refuses an attempt
/// locally with probability max(0, (requests − K × accepts) / (requests + 1)) (Google SRE,
/// "Handling Overload"). A run whose first attempt is refused throws ``ThrottledError``; a run
/// refused later throws its last error. The random draw comes from the run's environment, so
/// a seeded generator makes it reproducible.
///
/// The window's length is set by the first policy that uses the throttle. It is safe to use
/// from any task; its state is kept behind a lock.
public final class AdaptiveThrottle: @unchecked Sendable {
  // Sound: `window` is read and written only while `lock` is held.
  private let lock = NSLock()
  private let clock: CircuitBreakerClock
  private var window: ThrottleWindow?

  /// Creates a throttle on the system's monotonic clock.
  public init() {
    clock = CircuitBreakerClock()
  }

  /// Creates a throttle that measures its window on `clock` (a test's manual clock).
  public init(clock: some Clock<Duration>) {
    self.clock = CircuitBreakerClock(clock: clock)
  }

  /// Creates a throttle that reads the time from `now`: a simulation's virtual time.
  package init(reading now: @escaping @Sendable () -> Duration) {
    clock = CircuitBreakerClock(reading: now)
  }

  /// The probability that an attempt of `policy` asked for now is refused.
  public func refusalProbability(for policy: ThrottlePolicy) -> Double {
    let now = clock.now()
    return lock.withLock {
      (window ?? ThrottleWindow(window: policy.window))
        .refusalProbability(now: now, factor: policy.factor)
    }
  }

  /// The requests and accepts in the window now, under `policy`.
  package func counts(for policy: ThrottlePolicy) -> (requests: Int, accepts: Int) {
    let now = clock.now()
    return lock.withLock { (window ?? ThrottleWindow(window: policy.window)).counts(now: now) }
  }

  /// Counts an attempt asked for under `policy`: nil when it may start, else its refusal.
  ///
  /// `uniform` is a random number in [0, 1).
  package func request(policy: ThrottlePolicy, uniform: Double) -> ThrottledError? {
    let now = clock.now()
    lock.lock()
    if window == nil { window = ThrottleWindow(window: policy.window) }
    // In place: the window's buckets are never copied.
    let probability = window?.currentRefusalProbability(now: now, factor: policy.factor) ?? 0
    window?.count(now: now)
    lock.unlock()
    return uniform < probability ? ThrottledError(probability: probability) : nil
  }

  /// Counts and admits an attempt asked for under `policy` when its refusal probability is
  /// 0, with no random draw; returns false, counting nothing, when it is above 0.
  package func requestIfClear(policy: ThrottlePolicy) -> Bool {
    let now = clock.now()
    lock.lock()
    if window == nil { window = ThrottleWindow(window: policy.window) }
    let isClear = window?.requestIfClear(now: now, factor: policy.factor) ?? false
    lock.unlock()
    return isClear
  }

  /// Counts an attempt under `policy` that `uniform` refuses and returns its refusal; counts
  /// nothing and returns nil when it would be admitted (the driver then asks again).
  package func refuseOrPass(policy: ThrottlePolicy, uniform: Double) -> ThrottledError? {
    let now = clock.now()
    lock.lock()
    if window == nil { window = ThrottleWindow(window: policy.window) }
    let probability = window?.currentRefusalProbability(now: now, factor: policy.factor) ?? 0
    let isRefused = uniform < probability
    if isRefused { window?.count(now: now) }
    lock.unlock()
    return isRefused ? ThrottledError(probability: probability) : nil
  }

  /// Takes back a request ``requestIfClear(policy:)`` counted, for an attempt that did not
  /// start after all (the driver asks for it again).
  package func withdrawRequest(policy: ThrottlePolicy) {
    let now = clock.now()
    lock.lock()
    window?.uncount(now: now)
    lock.unlock()
  }

  /// Counts an accept: an attempt that succeeded or failed with an error no rule matches.
  package func recordAccept() {
    let now = clock.now()
    lock.lock()
    window?.accept(now: now)
    lock.unlock()
  }
}
