import RetryPolicy
import RetryPolicyTesting
import Synchronization
import Testing

@Suite("Runtime: budget")
struct RuntimeBudgetTests {
  @Test("1,000 failing runs under 'budget 10%' make at most 1,100 attempts plus the floor of 10")
  func thousandRuns() async throws {
    let policy = policy(RetryRule(behavior: .immediate(maxCount: 5)), budget: 0.1)
    let environment = RetryEnvironment(budget: RetryBudget())
    var attempts = 0
    for _ in 0..<1000 {
      _ = try? await policy.run(in: environment) {
        attempts += 1
        throw ConnectionLost()
      }
    }
    #expect(attempts <= 1100 + RetryBudget.initialTokens)
    // Every token is spent: the floor of 10, and 0.1 for each of the 1,000 first attempts.
    #expect(attempts == 1110)
  }

  @Test("1,000 concurrent failing runs stay within the same bound")
  func concurrentRuns() async throws {
    let policy = policy(RetryRule(behavior: .immediate(maxCount: 5)), budget: 0.1)
    let environment = RetryEnvironment(budget: RetryBudget())
    final class Counter: Sendable {
      let value = Atomic(0)
    }
    let attempts = Counter()
    await withTaskGroup(of: Void.self) { group in
      for _ in 0..<1000 {
        group.addTask {
          _ = try? await policy.run(in: environment) {
            attempts.value.add(1, ordering: .relaxed)
            throw ConnectionLost()
          }
        }
      }
    }
    #expect(attempts.value.load(ordering: .relaxed) <= 1100 + RetryBudget.initialTokens)
    #expect(attempts.value.load(ordering: .relaxed) > 1000)
  }

  @Test("runs share the budget the host passes, and an empty budget throws the error unchanged")
  func hostBudgetIsShared() async throws {
    let budget = RetryBudget()
    let first = policy(RetryRule(behavior: .immediate(maxCount: 20)), budget: 0.1)
    let second = policy(RetryRule(behavior: .delayed(maxCount: 20, delay: .zero)), budget: 0.1)
    let failing = ScriptedOperation<Void>(alwaysFailingWith: APIError.serverError(code: 503))
    _ = try? await first.run(in: RetryEnvironment(budget: budget)) { try await failing() }
    #expect(failing.attemptCount == 11)  // the floor of 10 retries, then the 0.1 token left over

    let recorder = RetryEventRecorder()
    let other = ScriptedOperation<Void>(alwaysFailingWith: APIError.serverError(code: 503))
    await #expect(throws: APIError.serverError(code: 503)) {
      try await second.run(in: RetryEnvironment(observer: recorder.observer, budget: budget)) {
        try await other()
      }
    }
    #expect(other.attemptCount == 1)
    #expect(recorder.summaries.map(\.outcome) == [.failed(.budgetExhausted)])
  }

  @Test("a budget bound to a policy's name wins over the environment's budget")
  func budgetsByName() async throws {
    let bound = RetryBudget()
    let general = RetryBudget()
    var named = policy(RetryRule(behavior: .immediate(maxCount: 2)), budget: 0.1)
    named.name = "payments"
    let environment = RetryEnvironment(budget: general, budgets: ["payments": bound])
    _ = try? await named.run(in: environment) { throw ConnectionLost() }
    #expect(bound.tokens == 8.1)
    #expect(general.tokens == 10)
    let unbudgeted = policy(RetryRule(behavior: .immediate(maxCount: 2)))
    _ = try? await unbudgeted.run(in: environment) { throw ConnectionLost() }
    #expect(general.tokens == 10)
  }

  @Test("compiling the same text per call shares one default budget instead of resetting it")
  func defaultBudgetPerPolicyValue() async throws {
    // A text no other test compiles, so that its process-wide default budget is its own.
    let text = "retry 50 on corrupted immediately budget 7%"
    var attempts = 0
    for _ in 0..<3 {
      let policy = try compile(policy: text)
      _ = try? await policy.run {
        attempts += 1
        throw StorageError.corrupted(path: "/")
      }
    }
    #expect(try compile(policy: text) == compile(policy: text))
    // 3 first attempts, and the floor of 10 plus 3 × 0.07 tokens: 10 retries in all, not 30.
    #expect(attempts == 3 + 10)
  }

  @Test("a run cancelled during its wait spends no token")
  func cancelledWaitSpendsNothing() async throws {
    let budget = RetryBudget()
    let clock = ManualClock()
    let policy = policy(RetryRule(behavior: .delayed(maxCount: 3, delay: .seconds(60))), budget: 0)
    let environment = RetryEnvironment(clock: clock, budget: budget)
    for _ in 0..<20 {
      let run = Task { try await policy.run(in: environment) { throw ConnectionLost() } }
      await clock.waitForSleepers(count: 1)
      run.cancel()
      await #expect(throws: CancellationError.self) { try await run.value }
    }
    #expect(budget.tokens == 10)
  }

  @Test("the token is withdrawn when the retry's attempt starts, after the wait")
  func tokenAtAttemptStart() async throws {
    let budget = RetryBudget()
    let clock = ManualClock()
    let policy = policy(RetryRule(behavior: .delayed(maxCount: 1, delay: .seconds(1))), budget: 0)
    let operation = ScriptedOperation(failures: [ConnectionLost()], thenReturning: 1, clock: clock)
    let run = Task {
      try await policy.run(in: RetryEnvironment(clock: clock, budget: budget)) {
        try await operation()
      }
    }
    await clock.waitForSleepers(count: 1)
    #expect(budget.tokens == 10)
    clock.advance(by: .seconds(1))
    #expect(try await run.value == 1)
    #expect(budget.tokens == 9)
  }

  @Test("the bucket starts at the floor, fills by the ratio and stops at the maximum")
  func bucket() {
    let budget = RetryBudget()
    #expect(budget.tokens == 10)
    for _ in 0..<1000 { budget.recordFirstAttempt(ratio: 0.5) }
    #expect(budget.tokens == Double(RetryBudget.maximumTokens))
    for _ in 0..<100 { #expect(budget.withdrawForRetry()) }
    #expect(!budget.withdrawForRetry())
    budget.recordFirstAttempt(ratio: 0.5)
    #expect(!budget.withdrawForRetry())
    budget.recordFirstAttempt(ratio: .nan)
    budget.recordFirstAttempt(ratio: 0.5)
    #expect(budget.withdrawForRetry())
  }

  @Test("successful runs deposit too, so a budget recovers after an outage")
  func successesRefill() async throws {
    let policy = policy(RetryRule(behavior: .immediate(maxCount: 100)), budget: 0.1)
    let environment = RetryEnvironment(budget: RetryBudget())
    _ = try? await policy.run(in: environment) { throw ConnectionLost() }
    for _ in 0..<20 { _ = try await policy.run(in: environment) { 1 } }
    var attempts = 0
    _ = try? await policy.run(in: environment) {
      attempts += 1
      throw ConnectionLost()
    }
    #expect(attempts == 3)  // 0.1 left, + 21 deposits of 0.1: two whole tokens
  }

  @Test("policies are plain values: equal text, equal policies, equal behavior")
  func honestEquality() throws {
    let first = try compile(policy: "retry 3 backoff 1s budget 10%")
    var second = try compile(policy: "retry 3 backoff 1s budget 10%")
    #expect(first == second)
    second.budgetRatio = 0.2
    #expect(first != second)
    #expect(Set([first, first, second]).count == 2)
  }
}
