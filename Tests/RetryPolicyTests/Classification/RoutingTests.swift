import RetryPolicy
import RetryPolicyTesting
import Testing

/// An error carrying an HTTP status, as another client's error type would.
private struct StatusError: HTTPStatusProviding, Equatable {
  var statusCode: Int
}

/// The rule (counted from 0) that takes each failure, in order, until a run gives up.
private func takingRules(_ policy: CompiledPolicy, errors: [any Error]) -> [Int?] {
  var machine = RetryStateMachine(policy: policy)
  var random = SeededRandomNumberGenerator(seed: 1)
  return errors.map { error in
    machine.attemptStarted()
    let action = machine.attemptFailed(
      ErrorClassification(error), isTaskCancelled: false, elapsed: .zero, using: &random)
    if case .retry(let rule, _) = action { return rule }
    return nil
  }
}

private func rule(_ on: [String] = [], except: [String] = [], count: Int = 2) -> RetryRule {
  RetryRule(behavior: .immediate(maxCount: count), errorClasses: on, excludedClasses: except)
}

@Suite("Runtime: which rule of a block takes a failure")
struct RuntimeRoutingTests {
  @Test(
    "a rule naming the status takes it, whether it comes before or after a rule without 'on'",
    arguments: [
      ([rule(), rule(["503"])], 1), ([rule(["503"]), rule()], 0),
      ([rule(except: ["404"]), rule(["503"])], 1), ([rule(["any"]), rule(["503"])], 1),
      ([rule(), rule(["5xx"])], 1), ([rule(), rule(["transient"])], 1),
    ])
  func namedStatusWins(rules: [RetryRule], expected: Int) {
    let policy = CompiledPolicy(rules: rules)
    #expect(takingRules(policy, errors: [StatusError(statusCode: 503)]) == [expected])
  }

  @Test(
    "a rule naming a type or case takes it before an earlier rule without 'on'",
    arguments: [
      ([rule(), rule(["serverError"])], 1), ([rule(), rule(["APIError"])], 1),
      ([rule(["serverError"]), rule()], 0),
    ])
  func namedClassWins(rules: [RetryRule], expected: Int) {
    let policy = CompiledPolicy(rules: rules)
    #expect(takingRules(policy, errors: [APIError.serverError(code: 500)]) == [expected])
  }

  @Test("among rules that name the error, the first in the block takes it")
  func firstNamingRuleWins() {
    let policy = CompiledPolicy(rules: [rule(), rule(["5xx"]), rule(["503"])])
    #expect(takingRules(policy, errors: [StatusError(statusCode: 503)]) == [1])
  }

  @Test("an error no rule names goes to the first rule without 'on' that takes it")
  func unnamedErrorGoesToCatchAll() {
    let policy = CompiledPolicy(rules: [
      rule(except: ["ConnectionLost"]), rule(["503"]), rule(),
    ])
    #expect(takingRules(policy, errors: [APIError.notFound, ConnectionLost()]) == [0, 2])
  }

  @Test("a named rule that has no retries left ends the run; the catch-all does not take over")
  func exhaustedNamedRuleStops() {
    let policy = CompiledPolicy(rules: [rule(count: 5), rule(["503"], count: 1)])
    let error = StatusError(statusCode: 503)
    #expect(takingRules(policy, errors: [error, error]) == [1, nil])
  }

  @Test("a run's events name the rule that took each failure")
  func eventsNameTheRule() async throws {
    let file = try compile(
      policyFile: """
        policy catchAllFirst {
          retry 2 backoff 100ms
          retry 4 on serverError backoff 1s
        }
        """)
    let policy = try #require(file["catchAllFirst"])
    let recorder = RetryEventRecorder()
    let clock = ImmediateClock()
    var failures = 3
    let value = try await policy.run(
      in: RetryEnvironment(clock: clock, observer: recorder.observer)
    ) { () async throws -> Int in
      failures -= 1
      if failures >= 0 { throw APIError.serverError(code: 503) }
      return 4
    }
    #expect(value == 4)
    #expect(recorder.scheduledDelays == [.seconds(1), .seconds(2), .seconds(4)])
  }
}
