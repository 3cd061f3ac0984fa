import RetryPolicy
import RetryPolicySimulation
import RetryPolicyTesting
import Testing

/// The reasons of `gaveUp` events and the outcomes of summaries, which must agree.
private func reasons(_ recorder: RetryEventRecorder) -> ([RetryStopReason], [RetryOutcome]) {
  let gaveUp = recorder.events.compactMap { event -> RetryStopReason? in
    if case .gaveUp(_, let reason, _) = event { reason } else { nil }
  }
  return (gaveUp, recorder.summaries.map(\.outcome))
}

@Suite("Runtime: reasons that name the cause, elapsed time, event texts")
struct RuntimeReasonTests {
  @Test("a hedged run whose budget is drained stops with 'budget exhausted'")
  func hedgedBudgetExhausted() async throws {
    let policy = try compile(policy: "retry 2 on unavailable hedge 2 after 1s budget 10%")
    let drained = RetryBudget()
    while drained.tokens >= 1 {
      _ = try? await CompiledPolicy(
        rules: [RetryRule(behavior: .immediate(maxCount: 1))], budgetRatio: 0.1
      ).run(in: RetryEnvironment(budget: drained)) { throw RPCError.unavailable }
    }
    #expect(drained.tokens < 1)
    let recorder = RetryEventRecorder()
    await #expect(throws: RPCError.unavailable) {
      try await policy.runHedged(
        in: RetryEnvironment(clock: ManualClock(), observer: recorder.observer, budget: drained)
      ) { _ in throw RPCError.unavailable }
    }
    let (gaveUp, outcomes) = reasons(recorder)
    #expect(gaveUp == [.budgetExhausted])
    #expect(outcomes == [.failed(.budgetExhausted)])
  }

  @Test("a hedged run stopped by its hedge count says so, with retries left")
  func hedgeLimitReached() async throws {
    let policy = try compile(policy: "retry 5 on unavailable hedge 1 after 1s")
    let recorder = RetryEventRecorder()
    await #expect(throws: RPCError.unavailable) {
      try await policy.runHedged(
        in: RetryEnvironment(clock: ManualClock(), observer: recorder.observer)
      ) { _ in throw RPCError.unavailable }
    }
    let (gaveUp, outcomes) = reasons(recorder)
    #expect(gaveUp == [.hedgeLimitReached])
    #expect(outcomes == [.failed(.hedgeLimitReached)])
    #expect(recorder.summaries.map(\.attempts) == [2])
    #expect(RetryStopReason.hedgeLimitReached.description == "hedge limit reached")
  }

  @Test("a hedged run whose rule runs out still says 'retries exhausted'")
  func hedgedRetriesExhausted() async throws {
    let policy = try compile(policy: "retry 1 on unavailable hedge 3 after 1s")
    let recorder = RetryEventRecorder()
    await #expect(throws: RPCError.unavailable) {
      try await policy.runHedged(
        in: RetryEnvironment(clock: ManualClock(), observer: recorder.observer)
      ) { _ in throw RPCError.unavailable }
    }
    #expect(reasons(recorder).0 == [.retriesExhausted])
  }

  @Test("a retrying sequence's elapsed time runs from the first attempt of the first episode")
  func sequenceElapsedSpansEpisodes() async throws {
    let policy = try compile(policy: "retry 2 delay 1s")
    let recorder = RetryEventRecorder()
    let clock = ImmediateClock()
    let subscriptions = Locked(0)
    let sequence = policy.retrying(in: RetryEnvironment(clock: clock, observer: recorder.observer))
    {
      let number = subscriptions.withLock {
        $0 += 1; return $0
      }
      return AsyncThrowingStream<Int, any Error> { continuation in
        continuation.yield(number)
        if number < 3 {
          continuation.finish(throwing: RPCError.unavailable)
        } else {
          continuation.finish()
        }
      }
    }
    var elements: [Int] = []
    for try await element in sequence { elements.append(element) }
    #expect(elements == [1, 2, 3])
    #expect(recorder.summaries.map(\.elapsed) == [.seconds(2)])
    #expect(recorder.summaries.map(\.totalDelay) == [.seconds(2)])
  }

  @Test("events describe rules numbered from 1, as the command line numbers them")
  func eventTextsNumberRulesFromOne() {
    let scheduled = RetryEvent.retryScheduled(attempt: 1, rule: 0, delay: .seconds(1))
    #expect(String(describing: scheduled) == "attempt 1 failed; rule 1 retries after 1s")
    let gaveUp = RetryEvent.gaveUp(
      attempt: 3, reason: .retriesExhausted, error: RPCError.unavailable)
    #expect(String(describing: gaveUp) == "attempt 3 failed; gave up: retries exhausted")
    #expect(String(describing: RetryEvent.attemptStarted(attempt: 2)) == "attempt 2 started")
  }
}
