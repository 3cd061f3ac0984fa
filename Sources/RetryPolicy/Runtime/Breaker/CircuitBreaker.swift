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
/// A breaker measures time on its own clock: the system's monotonic clock, read to a few
/// milliseconds, or the clock given to ``init(clock:)`` (a test's manual clock).
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
  private enum Mode {
    static let closed = 0
    /// Open until ``openUntil``.
    static let open = 1
    /// Half-open: every request takes the lock.
    static let guarded = 2
    /// Held open by `isolate()`: every request is refused, without the lock.
    static let isolated = 3
  }

  private let clock: CircuitBreakerClock
  private let window = CircuitBreakerWindow()
  /// The width of a bucket in nanoseconds, set by the first policy that uses the breaker.
  private let bucketWidth = Atomic<Int64>(0)
  /// One of ``Mode``'s values.
  private let mode = Atomic<Int>(Mode.closed)
  /// While the mode is open: the end of the open time, in nanoseconds since the breaker was
  /// made.
  private let openUntil = Atomic<Int64>(0)
  // `Locked` (an `NSLock`), not `Mutex`: ThreadSanitizer sees it (see ProcessWideState.md).
  private let machine = Locked(CircuitBreakerStateMachine())

  /// Creates a closed breaker on the system's monotonic clock.
  public init() {
    clock = CircuitBreakerClock()
  }

  /// Creates a closed breaker that measures its window and its open time on `clock`.
  ///
  ///     let clock = ManualClock()
  ///     let breaker = CircuitBreaker(clock: clock)
  public init(clock: some Clock<Duration>) {
    self.clock = CircuitBreakerClock(clock: clock)
  }

  /// Creates a closed breaker that reads the time from `now`, the time since some start that
  /// never goes back: a simulation's virtual time.
  package init(reading now: @escaping @Sendable () -> Duration) {
    self.clock = CircuitBreakerClock(reading: now)
  }

  /// Whether the circuit lets attempts through now.
  ///
  /// An open circuit whose open time has passed is half-open: the next attempt is the probe.
  public var state: State {
    if mode.load(ordering: .relaxed) == Mode.closed { return .closed }
    let now = clock.now()
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
    window.totals(atBucket: clock.now() / width(for: policy))
  }

  /// Asks whether the first attempt of a run with no observer may start: returns its permit,
  /// or throws the ``CircuitOpenError`` of a refusal.
  @usableFromInline
  package func admitFirstAttempt() throws(CircuitOpenError) -> CircuitBreakerStateMachine.Permit {
    switch requestAttempt() {
    case .admitted(let permit, _): return permit
    case .refused(let remaining):
      throw CircuitOpenError(remaining: remaining.map(CircuitBreakerClock.duration))
    }
  }

  /// Counts the success of a run's first attempt, admitted by ``admitFirstAttempt()``, in a
  /// run with no observer.
  @usableFromInline
  package func recordFirstSuccess(
    _ permit: CircuitBreakerStateMachine.Permit, policy: CircuitBreakerPolicy
  ) {
    _ = recordSuccess(permit, policy: policy)
  }

  /// Asks whether an attempt may start now.
  @inline(__always)
  package func requestAttempt() -> CircuitBreakerStateMachine.Admission {
    if mode.load(ordering: .relaxed) == Mode.closed { return .admitted(.normal, nil) }
    return requestGuardedAttempt()
  }

  @inline(never)
  private func requestGuardedAttempt() -> CircuitBreakerStateMachine.Admission {
    let current = mode.load(ordering: .acquiring)
    if current == Mode.isolated { return .refused(remaining: nil) }
    let now = clock.now()
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
    _ permit: CircuitBreakerStateMachine.Permit, policy: CircuitBreakerPolicy
  ) -> CircuitBreakerStateMachine.Transition? {
    window.record(.success, inBucket: clock.now() / width(for: policy))
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
    _ permit: CircuitBreakerStateMachine.Permit, policy: CircuitBreakerPolicy
  ) -> CircuitBreakerStateMachine.Transition? {
    let now = clock.now()
    let bucket = now / width(for: policy)
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
    return exchanged ? wanted : original
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
    return "circuit open for \(remaining.policyText) more"
  }
}
