import Foundation
import Synchronization

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
///
/// On the system's clock (runs on the continuous clock, the default), reading the time costs
/// more than the rest of an attempt's admission, so the limiter reads it only when the tokens
/// it handed out are gone: when it reads it and the bucket has a token, it also hands out the
/// tokens that would come within the next 100 µs at most (`handOutWindow`), which the next
/// attempts take with one atomic step, without the lock or the clock. Those tokens are
/// counted as taken when the limiter next reads the clock: never more than the rate allows,
/// and the bucket refills at most 100 µs later than it would have (see
/// `RateLimitStateMachine`). On any other clock it reads the time for every token.
public final class RateLimiter: @unchecked Sendable {
  // Sound: `machine`, `binding` and `lastRefusal` are read and written only while `lock` is
  // held; `handedOutStorage` is atomic, and only ever raised while `lock` is held.
  private let lock = NSLock()
  /// The limiter's own time.
  private let time: OwnTime
  /// Whether the limiter was made without a clock, and so reads its runs' clock.
  private let readsRunClock: Bool
  /// How many nanoseconds of tokens the limiter hands out ahead on its own time (0: none).
  private let handOutNanoseconds: Int64
  private var machine: RateLimitStateMachine?
  /// For a limiter without a clock: the last clock other than the continuous one a run read
  /// it on, its identity, its reading at the binding, and the limiter's time then.
  private var binding: (identity: ClockIdentity, read: @Sendable () -> Duration, start: Int64)?
  /// The error of the last refusal a first attempt got without the driver, boxed once, and
  /// the wait it states: the refusals in one tick of the coarse clock share it.
  private var lastRefusal: (wait: Int64, error: any Error)?
  /// The tokens handed out ahead and not taken yet, in memory of their own, which lives as
  /// long as the limiter (``tokensAtHand``).
  private let handedOutStorage: UnsafeMutablePointer<Atomic<Int>> = {
    let storage = UnsafeMutablePointer<Atomic<Int>>.allocate(capacity: 1)
    storage.initialize(to: Atomic<Int>(0))
    return storage
  }()

  /// The tokens handed out ahead, which a run may take without the limiter while it lives.
  var tokensAtHand: RateTokensAtHand { RateTokensAtHand(count: handedOutStorage) }

  deinit {
    handedOutStorage.deinitialize(count: 1)
    handedOutStorage.deallocate()
  }

  /// How far ahead, in time, a limiter on the system's clock hands out tokens: 100 µs.
  package static var handOutWindow: Duration { .microseconds(100) }

  /// Creates a rate limiter that reads the clock of the runs that use it (the system's
  /// continuous clock outside a run).
  public init() {
    time = OwnTime.system()
    readsRunClock = true
    handOutNanoseconds = CircuitBreakerClock.nanoseconds(Self.handOutWindow)
  }

  /// Creates a rate limiter on `clock` (a test's manual clock).
  public init(clock: some Clock<Duration>) {
    time = .clock(CircuitBreakerClock(clock: clock))
    readsRunClock = false
    handOutNanoseconds = 0
  }

  /// Creates a rate limiter that reads the time from `now`: a simulation's virtual time.
  ///
  /// With `handOutWindow`, it hands out tokens ahead as a limiter on the system's clock does
  /// (tests of that path on virtual time).
  package init(
    reading now: @escaping @Sendable () -> Duration, handOutWindow: Duration = .zero
  ) {
    time = .clock(CircuitBreakerClock(reading: now))
    readsRunClock = false
    handOutNanoseconds = CircuitBreakerClock.nanoseconds(handOutWindow)
  }

  /// The whole tokens in the bucket now, for `policy`.
  public func tokens(for policy: RatePolicy) -> Int {
    lock.withLock {
      let now = now(on: nil)
      return (machine ?? RateLimitStateMachine(policy: policy))
        .tokens(now: now, unused: handedOutStorage.pointee.load(ordering: .relaxed))
    }
  }

  /// Asks for a token under `policy` for a run on `runClock` (nil: the continuous clock), a
  /// wait longer than `maxWait` being refused.
  package func reserve(
    policy: RatePolicy, maxWait: Duration?, on runClock: (any Clock<Duration>)? = nil
  ) -> RateLimitStateMachine.Reservation {
    if takeHandedOut() { return .now }
    let bound = maxWait.map(CircuitBreakerClock.nanoseconds)
    lock.lock()
    // A hand-out may have come since: tokens at hand are taken first.
    if takeHandedOut() {
      lock.unlock()
      return .now
    }
    let now = now(on: runClock)
    var current = machine ?? RateLimitStateMachine(policy: policy)
    let reservation = current.reserve(now: now, maxWait: bound)
    if reservation == .now, handOutNanoseconds > 0, isOwnTime(on: runClock) {
      let count = current.handOut(now: now, upTo: Int(handOutNanoseconds / current.interval))
      if count > 0 { handedOutStorage.pointee.store(count, ordering: .relaxed) }
    }
    machine = current
    lock.unlock()
    return reservation
  }

  /// Takes a token for a first attempt under `policy` when the bucket has one now; false,
  /// with nothing taken, when the attempt would wait.
  package func takeAtOnce(policy: RatePolicy, on runClock: (any Clock<Duration>)?) -> Bool {
    if takeHandedOut() { return true }
    return reserve(policy: policy, maxWait: .zero, on: runClock) == .now
  }

  /// The refusal of a first attempt under `policy` for a run on `runClock` whose token would
  /// come more than `maxWait` (its `within`) from now, its ``RateLimitedError`` boxed; nil,
  /// with nothing taken, when it may have a token in time (the driver then asks).
  ///
  /// On the system's clock the time is first read coarsely (a few tens of nanoseconds, where
  /// the precise clock costs a few hundred), late by at most a tick of the kernel's timer: a
  /// wait past `maxWait` even at four ticks later is refused at once, and the error states that
  /// shortest wait. Any other case reads the time precisely.
  package func refusal(
    policy: RatePolicy, maxWait: Duration, on runClock: (any Clock<Duration>)?
  ) -> (any Error)? {
    if handedOutStorage.pointee.load(ordering: .relaxed) > 0 { return nil }
    let bound = CircuitBreakerClock.nanoseconds(maxWait)
    lock.lock()
    defer { lock.unlock() }
    // The tokens handed out are all taken only while none is left.
    guard handedOutStorage.pointee.load(ordering: .relaxed) == 0 else { return nil }
    let current = machine ?? RateLimitStateMachine(policy: policy)
    if isOwnTime(on: runClock), let coarse = time.coarse() {
      let wait = current.shortestWait(from: coarse, to: coarse.addingClamped(OwnTime.coarseLag))
      if wait > bound { return refusal(wait: wait) }
    }
    let now = now(on: runClock)
    let wait = current.shortestWait(from: now, to: now)
    return wait > bound ? refusal(wait: wait) : nil
  }

  /// Gives back the token of a wait that was cancelled, for a run on `runClock`.
  package func cancelReservation(on runClock: (any Clock<Duration>)? = nil) {
    lock.lock()
    let now = now(on: runClock)
    machine?.cancel(now: now)
    lock.unlock()
  }

  /// Takes one of the tokens handed out ahead; false when none is left.
  @inline(__always)
  private func takeHandedOut() -> Bool {
    tokensAtHand.take()
  }

  /// Called with the lock held: the error of a refusal whose token comes after `wait`
  /// nanoseconds, boxed once for every refusal that states the same wait.
  private func refusal(wait: Int64) -> any Error {
    if let lastRefusal, lastRefusal.wait == wait { return lastRefusal.error }
    let error: any Error = RateLimitedError(wait: .nanoseconds(wait))
    lastRefusal = (wait, error)
    return error
  }

  /// Called with the lock held: whether a run on `runClock` reads the limiter's own time
  /// (not a run clock bound to it).
  private func isOwnTime(on runClock: (any Clock<Duration>)?) -> Bool {
    !readsRunClock || (runClock == nil && binding == nil)
  }

  /// Called with the lock held: the limiter's time in nanoseconds for a run on `runClock`.
  ///
  /// A limiter without a clock carries its time on from one run clock to the next, so that
  /// it never goes back; outside a run it reads the last run clock bound.
  private func now(on runClock: (any Clock<Duration>)?) -> Int64 {
    guard readsRunClock else { return time.now() }
    guard let runClock else {
      guard let binding else { return time.now() }
      return Self.time(of: binding)
    }
    let identity = ClockIdentity(runClock)
    if let binding, binding.identity == identity { return Self.time(of: binding) }
    let start = binding.map(Self.time(of:)) ?? time.now()
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

/// The tokens a ``RateLimiter`` handed out ahead, taken without the limiter: what `run` takes
/// for the first attempt of a policy whose only stage before an attempt is `rate`.
///
/// `@unchecked Sendable`: `count` is an atomic that the limiter keeps alive; whoever holds
/// this keeps the limiter (the process-wide registry's are never freed).
@usableFromInline
package struct RateTokensAtHand: @unchecked Sendable {
  @usableFromInline let count: UnsafeMutablePointer<Atomic<Int>>

  init(count: UnsafeMutablePointer<Atomic<Int>>) {
    self.count = count
  }

  /// Takes one of the tokens handed out; false, with nothing taken, when none is left.
  @inlinable
  package func take() -> Bool {
    var left = count.pointee.load(ordering: .relaxed)
    while left > 0 {
      let (exchanged, original) = count.pointee.compareExchange(
        expected: left, desired: left - 1, ordering: .relaxed)
      if exchanged { return true }
      left = original
    }
    return false
  }
}

/// The time a ``RateLimiter`` keeps its bucket on, in nanoseconds since the limiter was made.
private enum OwnTime: Sendable {
  /// The system's monotonic clock, read precisely (`platformMonotonicNanoseconds()`) for
  /// every decision, and coarsely for a refusal that is clear at once.
  case system(origin: Int64)
  /// Another clock, or the continuous clock where the system has no such pair of clocks.
  case clock(CircuitBreakerClock)

  /// How late the coarse clock may be, at most: four of its ticks (it is updated every
  /// tick, and was seen up to about two ticks late in a virtual machine).
  static let coarseLag: Int64 = (platformCoarseMonotonicResolution() ?? 10_000_000)
    .multipliedClamped(by: 4)

  /// The system's clock from now, where it can be read; else the continuous clock.
  static func system() -> OwnTime {
    guard let origin = platformMonotonicNanoseconds() else {
      return .clock(CircuitBreakerClock(clock: ContinuousClock()))
    }
    return .system(origin: origin)
  }

  /// The time now, read precisely.
  func now() -> Int64 {
    switch self {
    case .system(let origin):
      let elapsed = (platformMonotonicNanoseconds() ?? origin) &- origin
      return elapsed > 0 ? elapsed : 0
    case .clock(let clock):
      return clock.now()
    }
  }

  /// The time now read coarsely, at most ``coarseLag`` early; nil where there is no coarse
  /// clock.
  func coarse() -> Int64? {
    switch self {
    case .system(let origin):
      guard let coarse = platformCoarseMonotonicNanoseconds() else { return nil }
      return coarse &- origin
    case .clock:
      return nil
    }
  }
}
