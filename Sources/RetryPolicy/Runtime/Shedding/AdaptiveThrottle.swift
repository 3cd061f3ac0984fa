import Foundation

/// The local client throttle of `throttle xK [over D]`, owned and shared by the host.
///
/// It counts, over the last `over` (2 minutes by default), the attempts asked for and those
/// the service accepted (a success, or an error no rule matches), and refuses an attempt
/// locally with probability max(0, (requests − K × accepts) / (requests + 1)) (Google SRE,
/// "Handling Overload"). A run whose first attempt is refused throws ``ThrottledError``; a run
/// refused later throws its last error. The random draw comes from the run's environment, so
/// a seeded generator makes it reproducible; it is made only when the probability is above 0.
/// With the environment's default source, the system generator, the throttle draws from a
/// generator of its own (SplitMix64) seeded from the system generator when it is made: a
/// system call per draw would cost more than the whole refusal.
///
/// The window's length is set by the first policy that uses the throttle. It is safe to use
/// from any task: an attempt is counted and judged with one atomic addition, an accept with
/// another, and a lock is taken only when the time passes into the next of the window's 20
/// buckets (see `ThrottleCounts`).
public final class AdaptiveThrottle: @unchecked Sendable {
  // Sound: `counts` is atomics; its bucket changes and its configuration are made while
  // `lock` is held.
  private let lock = NSLock()
  private let clock: CircuitBreakerClock
  /// The window's counts and the throttle's random state, freed with the throttle.
  let counts: ThrottleCounts

  /// Creates a throttle on the system's monotonic clock.
  public init() {
    clock = CircuitBreakerClock()
    counts = Self.makeCounts()
  }

  /// Creates a throttle that measures its window on `clock` (a test's manual clock).
  public init(clock: some Clock<Duration>) {
    self.clock = CircuitBreakerClock(clock: clock)
    counts = Self.makeCounts()
  }

  /// Creates a throttle that reads the time from `now`: a simulation's virtual time.
  package init(reading now: @escaping @Sendable () -> Duration) {
    clock = CircuitBreakerClock(reading: now)
    counts = Self.makeCounts()
  }

  /// Where the throttle's clock counts from, when it reads the system's monotonic clock.
  var systemOrigin: Int64? {
    clock.systemOrigin
  }

  deinit {
    counts.deallocate()
  }

  private static func makeCounts() -> ThrottleCounts {
    var system = SystemRandomNumberGenerator()
    return ThrottleCounts.allocate(seed: system.next())
  }

  /// The probability that an attempt of `policy` asked for now is refused.
  public func refusalProbability(for policy: ThrottlePolicy) -> Double {
    let (requests, accepts) = counts(for: policy)
    return ThrottleCounts.probability(requests: requests, accepts: accepts, factor: policy.factor)
  }

  /// The requests and accepts in the window now, under `policy`.
  package func counts(for policy: ThrottlePolicy) -> (requests: Int, accepts: Int) {
    counts.counts(now: clock.now())
  }

  /// Counts an attempt asked for under `policy` and returns the probability that it is
  /// refused, the counts taken before its own request.
  @inline(__always)
  package func countRequest(policy: ThrottlePolicy) -> Double {
    let now = clock.now()
    if let probability = counts.request(now: now, factor: policy.factor) { return probability }
    return countRequestAdvancing(policy: policy, now: now)
  }

  /// ``countRequest(policy:)`` at `now`, past the current bucket (or before the first).
  private func countRequestAdvancing(policy: ThrottlePolicy, now: Int64) -> Double {
    lock.lock()
    defer { lock.unlock() }
    if counts.width == 0 { counts.configure(window: policy.window) }
    return counts.request(inCurrent: counts.advance(to: now), factor: policy.factor)
  }

  /// Counts an attempt asked for under `policy`: nil when it may start, else its refusal.
  ///
  /// `uniform` is a random number in [0, 1).
  package func request(policy: ThrottlePolicy, uniform: Double) -> ThrottledError? {
    let probability = countRequest(policy: policy)
    return uniform < probability ? ThrottledError(probability: probability) : nil
  }

  /// The decision on an attempt counted with refusal probability `probability`.
  ///
  /// Nil when it may start, else its refusal. The draw comes from a copy of `random` (a run's source, or
  /// the environment's), or from the throttle's own generator when `random` is the system's
  /// (``isSystem(_:)``).
  package func decide(
    _ probability: Double, drawingFrom random: any RandomNumberGenerator & Sendable
  ) -> ThrottledError? {
    guard probability > 0 else { return nil }
    let uniform: Double
    if Self.isSystem(random) {
      uniform = counts.uniform()
    } else {
      var copy = random
      uniform = Double(copy.next() >> 11) * 0x1p-53
    }
    return uniform < probability ? ThrottledError(probability: probability) : nil
  }

  /// A uniform random number in [0, 1) from the throttle's own generator.
  package func uniform() -> Double {
    counts.uniform()
  }

  /// Whether `random` is the system generator, whose draws the throttle replaces with its own.
  @inline(__always)
  package static func isSystem(_ random: any RandomNumberGenerator & Sendable) -> Bool {
    type(of: random) == SystemRandomNumberGenerator.self
  }

  /// Takes back a request counted just now under `policy`, for an attempt that did not start
  /// after all (the driver asks for it again).
  package func withdrawRequest(policy: ThrottlePolicy) {
    counts.withdrawRequest(now: clock.now())
  }

  /// Counts an accept: an attempt that succeeded or failed with an error no rule matches.
  @inline(__always)
  package func recordAccept() {
    let now = clock.now()
    if counts.accept(now: now) { return }
    recordAcceptAdvancing(now: now)
  }

  /// ``recordAccept()`` at `now`, past the current bucket; nothing before the first request.
  private func recordAcceptAdvancing(now: Int64) {
    lock.lock()
    defer { lock.unlock() }
    guard counts.width > 0 else { return }
    counts.accept(inCurrent: counts.advance(to: now))
  }
}
