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

  /// Counts an attempt asked for under `policy`: nil when it may start, else its refusal.
  ///
  /// `uniform` is a random number in [0, 1).
  package func request(policy: ThrottlePolicy, uniform: Double) -> ThrottledError? {
    let now = clock.now()
    lock.lock()
    var current = window ?? ThrottleWindow(window: policy.window)
    let probability = current.refusalProbability(now: now, factor: policy.factor)
    let admitted = current.request(now: now, factor: policy.factor, uniform: uniform)
    window = current
    lock.unlock()
    return admitted ? nil : ThrottledError(probability: probability)
  }

  /// Counts an accept: an attempt that succeeded or failed with an error no rule matches.
  package func recordAccept() {
    let now = clock.now()
    lock.lock()
    window?.accept(now: now)
    lock.unlock()
  }
}
