import Foundation

/// The token bucket of `rate N/s [burst M]` or `rate N/m [burst M]`, owned and shared by the
/// host.
///
/// Each attempt takes a token; a token comes every 1/N of the period and the bucket holds M
/// (N when not written). An attempt with no token waits for the next one, on the run's clock
/// (the wait counts as a delay: `within` and cancellation apply, and a cancelled wait gives
/// its token back); one whose wait would end past `within` is refused: a run whose first
/// attempt is refused throws ``RateLimitedError``, a run refused later throws its last error.
///
/// The rate is set by the first policy that uses the limiter. It is safe to use from any
/// task; its state is kept behind a lock.
public final class RateLimiter: @unchecked Sendable {
  // Sound: `machine` is read and written only while `lock` is held.
  private let lock = NSLock()
  private let clock: CircuitBreakerClock
  private var machine: RateLimitStateMachine?

  /// Creates a rate limiter on the system's continuous clock.
  public init() {
    clock = CircuitBreakerClock(clock: ContinuousClock())
  }

  /// Creates a rate limiter on `clock` (a test's manual clock).
  public init(clock: some Clock<Duration>) {
    self.clock = CircuitBreakerClock(clock: clock)
  }

  /// Creates a rate limiter that reads the time from `now`: a simulation's virtual time.
  package init(reading now: @escaping @Sendable () -> Duration) {
    clock = CircuitBreakerClock(reading: now)
  }

  /// The whole tokens in the bucket now, for `policy`.
  public func tokens(for policy: RatePolicy) -> Int {
    let now = clock.now()
    return lock.withLock { (machine ?? RateLimitStateMachine(policy: policy)).tokens(now: now) }
  }

  /// Asks for a token under `policy`, a wait longer than `maxWait` being refused.
  package func reserve(
    policy: RatePolicy, maxWait: Duration?
  ) -> RateLimitStateMachine.Reservation {
    let now = clock.now()
    let bound = maxWait.map(CircuitBreakerClock.nanoseconds)
    lock.lock()
    var current = machine ?? RateLimitStateMachine(policy: policy)
    let reservation = current.reserve(now: now, maxWait: bound)
    machine = current
    lock.unlock()
    return reservation
  }

  /// Gives back the token of a wait that was cancelled.
  package func cancelReservation() {
    let now = clock.now()
    lock.lock()
    machine?.cancel(now: now)
    lock.unlock()
  }
}
