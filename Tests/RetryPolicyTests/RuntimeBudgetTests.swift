import RetryPolicy
import RetryPolicyTesting
import Synchronization
import Testing

@Suite("Runtime: budget")
struct RuntimeBudgetTests {
  @Test("1,000 failing runs under 'budget 10%' make at most 1,100 attempts plus the floor of 10")
  func thousandRuns() async throws {
    let policy = policy(RetryRule(behavior: .immediate(maxCount: 5)), budget: 0.1)
    var attempts = 0
    for _ in 0..<1000 {
      _ = try? await policy.run {
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
    final class Counter: Sendable {
      let value = Atomic(0)
    }
    let attempts = Counter()
    await withTaskGroup(of: Void.self) { group in
      for _ in 0..<1000 {
        group.addTask {
          _ = try? await policy.run {
            attempts.value.add(1, ordering: .relaxed)
            throw ConnectionLost()
          }
        }
      }
    }
    #expect(attempts.value.load(ordering: .relaxed) <= 1100 + RetryBudget.initialTokens)
    #expect(attempts.value.load(ordering: .relaxed) > 1000)
  }

  @Test("copies of a policy share one budget, and an empty budget throws the error unchanged")
  func copiesShare() async throws {
    let original = policy(RetryRule(behavior: .immediate(maxCount: 20)), budget: 0.1)
    let copy = original
    let first = ScriptedOperation<Void>(alwaysFailingWith: APIError.serverError(code: 503))
    _ = try? await original.run { try await first() }
    #expect(first.attemptCount == 11)  // the floor of 10 retries, then the 0.1 token left over

    let recorder = RetryEventRecorder()
    let second = ScriptedOperation<Void>(alwaysFailingWith: APIError.serverError(code: 503))
    await #expect(throws: APIError.serverError(code: 503)) {
      try await copy.run(in: RetryEnvironment(observer: recorder.observer)) { try await second() }
    }
    #expect(second.attemptCount == 1)
    #expect(recorder.summaries.map(\.outcome) == [.failed(.budgetExhausted)])
  }

  @Test("the bucket starts at the floor, fills by the ratio and stops at the maximum")
  func bucket() {
    let budget = RetryBudget(ratio: 0.5)
    #expect(budget.tokens == 10)
    for _ in 0..<1000 { budget.recordFirstAttempt() }
    #expect(budget.tokens == Double(RetryBudget.maximumTokens))
    for _ in 0..<100 { #expect(budget.withdrawForRetry()) }
    #expect(!budget.withdrawForRetry())
    budget.recordFirstAttempt()
    #expect(!budget.withdrawForRetry())
    budget.recordFirstAttempt()
    #expect(budget.withdrawForRetry())
  }

  @Test("successful runs deposit too, so a budget recovers after an outage")
  func successesRefill() async throws {
    let policy = policy(RetryRule(behavior: .immediate(maxCount: 100)), budget: 0.1)
    _ = try? await policy.run { throw ConnectionLost() }
    for _ in 0..<20 { _ = try await policy.run { 1 } }
    var attempts = 0
    _ = try? await policy.run {
      attempts += 1
      throw ConnectionLost()
    }
    #expect(attempts == 3)  // 0.1 left, + 21 deposits of 0.1: two whole tokens
  }
}
