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

extension RetryRefusal {
  /// A refusal a host of the tests defines, as `RetryPolicyHTTP` defines `notIdempotent`.
  fileprivate static let notReplayable = RetryRefusal(
    name: "notReplayable", description: "stream not replayable")
}

@Suite("Runtime: retries refused by the host, one attempt under the policy")
struct RuntimeRetryRefusalTests {
  @Test("a failure a rule would retry ends the run at once, for the host's refusal")
  func refusedRetryStops() async throws {
    let policy = try compile(policy: "retry 3 on unavailable delay 1s")
    let recorder = RetryEventRecorder()
    let metrics = RetryMetrics()
    let calls = Locked(0)
    // A manual clock nobody advances: a run that waited a delay would never end.
    let environment = RetryEnvironment(
      clock: ManualClock(), observer: recorder.observer, metrics: metrics)
    await #expect(throws: RPCError.unavailable) {
      try await policy.run(in: environment, refusingRetries: .notReplayable) {
        calls.withLock { $0 += 1 }
        throw RPCError.unavailable
      }
    }
    #expect(calls.withLock { $0 } == 1)
    let (gaveUp, outcomes) = reasons(recorder)
    #expect(gaveUp == [.retriesRefused(.notReplayable)])
    #expect(outcomes == [.failed(.retriesRefused(.notReplayable))])
    #expect(recorder.summaries.map(\.totalDelay) == [.zero])
    #expect(
      recorder.events.map(\.description).contains(
        "attempt 1 failed; gave up: stream not replayable"))
    #expect(RetryStopReason.retriesRefused(.notReplayable).caseName == "notReplayable")
    // The refusal names itself in the metrics: its name is the `reason` label.
    let values = try #require(metrics.snapshot()[policy: "anonymous"])
    #expect(values.failedRuns == [.retriesRefused(.notReplayable): 1])
    #expect(
      metrics.openMetricsText().contains(
        "retry_policy_runs_total{policy=\"anonymous\",outcome=\"failure\",reason=\"notReplayable\"} 1"
      ))
  }

  @Test("an error no rule matches and a success end the run as in any run")
  func unmatchedAndSuccess() async throws {
    let policy = try compile(policy: "retry 3 on unavailable delay 1s")
    let recorder = RetryEventRecorder()
    let environment = RetryEnvironment(clock: ManualClock(), observer: recorder.observer)
    await #expect(throws: CancellationError.self) {
      try await policy.run(in: environment, refusingRetries: .notReplayable) {
        throw CancellationError()
      }
    }
    let value = try await policy.run(in: environment, refusingRetries: .notReplayable) { 7 }
    #expect(value == 7)
    #expect(reasons(recorder).1 == [.failed(.cancelled), .succeeded])
  }

  @Test("the one attempt is under the breaker: its failures open the circuit, which refuses it")
  func breakerCountsRefusedRuns() async throws {
    let policy = try compile(policy: "retry 3 on unavailable delay 1s breaker 50% min 2 for 5s")
    let clock = ManualClock()
    let breaker = CircuitBreaker()
    let environment = RetryEnvironment(clock: clock, breaker: breaker)
    let calls = Locked(0)
    for _ in 0..<2 {
      await #expect(throws: RPCError.unavailable) {
        try await policy.run(in: environment, refusingRetries: .notReplayable) {
          calls.withLock { $0 += 1 }
          throw RPCError.unavailable
        }
      }
    }
    #expect(breaker.state == .open)
    await #expect(throws: CircuitOpenError.self) {
      try await policy.run(in: environment, refusingRetries: .notReplayable) {
        calls.withLock { $0 += 1 }
      }
    }
    #expect(calls.withLock { $0 } == 2)
  }

  @Test("the one attempt deposits into the budget, as a first attempt does")
  func budgetDeposit() async throws {
    let policy = try compile(policy: "retry 3 on unavailable budget 10%")
    let budget = RetryBudget()
    _ = try await policy.run(
      in: RetryEnvironment(clock: ManualClock(), budget: budget), refusingRetries: .notReplayable
    ) { 1 }
    #expect(budget.tokens == Double(RetryBudget.initialTokens) + 0.1)
  }
}
