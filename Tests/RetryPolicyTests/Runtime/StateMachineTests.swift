import RetryPolicy
import RetryPolicyTesting
import Testing

@Suite("Runtime: state machine")
struct RuntimeStateMachineTests {
  private func decisions(
    _ policy: CompiledPolicy, errors: [any Error], elapsed: [Duration]? = nil
  ) -> [RetryStateMachine.Action] {
    var machine = RetryStateMachine(policy: policy)
    var random = SeededRandomNumberGenerator(seed: 1)
    var actions: [RetryStateMachine.Action] = []
    for (index, error) in errors.enumerated() {
      machine.attemptStarted()
      actions.append(
        machine.attemptFailed(
          ErrorClassification(error), isTaskCancelled: false,
          elapsed: elapsed?[index] ?? .zero, using: &random))
    }
    return actions
  }

  @Test("the worked example decides five retries with growing delays, then gives up")
  func workedExample() {
    let policy = policy(
      RetryRule(
        behavior: .exponential(maxCount: 5, initial: .seconds(1), multiplier: 1.5),
        errorClasses: ["serverError"]))
    let actions = decisions(
      policy, errors: Array(repeating: APIError.serverError(code: 503), count: 6))
    #expect(
      actions
        == [1, 1.5, 2.25, 3.375, 5.0625].map { .retry(rule: 0, delay: .seconds($0)) }
        + [.giveUp(.retriesExhausted)])
  }

  @Test("an error goes to the first matching rule, and each rule counts its own retries")
  func firstMatchingRule() {
    let policy = policy(
      RetryRule(behavior: .immediate(maxCount: 1), errorClasses: ["unauthorized"]),
      RetryRule(behavior: .delayed(maxCount: nil, delay: .seconds(1))))
    let actions = decisions(
      policy,
      errors: [APIError.unauthorized, APIError.notFound, APIError.notFound, APIError.unauthorized])
    #expect(
      actions == [
        .retry(rule: 0, delay: .zero), .retry(rule: 1, delay: .seconds(1)),
        .retry(rule: 1, delay: .seconds(1)), .giveUp(.retriesExhausted),
      ])
  }

  @Test("a delay that ends exactly at the deadline is allowed; one past it is not")
  func deadlineEdge() {
    let policy = policy(
      RetryRule(behavior: .delayed(maxCount: nil, delay: .seconds(1))), within: .seconds(10))
    let actions = decisions(
      policy, errors: [ConnectionLost(), ConnectionLost()],
      elapsed: [.seconds(9), .milliseconds(9001)])
    #expect(actions == [.retry(rule: 0, delay: .seconds(1)), .giveUp(.deadlineExceeded)])
  }

  @Test("cancellation stops the run before any rule is consulted")
  func cancellation() {
    var machine = RetryStateMachine(policy: policy(RetryRule(behavior: .immediate(maxCount: 9))))
    var random = SeededRandomNumberGenerator(seed: 1)
    machine.attemptStarted()
    let action = machine.attemptFailed(
      ErrorClassification(ConnectionLost()), isTaskCancelled: true, elapsed: .zero,
      using: &random)
    #expect(action == .giveUp(.cancelled))
    #expect(machine.retriesByRule == [0])
  }

  @Test("a carried retry-after beyond the saturation point is capped there")
  func hugeRetryAfter() {
    let policy = policy(RetryRule(behavior: .immediate(maxCount: 1), honorsRetryAfter: true))
    let actions = decisions(
      policy, errors: [ThrottledError(retryAfter: .seconds(Int64.max))])
    #expect(actions == [.retry(rule: 0, delay: Duration.saturatedDelay)])
  }
}
