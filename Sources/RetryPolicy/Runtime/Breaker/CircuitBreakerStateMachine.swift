/// The decisions of a circuit breaker, as a pure state machine: given an attempt's request or
/// result and the counts of the window, it says what changes and what the caller does.
///
/// It performs nothing: no clock, no counting, no lock. ``CircuitBreaker`` keeps it behind a
/// lock, counts the window itself (``CircuitBreakerWindow``), passes the time in nanoseconds
/// since the breaker was made, and performs the actions it returns.
///
/// - closed: every attempt is admitted; a failure that brings the window to `min` attempts
///   and `P%` failures opens the circuit for `for`;
/// - open: every attempt is refused until `for` has passed; the next request becomes the
///   single probe and the circuit is half-open;
/// - half-open: while the probe runs, every other attempt is refused; its success closes the
///   circuit and clears the window, its failure opens it again for `for`; a probe that ends
///   in neither (cancelled, or an error no rule matches) lets the next request probe;
/// - isolated (``isolate()``): open until ``reset()``.
///
/// Results of attempts admitted before the circuit opened change nothing here: the window
/// counts them, and only a closed circuit or the probe acts on a result.
@usableFromInline
package struct CircuitBreakerStateMachine: Sendable, Hashable {
  /// The state, with what each needs.
  package enum State: Sendable, Hashable {
    /// Attempts are admitted and counted.
    case closed
    /// Attempts are refused until `until` (nanoseconds since the breaker was made).
    case open(until: Int64)
    /// The probe `probe` runs, or, when nil, the next attempt will probe.
    case halfOpen(probe: UInt64?)
    /// Held open by ``isolate()`` until ``reset()``.
    case isolated
  }

  /// What admits an attempt: a probe carries the number of its half-open period, so that a
  /// late result of an earlier probe is never taken for the current one's.
  @usableFromInline
  package struct Permit: Sendable, Hashable {
    /// The probe's number, or 0 for an attempt of a closed circuit.
    @usableFromInline package var probe: UInt64

    /// The permit of probe number `probe`, or of an attempt of a closed circuit for 0.
    @inlinable
    package init(probe: UInt64) {
      self.probe = probe
    }

    /// An attempt of a closed circuit.
    @inlinable
    package static var normal: Permit { Permit(probe: 0) }

    /// Whether the attempt is the half-open probe.
    package var isProbe: Bool { probe != 0 }
  }

  /// A change of state, which the run reports as an event.
  package enum Transition: Sendable, Hashable {
    /// The circuit opened: by the counts of its window, or because the probe failed.
    case opened(CircuitBreakerCause)
    /// The open time passed: this attempt is the probe.
    case halfOpened
    /// The probe succeeded.
    case closed
  }

  /// What happens to an attempt that asks to start.
  package enum Admission: Sendable, Hashable {
    /// The attempt is made, under `permit`; `transition` when the request changed the state.
    case admitted(Permit, Transition?)
    /// The attempt is refused: the circuit stays open `remaining` longer (zero while a probe
    /// runs; nil when isolated).
    case refused(remaining: Int64?)
  }

  /// What the caller does after a result.
  package enum Action: Sendable, Hashable {
    /// Nothing changed.
    case none
    /// The state changed; on `.closed`, the caller also clears the window.
    case transition(Transition)
  }

  /// The current state.
  package private(set) var state: State = .closed
  /// The counts that last opened the circuit.
  package private(set) var cause: CircuitBreakerCause?
  /// The number of the last probe.
  private var lastProbe: UInt64 = 0

  /// A closed breaker.
  package init() {}

  /// Decides whether an attempt that asks to start at `now` may start.
  package mutating func attemptRequested(now: Int64) -> Admission {
    switch state {
    case .closed:
      return .admitted(.normal, nil)
    case .open(let until) where now < until:
      return .refused(remaining: until - now)
    case .open:
      let permit = makeProbe()
      return .admitted(permit, .halfOpened)
    case .halfOpen(probe: .some):
      return .refused(remaining: 0)
    case .halfOpen(probe: .none):
      return .admitted(makeProbe(), nil)
    case .isolated:
      return .refused(remaining: nil)
    }
  }

  /// Decides what an attempt's success changes: only the current probe's closes the circuit.
  package mutating func attemptSucceeded(_ permit: Permit) -> Action {
    guard isCurrentProbe(permit) else { return .none }
    state = .closed
    return .transition(.closed)
  }

  /// Decides what an attempt's failure at `now` changes, the window (this failure included)
  /// holding `attempts` attempts of which `failures` failed.
  package mutating func attemptFailed(
    _ permit: Permit, now: Int64, attempts: Int, failures: Int, policy: CircuitBreakerPolicy
  ) -> Action {
    let isProbe = isCurrentProbe(permit)
    guard isProbe || (state == .closed && policy.opens(failures: failures, of: attempts)) else {
      return .none
    }
    let cause = CircuitBreakerCause(failures: failures, attempts: attempts)
    self.cause = cause
    let (until, overflow) = now.addingReportingOverflow(
      CircuitBreakerClock.nanoseconds(policy.openDuration))
    state = .open(until: overflow ? .max : until)
    return .transition(.opened(cause))
  }

  /// Releases the probe when its attempt ended in neither success nor failure, so that the
  /// next request probes instead.
  package mutating func attemptAbandoned(_ permit: Permit) {
    guard isCurrentProbe(permit) else { return }
    state = .halfOpen(probe: nil)
  }

  /// Holds the circuit open until ``reset()``.
  package mutating func isolate() {
    state = .isolated
  }

  /// Closes the circuit; the caller clears the window.
  package mutating func reset() {
    state = .closed
  }

  private func isCurrentProbe(_ permit: Permit) -> Bool {
    permit.isProbe && state == .halfOpen(probe: permit.probe)
  }

  private mutating func makeProbe() -> Permit {
    lastProbe = lastProbe == .max ? 1 : lastProbe + 1
    state = .halfOpen(probe: lastProbe)
    return Permit(probe: lastProbe)
  }
}

/// The counts of the window when the circuit opened.
public struct CircuitBreakerCause: Sendable, Hashable {
  /// The failed attempts in the window.
  public var failures: Int
  /// The attempts in the window, failed or not.
  public var attempts: Int

  /// Creates the counts of a window.
  public init(failures: Int, attempts: Int) {
    self.failures = failures
    self.attempts = attempts
  }

  /// The share of failed attempts, such as 0.5; 0 for an empty window.
  public var failureRatio: Double {
    attempts > 0 ? Double(failures) / Double(attempts) : 0
  }
}
