import Synchronization

/// The state of one circuit, owned and shared by the host: make one per downstream service.
///
/// A policy with `breaker P% [over D] [min N] [for D]` runs its attempts through a breaker.
/// The circuit opens when, in the last `over` (30 s by default), at least N attempts (20)
/// were made and at least P% of them failed; while it is open, an attempt is not made at all.
/// After `for` (5 s) it lets exactly one attempt through, the probe: its success closes the
/// circuit and clears the window, its failure opens it again for `for`. Every other attempt
/// is refused while the probe runs.
///
///     let payments = CircuitBreaker()
///     let environment = RetryEnvironment(breaker: payments)
///     let receipt = try await policy.run(in: environment) { try await api.charge(order) }
///
/// An attempt fails, for the breaker, when the policy's rules match its error (its `on` and
/// `except` classes, whether or not retries remain; a `timeout` included); a success counts
/// as a success; cancellation and errors no rule matches count as neither. A run whose first
/// attempt is refused throws ``CircuitOpenError``; a run refused later throws its last error.
///
/// The window is kept as ten buckets of a tenth of `over` each, counted without a lock, so an
/// attempt leaves the window between 0.9 × `over` and `over` after it ended. A closed
/// breaker costs an attempt a few atomic operations and no allocation; an open one refuses
/// without a lock until the probe is due. The window's length is set by the first policy
/// that uses the breaker; share a breaker only between policies whose `breaker` clauses
/// agree.
///
/// A breaker made with ``init(clock:)`` measures time on that clock. A breaker made with
/// ``init()`` reads the clock of the environment whose run uses it: the system's monotonic
/// clock (read to a few milliseconds) for the continuous clock, a test's manual clock for a
/// run on it. Runs on another clock carry the breaker's time on from where the last one left
/// it; share a breaker between runs on one clock.
public final class CircuitBreaker: Sendable {
  /// Whether a circuit lets attempts through.
  public enum State: Sendable, Hashable, CustomStringConvertible {
    /// Attempts are made and counted.
    case closed
    /// Attempts are refused: the failures of the window opened the circuit, or ``isolate()``
    /// holds it open.
    case open
    /// The open time is over: one attempt, the probe, goes through and decides.
    case halfOpen

    /// `closed`, `open` or `half-open`.
    public var description: String {
      switch self {
      case .closed: "closed"
      case .open: "open"
      case .halfOpen: "half-open"
      }
    }
  }

  /// The fast paths' view of the state, kept beside the state machine.
  @usableFromInline
  enum Mode {
    @inlinable static var closed: Int { 0 }
    /// Open until ``openUntil``.
    static let open = 1
    /// Half-open: every request takes the lock.
    static let guarded = 2
    /// Held open by `isolate()`: every request is refused, without the lock.
    static let isolated = 3
  }

  private let clock: CircuitBreakerClock
  /// Whether the breaker was made without a clock, and so reads its runs' clock.
  private let readsRunClock: Bool
  /// For a breaker without a clock: the last clock other than the continuous one that a
  /// run read it on, and its reading mapped onto the breaker's time.
  private let runClock = Locked<RunClockBinding?>(nil)
  private let window = CircuitBreakerWindow()
  /// The width of a bucket in nanoseconds, set by the first policy that uses the breaker.
  private let bucketWidth = Atomic<Int64>(0)
  /// The bits of `1 / width` as a `Double`, set after ``bucketWidth`` (0 until then): dating
  /// an attempt multiplies by it instead of dividing.
  private let inverseWidth = Atomic<UInt64>(0)
  /// One of ``Mode``'s values.
  @usableFromInline let mode = Atomic<Int>(Mode.closed)
  /// While the mode is open: the end of the open time, in nanoseconds since the breaker was
  /// made.
  private let openUntil = Atomic<Int64>(0)
  // `Locked` (an `NSLock`), not `Mutex`: ThreadSanitizer sees it (see ProcessWideState.md).
  private let machine = Locked(CircuitBreakerStateMachine())

  /// Creates a closed breaker on the system's monotonic clock.
  public init() {
    clock = CircuitBreakerClock()
    readsRunClock = true
  }

  /// Creates a closed breaker that measures its window and its open time on `clock`.
  ///
  ///     let clock = ManualClock()
  ///     let breaker = CircuitBreaker(clock: clock)
  public init(clock: some Clock<Duration>) {
    self.clock = CircuitBreakerClock(clock: clock)
    readsRunClock = false
  }

  /// Creates a closed breaker that reads the time from `now`, the time since some start that
  /// never goes back: a simulation's virtual time.
  package init(reading now: @escaping @Sendable () -> Duration) {
    self.clock = CircuitBreakerClock(reading: now)
    readsRunClock = false
  }

  /// The breaker's time now, in nanoseconds, for a run on `runClock` (nil: the continuous
  /// clock, or no run).
  @inline(__always)
  private func now(on runClock: (any Clock<Duration>)?) -> Int64 {
    guard readsRunClock, let runClock else { return clock.now() }
    return now(reading: runClock)
  }

  /// The time on a run's clock other than the continuous one, carried on from the breaker's
  /// time when the run's clock is not the last one read.
  @inline(never)
  private func now(reading runClock: any Clock<Duration>) -> Int64 {
    let identity = ClockIdentity(runClock)
    return self.runClock.withLock { binding in
      if let bound = binding, bound.identity == identity { return bound.now() }
      let start = binding?.now() ?? clock.now()
      let fresh = RunClockBinding(clock: runClock, identity: identity, start: start)
      binding = fresh
      return fresh.now()
    }
  }

  /// The breaker's time now for a reader outside a run (``state``): the clock of the last
  /// run that read one other than the continuous clock, else its own.
  private func currentNow() -> Int64 {
    guard readsRunClock, let bound = runClock.withLock({ $0 }) else { return clock.now() }
    return bound.now()
  }

  /// Whether the circuit lets attempts through now.
  ///
  /// An open circuit whose open time has passed is half-open: the next attempt is the probe.
  public var state: State {
    if mode.load(ordering: .relaxed) == Mode.closed { return .closed }
    let now = currentNow()
    return machine.withLock { machine in
      switch machine.state {
      case .closed: .closed
      case .open(let until): now < until ? .open : .halfOpen
      case .halfOpen: .halfOpen
      case .isolated: .open
      }
    }
  }

  /// Holds the circuit open, refusing every attempt, until ``reset()``.
  ///
  /// Results of attempts already running are still counted.
  public func isolate() {
    machine.withLock { machine in
      machine.isolate()
      publish(machine.state)
    }
  }

  /// Closes the circuit and forgets every attempt counted so far.
  public func reset() {
    machine.withLock { machine in
      machine.reset()
      window.clear()
      publish(machine.state)
    }
  }

  /// The counts that last opened the circuit, for events; nil when it never opened by them.
  package var cause: CircuitBreakerCause? {
    machine.withLock { $0.cause }
  }

  /// The attempts and failures in the window now, for `policy`'s window.
  package func counts(
    for policy: CircuitBreakerPolicy
  ) -> (attempts: Int, failures: Int) {
    window.totals(atBucket: bucket(at: currentNow(), for: policy))
  }

  /// Whether the circuit is closed now, read without a lock: the first attempt of a run with
  /// no observer then needs no permit, and its success only counts in the window.
  @inlinable
  package var isClosedNow: Bool {
    mode.load(ordering: .relaxed) == Mode.closed
  }

  /// Asks whether the first attempt of a run with no observer may start: returns its permit,
  /// or throws the ``CircuitOpenError`` of a refusal.
  @usableFromInline
  package func admitFirstAttempt(
    on runClock: (any Clock<Duration>)? = nil
  ) throws(CircuitOpenError) -> CircuitBreakerStateMachine.Permit {
    switch requestAttempt(on: runClock) {
    case .admitted(let permit, _): return permit
    case .refused(let remaining):
      throw CircuitOpenError(remaining: remaining.map(CircuitBreakerClock.duration))
    }
  }

  /// Counts the success of a run's first attempt, admitted by ``admitFirstAttempt()``, in a
  /// run with no observer.
  @usableFromInline
  package func recordFirstSuccess(
    _ permit: CircuitBreakerStateMachine.Permit, policy: CircuitBreakerPolicy,
    on runClock: (any Clock<Duration>)? = nil
  ) {
    _ = recordSuccess(permit, policy: policy, on: runClock)
  }

  /// Asks whether an attempt may start now.
  @inline(__always)
  package func requestAttempt(
    on runClock: (any Clock<Duration>)? = nil
  ) -> CircuitBreakerStateMachine.Admission {
    if mode.load(ordering: .relaxed) == Mode.closed { return .admitted(.normal, nil) }
    return requestGuardedAttempt(on: runClock)
  }

  @inline(never)
  private func requestGuardedAttempt(
    on runClock: (any Clock<Duration>)?
  ) -> CircuitBreakerStateMachine.Admission {
    let current = mode.load(ordering: .acquiring)
    if current == Mode.isolated { return .refused(remaining: nil) }
    let now = now(on: runClock)
    if current == Mode.open {
      let until = openUntil.load(ordering: .relaxed)
      if now < until { return .refused(remaining: until - now) }
    }
    return machine.withLock { machine in
      let admission = machine.attemptRequested(now: now)
      if case .admitted(let permit, _) = admission, permit.isProbe { publish(machine.state) }
      return admission
    }
  }

  /// Counts an attempt's success; returns the change of state it made (the probe's closes
  /// the circuit).
  @inline(__always)
  package func recordSuccess(
    _ permit: CircuitBreakerStateMachine.Permit, policy: CircuitBreakerPolicy,
    on runClock: (any Clock<Duration>)? = nil
  ) -> CircuitBreakerStateMachine.Transition? {
    window.record(.success, inBucket: bucket(at: now(on: runClock), for: policy))
    guard permit.isProbe else { return nil }
    return closeAfterProbe(permit)
  }

  @inline(never)
  private func closeAfterProbe(
    _ permit: CircuitBreakerStateMachine.Permit
  ) -> CircuitBreakerStateMachine.Transition? {
    machine.withLock { machine in
      guard case .transition(let transition) = machine.attemptSucceeded(permit) else {
        return nil
      }
      window.clear()
      publish(machine.state)
      return transition
    }
  }

  /// Counts an attempt's failure; returns the change of state it made.
  package func recordFailure(
    _ permit: CircuitBreakerStateMachine.Permit, policy: CircuitBreakerPolicy,
    on runClock: (any Clock<Duration>)? = nil
  ) -> CircuitBreakerStateMachine.Transition? {
    let now = now(on: runClock)
    let bucket = bucket(at: now, for: policy)
    window.record(.failure, inBucket: bucket)
    // Only a closed circuit or the probe acts on a failure: a late one only counts.
    guard permit.isProbe || mode.load(ordering: .relaxed) == Mode.closed else { return nil }
    let (attempts, failures) = window.totals(atBucket: bucket)
    return machine.withLock { machine in
      let action = machine.attemptFailed(
        permit, now: now, attempts: attempts, failures: failures, policy: policy)
      guard case .transition(let transition) = action else { return nil }
      publish(machine.state)
      return transition
    }
  }

  /// Releases the probe of an attempt that ended in neither success nor failure.
  package func recordNeither(_ permit: CircuitBreakerStateMachine.Permit) {
    guard permit.isProbe else { return }
    machine.withLock { machine in
      machine.attemptAbandoned(permit)
      publish(machine.state)
    }
  }

  /// The number of the bucket that `now` falls in, for `policy`'s window: `now / width`,
  /// computed by a multiplication and an exact correction, as a division costs more than
  /// the rest of dating a success.
  @inline(__always)
  private func bucket(at now: Int64, for policy: CircuitBreakerPolicy) -> Int64 {
    let width = width(for: policy)
    let inverse = Double(bitPattern: inverseWidth.load(ordering: .relaxed))
    let estimate = Double(now) * inverse
    // Before the inverse is set, or for a quotient of 2^50 or more: divide.
    guard inverse > 0, estimate < 0x1p50 else { return now / width }
    // Below 2^50 the estimate is at most one off, so one step corrects it.
    // The remainder then lies in -width ..< 2 × width, so wrapping arithmetic gives it exactly.
    let bucket = Int64(estimate)
    let remainder = now &- bucket &* width
    if remainder < 0 { return bucket &- 1 }
    return remainder >= width ? bucket &+ 1 : bucket
  }

  /// ``bucket(at:for:)``, for tests.
  package func bucketNumber(at now: Int64, for policy: CircuitBreakerPolicy) -> Int64 {
    bucket(at: now, for: policy)
  }

  /// The bucket width for `policy`: a tenth of the window of the first policy that used the
  /// breaker, at least a nanosecond.
  @inline(__always)
  private func width(for policy: CircuitBreakerPolicy) -> Int64 {
    let width = bucketWidth.load(ordering: .relaxed)
    if width > 0 { return width }
    return setWidth(for: policy)
  }

  @inline(never)
  private func setWidth(for policy: CircuitBreakerPolicy) -> Int64 {
    let wanted = Swift.max(
      1, CircuitBreakerClock.nanoseconds(policy.window) / Int64(CircuitBreakerWindow.bucketCount))
    let (exchanged, original) = bucketWidth.compareExchange(
      expected: 0, desired: wanted, ordering: .relaxed)
    let width = exchanged ? wanted : original
    inverseWidth.store((1 / Double(width)).bitPattern, ordering: .relaxed)
    return width
  }

  /// Mirrors `state` in the atomics the fast paths read; called with the lock held.
  private func publish(_ state: CircuitBreakerStateMachine.State) {
    switch state {
    case .closed:
      mode.store(Mode.closed, ordering: .releasing)
    case .open(let until):
      openUntil.store(until, ordering: .relaxed)
      mode.store(Mode.open, ordering: .releasing)
    case .halfOpen:
      mode.store(Mode.guarded, ordering: .releasing)
    case .isolated:
      mode.store(Mode.isolated, ordering: .releasing)
    }
  }
}

/// The error of a run whose first attempt a circuit breaker refused.
///
/// The operation was not called. Its error class is `circuitOpen`, and no rule retries it.
///
/// A run refused after its first attempt throws that attempt's last error instead, as a run
/// out of budget does.
public struct CircuitOpenError: Error, Hashable, CustomStringConvertible {
  /// How much longer the circuit stays open: zero while a probe runs, nil when
  /// ``CircuitBreaker/isolate()`` holds it open.
  public var remaining: Duration?

  /// Creates the error of a circuit open for `remaining` more.
  public init(remaining: Duration?) {
    self.remaining = remaining
  }

  /// A phrase such as `circuit open for 3.5s more`.
  public var description: String {
    guard let remaining else { return "circuit held open" }
    guard remaining > .zero else { return "circuit half-open: a probe is running" }
    return "circuit open for \(remaining.messageText) more"
  }
}

/// A run's clock as a breaker without a clock reads it: the clock, its identity, and the
/// breaker's time when the breaker began reading it.
private struct RunClockBinding: Sendable {
  let identity: ClockIdentity
  private let read: @Sendable () -> Duration
  private let start: Int64

  init(clock: any Clock<Duration>, identity: ClockIdentity, start: Int64) {
    self.identity = identity
    self.read = Self.reader(of: clock)
    self.start = start
  }

  private static func reader<C: Clock<Duration>>(of clock: C) -> @Sendable () -> Duration {
    let origin = clock.now
    return { origin.duration(to: clock.now) }
  }

  /// The breaker's time now on this clock, in nanoseconds.
  func now() -> Int64 {
    let (sum, overflow) = start.addingReportingOverflow(CircuitBreakerClock.nanoseconds(read()))
    return overflow ? .max : sum
  }
}

/// Which clock a run uses.
///
/// The object, for a clock that is a class (a test's manual clock), else the clock's type.
/// It keeps the object, so that its identifier is never reused.
package struct ClockIdentity: Hashable, @unchecked Sendable {
  // Sound: `object` is only kept, never used; the clock it holds is `Sendable`.
  private let object: AnyObject?
  private let identifier: ObjectIdentifier

  /// The identity of `clock`.
  package init(_ clock: any Clock<Duration>) {
    if type(of: clock) is AnyObject.Type {
      let object = clock as AnyObject
      self.object = object
      identifier = ObjectIdentifier(object)
    } else {
      object = nil
      identifier = ObjectIdentifier(type(of: clock))
    }
  }

  package static func == (left: ClockIdentity, right: ClockIdentity) -> Bool {
    left.identifier == right.identifier
  }

  package func hash(into hasher: inout Hasher) {
    hasher.combine(identifier)
  }
}
