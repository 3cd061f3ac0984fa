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
/// A limiter made without a clock (``init()``) reads the clock of the run that asks it, as a
/// breaker does: a test's manual clock included. The rate is set by the first policy that
/// uses the limiter. It is safe to use from any task; its state is kept behind a lock.
public final class RateLimiter: @unchecked Sendable {
  // Sound: `machine` and `binding` are read and written only while `lock` is held.
  private let lock = NSLock()
  private let clock: CircuitBreakerClock
  /// Whether the limiter was made without a clock, and so reads its runs' clock.
  private let readsRunClock: Bool
  private var machine: RateLimitStateMachine?
  /// For a limiter without a clock: the last clock other than the continuous one a run read
  /// it on, its identity, its reading at the binding, and the limiter's time then.
  private var binding: (identity: ClockIdentity, read: @Sendable () -> Duration, start: Int64)?

  /// Creates a rate limiter that reads the clock of the runs that use it (the system's
  /// continuous clock outside a run).
  public init() {
    clock = CircuitBreakerClock(clock: ContinuousClock())
    readsRunClock = true
  }

  /// Creates a rate limiter on `clock` (a test's manual clock).
  public init(clock: some Clock<Duration>) {
    self.clock = CircuitBreakerClock(clock: clock)
    readsRunClock = false
  }

  /// Creates a rate limiter that reads the time from `now`: a simulation's virtual time.
  package init(reading now: @escaping @Sendable () -> Duration) {
    clock = CircuitBreakerClock(reading: now)
    readsRunClock = false
  }

  /// The whole tokens in the bucket now, for `policy`.
  public func tokens(for policy: RatePolicy) -> Int {
    lock.withLock {
      let now = now(on: nil)
      return (machine ?? RateLimitStateMachine(policy: policy)).tokens(now: now)
    }
  }

  /// Asks for a token under `policy` for a run on `runClock` (nil: the continuous clock), a
  /// wait longer than `maxWait` being refused.
  package func reserve(
    policy: RatePolicy, maxWait: Duration?, on runClock: (any Clock<Duration>)? = nil
  ) -> RateLimitStateMachine.Reservation {
    let bound = maxWait.map(CircuitBreakerClock.nanoseconds)
    lock.lock()
    let now = now(on: runClock)
    var current = machine ?? RateLimitStateMachine(policy: policy)
    let reservation = current.reserve(now: now, maxWait: bound)
    machine = current
    lock.unlock()
    return reservation
  }

  /// Gives back the token of a wait that was cancelled, for a run on `runClock`.
  package func cancelReservation(on runClock: (any Clock<Duration>)? = nil) {
    lock.lock()
    let now = now(on: runClock)
    machine?.cancel(now: now)
    lock.unlock()
  }

  /// Called with the lock held: the limiter's time in nanoseconds for a run on `runClock`.
  ///
  /// A limiter without a clock carries its time on from one run clock to the next, so that
  /// it never goes back; outside a run it reads the last run clock bound.
  private func now(on runClock: (any Clock<Duration>)?) -> Int64 {
    guard readsRunClock else { return clock.now() }
    guard let runClock else {
      guard let binding else { return clock.now() }
      return Self.time(of: binding)
    }
    let identity = ClockIdentity(runClock)
    if let binding, binding.identity == identity { return Self.time(of: binding) }
    let start = binding.map(Self.time(of:)) ?? clock.now()
    let fresh = (identity: identity, read: Self.reader(of: runClock), start: start)
    binding = fresh
    return start
  }

  private static func time(
    of binding: (identity: ClockIdentity, read: @Sendable () -> Duration, start: Int64)
  ) -> Int64 {
    binding.start.addingClamped(CircuitBreakerClock.nanoseconds(binding.read()))
  }

  private static func reader<C: Clock<Duration>>(of clock: C) -> @Sendable () -> Duration {
    let origin = clock.now
    return { origin.duration(to: clock.now) }
  }
}
