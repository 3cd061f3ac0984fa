import RetryPolicy
import RetryPolicyTesting
import Synchronization
import Testing

/// A breaker on a manual clock, driven attempt by attempt through the package API the run uses.
private struct Harness {
  let clock = ManualClock()
  let breaker: CircuitBreaker
  let policy: CircuitBreakerPolicy

  init(_ policy: CircuitBreakerPolicy) {
    self.policy = policy
    self.breaker = CircuitBreaker(clock: clock)
  }

  /// Makes one attempt that succeeds; nil when the breaker refused it.
  @discardableResult
  func succeed() -> CircuitBreakerStateMachine.Transition?? {
    guard case .admitted(let permit, _) = breaker.requestAttempt() else { return nil }
    return .some(breaker.recordSuccess(permit, policy: policy))
  }

  /// Makes one attempt that fails; nil when the breaker refused it.
  @discardableResult
  func fail() -> CircuitBreakerStateMachine.Transition?? {
    guard case .admitted(let permit, _) = breaker.requestAttempt() else { return nil }
    return .some(breaker.recordFailure(permit, policy: policy))
  }

  func fail(_ count: Int) {
    for _ in 0..<count { fail() }
  }

  func succeed(_ count: Int) {
    for _ in 0..<count { succeed() }
  }

  var isRefused: Bool {
    if case .refused = breaker.requestAttempt() { return true }
    return false
  }
}

@Suite("Runtime: circuit breaker")
struct CircuitBreakerTests {
  @Test("the circuit does not open below 'min' attempts, even when every attempt fails")
  func staysClosedBelowMinimum() {
    let harness = Harness(CircuitBreakerPolicy(failurePercent: 50, minimumAttempts: 20))
    harness.fail(19)
    #expect(harness.breaker.state == .closed)
    #expect(!harness.isRefused)
    #expect(harness.breaker.counts(for: harness.policy) == (attempts: 19, failures: 19))
  }

  @Test("the failure that reaches 'min' at 100% opens the circuit")
  func opensAtMinimum() {
    let harness = Harness(CircuitBreakerPolicy(failurePercent: 50, minimumAttempts: 20))
    harness.fail(19)
    let transition = harness.fail()
    #expect(transition == .some(.opened(CircuitBreakerCause(failures: 20, attempts: 20))))
    #expect(harness.breaker.state == .open)
    #expect(harness.isRefused)
  }

  @Test("it opens at exactly P%, and not one failure below", arguments: [1, 25, 50, 99, 100])
  func opensAtExactlyThePercentage(percent: Int) {
    // 100 attempts: (100 − P) successes, then P failures; the last failure makes exactly P%.
    let harness = Harness(CircuitBreakerPolicy(failurePercent: percent, minimumAttempts: 100))
    harness.succeed(100 - percent)
    harness.fail(percent - 1)
    #expect(harness.breaker.state == .closed)
    #expect(harness.fail() == .some(.opened(CircuitBreakerCause(failures: percent, attempts: 100))))
    #expect(harness.breaker.state == .open)
  }

  @Test("one failure short of P% keeps the circuit closed however many attempts there are")
  func justBelowThePercentage() {
    let harness = Harness(CircuitBreakerPolicy(failurePercent: 50, minimumAttempts: 10))
    // 1,001 successes and 1,000 failures: 49.98%.
    harness.succeed(1001)
    harness.fail(1000)
    #expect(harness.breaker.state == .closed)
    harness.fail()
    #expect(harness.breaker.state == .open)
  }

  @Test("failures older than 'over' are forgotten")
  func oldFailuresAreForgotten() {
    let harness = Harness(
      CircuitBreakerPolicy(failurePercent: 50, window: .seconds(30), minimumAttempts: 10))
    harness.fail(9)
    harness.clock.advance(by: .seconds(30))
    #expect(harness.breaker.counts(for: harness.policy) == (attempts: 0, failures: 0))
    // Nine fresh failures stay below 'min': the nine old ones no longer count.
    harness.fail(9)
    #expect(harness.breaker.state == .closed)
    harness.fail()
    #expect(harness.breaker.state == .open)
  }

  @Test("successes older than 'over' are forgotten too, so recent failures weigh alone")
  func oldSuccessesAreForgotten() {
    let harness = Harness(
      CircuitBreakerPolicy(failurePercent: 50, window: .seconds(10), minimumAttempts: 4))
    harness.succeed(100)
    harness.clock.advance(by: .seconds(10))
    harness.fail(3)
    #expect(harness.breaker.state == .closed)
    harness.fail()
    #expect(harness.breaker.state == .open)
  }

  @Test("attempts stay in the window for at least nine tenths of 'over'")
  func bucketsExpireInTenths() {
    let harness = Harness(
      CircuitBreakerPolicy(failurePercent: 50, window: .seconds(10), minimumAttempts: 1))
    harness.succeed(5)
    harness.clock.advance(by: .milliseconds(9_000))
    #expect(harness.breaker.counts(for: harness.policy) == (attempts: 5, failures: 0))
    harness.clock.advance(by: .milliseconds(999))
    #expect(harness.breaker.counts(for: harness.policy) == (attempts: 5, failures: 0))
    harness.clock.advance(by: .milliseconds(1))
    #expect(harness.breaker.counts(for: harness.policy) == (attempts: 0, failures: 0))
  }

  @Test("an open circuit refuses for 'for', with the time left, then lets one probe through")
  func openThenHalfOpen() {
    let harness = Harness(
      CircuitBreakerPolicy(failurePercent: 100, minimumAttempts: 1, openDuration: .seconds(5)))
    harness.fail()
    harness.clock.advance(by: .seconds(2))
    #expect(harness.breaker.requestAttempt() == .refused(remaining: 3_000_000_000))
    harness.clock.advance(by: .seconds(3))
    #expect(harness.breaker.state == .halfOpen)
    guard case .admitted(let probe, let transition) = harness.breaker.requestAttempt() else {
      Issue.record("the probe was refused")
      return
    }
    #expect(probe.isProbe)
    #expect(transition == .halfOpened)
    #expect(harness.breaker.requestAttempt() == .refused(remaining: 0))
    #expect(harness.breaker.recordSuccess(probe, policy: harness.policy) == .closed)
    #expect(harness.breaker.state == .closed)
    #expect(harness.breaker.counts(for: harness.policy) == (attempts: 0, failures: 0))
  }

  @Test("a failed probe opens the circuit again for 'for'")
  func failedProbeReopens() {
    let harness = Harness(
      CircuitBreakerPolicy(failurePercent: 100, minimumAttempts: 1, openDuration: .seconds(5)))
    harness.fail()
    harness.clock.advance(by: .seconds(5))
    #expect(harness.fail() == .some(.opened(CircuitBreakerCause(failures: 2, attempts: 2))))
    #expect(harness.breaker.requestAttempt() == .refused(remaining: 5_000_000_000))
    harness.clock.advance(by: .seconds(5))
    #expect(harness.succeed() == .some(.closed))
  }

  @Test("a single half-open probe under 100 concurrent callers")
  func singleProbeUnderConcurrency() async {
    let harness = Harness(
      CircuitBreakerPolicy(failurePercent: 100, minimumAttempts: 1, openDuration: .seconds(1)))
    harness.fail()
    harness.clock.advance(by: .seconds(1))
    let breaker = harness.breaker
    let admissions = await withTaskGroup(of: Bool.self) { group in
      for _ in 0..<100 {
        group.addTask {
          if case .admitted = breaker.requestAttempt() { return true }
          return false
        }
      }
      return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
    }
    #expect(admissions == 1)
  }

  @Test("a probe that ends in neither success nor failure lets the next caller probe")
  func abandonedProbe() {
    let harness = Harness(
      CircuitBreakerPolicy(failurePercent: 100, minimumAttempts: 1, openDuration: .seconds(1)))
    harness.fail()
    harness.clock.advance(by: .seconds(1))
    guard case .admitted(let first, _) = harness.breaker.requestAttempt() else {
      Issue.record("the probe was refused")
      return
    }
    harness.breaker.recordNeither(first)
    #expect(harness.breaker.counts(for: harness.policy) == (attempts: 1, failures: 1))
    guard case .admitted(let second, let transition) = harness.breaker.requestAttempt() else {
      Issue.record("the second probe was refused")
      return
    }
    #expect(second.isProbe && second != first)
    #expect(transition == nil)
    // The first probe's late success is not taken for the second's.
    #expect(harness.breaker.recordSuccess(first, policy: harness.policy) == nil)
    #expect(harness.breaker.state == .halfOpen)
  }

  @Test("late results while open only update the counts")
  func lateResultsWhileOpen() {
    let harness = Harness(CircuitBreakerPolicy(failurePercent: 50, minimumAttempts: 2))
    guard case .admitted(let early, _) = harness.breaker.requestAttempt(),
      case .admitted(let late, _) = harness.breaker.requestAttempt()
    else {
      Issue.record("a closed breaker refused")
      return
    }
    harness.fail(2)
    #expect(harness.breaker.state == .open)
    harness.clock.advance(by: .seconds(1))
    #expect(harness.breaker.recordSuccess(early, policy: harness.policy) == nil)
    #expect(harness.breaker.recordFailure(late, policy: harness.policy) == nil)
    #expect(harness.breaker.counts(for: harness.policy) == (attempts: 4, failures: 3))
    #expect(harness.breaker.requestAttempt() == .refused(remaining: 4_000_000_000))
  }

  @Test("isolate() holds the circuit open past 'for', reset() closes it and clears the window")
  func isolateAndReset() {
    let harness = Harness(
      CircuitBreakerPolicy(failurePercent: 50, minimumAttempts: 4, openDuration: .seconds(1)))
    harness.fail(3)
    harness.breaker.isolate()
    #expect(harness.breaker.state == .open)
    #expect(harness.breaker.requestAttempt() == .refused(remaining: nil))
    harness.clock.advance(by: .seconds(3600))
    #expect(harness.breaker.state == .open)
    #expect(harness.isRefused)
    harness.breaker.reset()
    #expect(harness.breaker.state == .closed)
    #expect(harness.breaker.counts(for: harness.policy) == (attempts: 0, failures: 0))
    // The three failures before reset() are gone: three more do not reach 'min'.
    harness.fail(3)
    #expect(harness.breaker.state == .closed)
  }

  @Test("reset() closes a circuit that its failures opened")
  func resetOpenCircuit() {
    let harness = Harness(CircuitBreakerPolicy(failurePercent: 50, minimumAttempts: 1))
    harness.fail()
    #expect(harness.breaker.state == .open)
    harness.breaker.reset()
    #expect(harness.breaker.state == .closed)
    #expect(!harness.isRefused)
  }

  @Test("counts from many tasks at once are all kept")
  func concurrentCounting() async {
    let harness = Harness(CircuitBreakerPolicy(failurePercent: 100, minimumAttempts: 1_000_000))
    let breaker = harness.breaker
    let policy = harness.policy
    await withTaskGroup(of: Void.self) { group in
      for task in 0..<16 {
        group.addTask {
          for _ in 0..<1000 {
            if task % 2 == 0 {
              _ = breaker.recordSuccess(.normal, policy: policy)
            } else {
              _ = breaker.recordFailure(.normal, policy: policy)
            }
          }
        }
      }
    }
    #expect(breaker.counts(for: policy) == (attempts: 16_000, failures: 8_000))
  }

  @Test("the state machine acts only on the current probe and a closed circuit")
  func stateMachineIgnoresStaleResults() {
    var machine = CircuitBreakerStateMachine()
    let policy = CircuitBreakerPolicy(failurePercent: 50, minimumAttempts: 2)
    #expect(machine.attemptRequested(now: 0) == .admitted(.normal, nil))
    #expect(
      machine.attemptFailed(.normal, now: 0, attempts: 1, failures: 1, policy: policy) == .none)
    #expect(
      machine.attemptFailed(.normal, now: 0, attempts: 2, failures: 1, policy: policy)
        == .transition(.opened(CircuitBreakerCause(failures: 1, attempts: 2))))
    let openUntil: Int64 = 5_000_000_000
    #expect(machine.state == .open(until: openUntil))
    #expect(
      machine.attemptFailed(.normal, now: 1, attempts: 3, failures: 2, policy: policy) == .none)
    #expect(machine.attemptSucceeded(.normal) == .none)
    guard case .admitted(let probe, .halfOpened) = machine.attemptRequested(now: openUntil) else {
      Issue.record("no probe after the open time")
      return
    }
    #expect(machine.attemptSucceeded(CircuitBreakerStateMachine.Permit(probe: 99)) == .none)
    #expect(machine.attemptSucceeded(probe) == .transition(.closed))
    #expect(machine.attemptSucceeded(probe) == .none)
  }
  @Test(
    "a success is dated in the bucket a division gives, at every bucket's edge",
    arguments: [
      Duration.nanoseconds(1), .nanoseconds(7), .seconds(1), .milliseconds(29_999),
      .seconds(30), .seconds(86_400),
    ])
  func bucketNumbersMatchDivision(window: Duration) {
    let breaker = CircuitBreaker(clock: ManualClock())
    let policy = CircuitBreakerPolicy(failurePercent: 50, window: window)
    let width = max(
      1,
      Int64(window.components.seconds) * 100_000_000 + window.components.attoseconds
        / 10_000_000_000)
    _ = breaker.bucketNumber(at: 0, for: policy)  // sets the width
    var nows: [Int64] = [0, 1, 2, Int64.max, Int64.max - 1, 1 << 50, (1 << 50) - 1, 1 << 62]
    for bucket in [1, 2, 3, 10, 12_345, 9_876_543_210, 1 << 40] as [Int64] {
      let (edge, overflow) = bucket.multipliedReportingOverflow(by: width)
      guard !overflow, edge < Int64.max - 1 else { continue }
      nows += [edge - 1, edge, edge + 1]
    }
    for now in nows {
      #expect(breaker.bucketNumber(at: now, for: policy) == now / width, "now \(now)")
    }
  }
}
