/// A run's side of its circuit breaker: asks it before each attempt, tells it each result,
/// and reports what changed.
///
/// ``RetryRun`` keeps one when the policy has `breaker`. An attempt's result is, for the
/// breaker, a success, a failure (an error one of the policy's rules matches, `timeout`
/// included, whether or not retries remain) or neither (cancellation, an error no rule
/// matches): the run's state machine decides which, from the same classification it retries
/// by.
@usableFromInline
package struct RunCircuit: Sendable {
  /// The breaker, shared with the other runs that call the same service.
  package let breaker: CircuitBreaker
  /// The policy's `breaker` clause.
  package let policy: CircuitBreakerPolicy
  /// The permit of the attempt under way.
  private var permit = CircuitBreakerStateMachine.Permit.normal
  /// Whether an admitted attempt's result is still to be told: each admitted attempt is
  /// told once (success, failure or neither), so that a probe is always released.
  private var isHolding: Bool
  /// Whether the breaker refused an attempt of the run.
  package private(set) var wasRefused = false

  /// A run's side of `breaker` under `policy`.
  package init(
    breaker: CircuitBreaker, policy: CircuitBreakerPolicy,
    permit: CircuitBreakerStateMachine.Permit = .normal
  ) {
    self.breaker = breaker
    self.policy = policy
    self.permit = permit
    self.isHolding = true
  }

  /// Asks the breaker whether attempt `attempt` may start; returns the error of a refusal,
  /// nil when it may start.
  ///
  /// Reports the refusal, or the change to half-open when this attempt is the probe.
  package mutating func admit(
    attempt: Int, in environment: borrowing RetryEnvironment
  ) -> CircuitOpenError? {
    switch breaker.requestAttempt(on: environment.breakerClock) {
    case .admitted(let permit, let transition):
      self.permit = permit
      isHolding = true
      if let transition { report(transition, attempt: attempt, in: environment) }
      return nil
    case .refused(let remaining):
      wasRefused = true
      let left = remaining.map(CircuitBreakerClock.duration)
      environment.report(.attemptRefused(attempt: attempt, remaining: left, cause: breaker.cause))
      return CircuitOpenError(remaining: left)
    }
  }

  /// Tells the breaker attempt `attempt` succeeded.
  package mutating func succeeded(attempt: Int, in environment: borrowing RetryEnvironment) {
    guard isHolding else { return }
    isHolding = false
    if let transition = breaker.recordSuccess(
      permit, policy: policy, on: environment.breakerClock)
    {
      report(transition, attempt: attempt, in: environment)
    }
  }

  /// Tells the breaker attempt `attempt` failed (`counts`) or ended in neither; returns
  /// whether this failure opened the circuit.
  @discardableResult
  package mutating func failed(
    attempt: Int, counts: Bool, in environment: borrowing RetryEnvironment
  ) -> Bool {
    guard isHolding else { return false }
    isHolding = false
    guard counts else {
      breaker.recordNeither(permit)
      return false
    }
    guard
      let transition = breaker.recordFailure(permit, policy: policy, on: environment.breakerClock)
    else { return false }
    report(transition, attempt: attempt, in: environment)
    if case .opened = transition { return true }
    return false
  }

  /// Releases the attempt under way, if its result was not told.
  ///
  /// Its run ended without one (an abandoned or cancelled sequence). A probe's release lets the next attempt probe.
  package mutating func release() {
    guard isHolding else { return }
    isHolding = false
    breaker.recordNeither(permit)
  }

  private func report(
    _ transition: CircuitBreakerStateMachine.Transition, attempt: Int,
    in environment: borrowing RetryEnvironment
  ) {
    switch transition {
    case .opened(let cause): environment.report(.circuitOpened(attempt: attempt, cause: cause))
    case .halfOpened: environment.report(.circuitHalfOpened(attempt: attempt))
    case .closed: environment.report(.circuitClosed(attempt: attempt))
    }
  }
}
