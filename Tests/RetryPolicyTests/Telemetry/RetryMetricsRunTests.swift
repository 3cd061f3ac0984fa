import Foundation
import RetryPolicy
import RetryPolicyTesting
import Synchronization
import Testing

private enum Failure: Error, Equatable {
  case serverError
  case badRequest
}

/// A policy compiled from `text`, named `name`.
private func named(_ name: String?, _ text: String) throws -> CompiledPolicy {
  var policy = try compile(policy: text)
  policy.name = name
  return policy
}

/// Runs of policies recording into ``RetryMetrics`` on virtual time: every family's values.
@Suite("RetryMetrics in runs")
struct RetryMetricsRunTests {
  @Test("a success records one attempt and one run, with their durations on the run's clock")
  func success() async throws {
    let clock = ImmediateClock()
    let metrics = RetryMetrics()
    let environment = RetryEnvironment(clock: clock, metrics: metrics)
    let policy = try named(nil, "retry 3")
    let value = try await policy.run(in: environment) {
      clock.advance(by: .milliseconds(30))
      return 7
    }
    #expect(value == 7)
    let values = try #require(metrics.snapshot()[policy: "anonymous"])
    #expect(values.attempts == [.success: 1, .failure: 0, .refused: 0])
    #expect(values.successfulRuns == 1)
    #expect(values.failedRuns.isEmpty)
    #expect(values.attemptDurations.count == 1)
    #expect(values.attemptDurations.sum == .milliseconds(30))
    #expect(values.attemptDurations.bucketCounts[5] == 1)
    #expect(values.runDurations.sum == .milliseconds(30))
    #expect(values.inFlightAttempts == 0)
    #expect(values.breakerState == nil)
  }

  @Test("retries record each attempt, and the run's duration includes the waits")
  func retriesExhausted() async throws {
    let clock = ImmediateClock()
    let metrics = RetryMetrics()
    let environment = RetryEnvironment(clock: clock, metrics: metrics)
    let policy = try named("payments", "retry 2 on serverError delay 1s")
    await #expect(throws: Failure.serverError) {
      try await policy.run(in: environment) {
        clock.advance(by: .milliseconds(100))
        throw Failure.serverError
      }
    }
    let values = try #require(metrics.snapshot()[policy: "payments"])
    #expect(values.attempts == [.success: 0, .failure: 3, .refused: 0])
    #expect(values.successfulRuns == 0)
    #expect(values.failedRuns == [.retriesExhausted: 1])
    #expect(values.attemptDurations.sum == .milliseconds(300))
    #expect(values.attemptDurations.bucketCounts[6] == 3)
    #expect(values.runDurations.sum == .milliseconds(2300))
    #expect(values.runDurations.bucketCounts[10] == 1)
    let text = metrics.openMetricsText()
    #expect(
      text.contains(
        "retry_policy_runs_total{policy=\"payments\",outcome=\"failure\",reason=\"retriesExhausted\"} 1\n"
      ))
    #expect(text.contains("retry_policy_run_duration_seconds_sum{policy=\"payments\"} 2.3\n"))
  }

  /// A failed attempt, then an immediate retry that succeeds: how long each takes, and the
  /// buckets (not cumulative) of the failure, the success and the run.
  struct ImmediateRetry: Sendable, CustomTestStringConvertible {
    let failing: Duration
    let succeeding: Duration
    let failureBucket: Int
    let successBucket: Int
    let runBucket: Int

    var testDescription: String { "\(failing) then \(succeeding)" }
  }

  @Test(
    "an immediate retry starts when the failure ended: each attempt and the run are timed",
    arguments: [
      // The success and the run in one bucket, the attempts shorter than the run.
      ImmediateRetry(
        failing: .milliseconds(5), succeeding: .milliseconds(30), failureBucket: 2,
        successBucket: 5, runBucket: 5),
      // The run in a bucket of its own.
      ImmediateRetry(
        failing: .milliseconds(100), succeeding: .milliseconds(100), failureBucket: 6,
        successBucket: 6, runBucket: 7),
      // No time at all.
      ImmediateRetry(
        failing: .zero, succeeding: .zero, failureBucket: 0, successBucket: 0, runBucket: 0),
    ])
  func immediateRetry(_ retry: ImmediateRetry) async throws {
    let clock = ManualClock()
    let metrics = RetryMetrics()
    let environment = RetryEnvironment(clock: clock, metrics: metrics)
    let policy = try named("payments", "retry 2 on serverError")
    var calls = 0
    let value = try await policy.run(in: environment) { () async throws -> Int in
      calls += 1
      if calls == 1 {
        clock.advance(by: retry.failing)
        throw Failure.serverError
      }
      clock.advance(by: retry.succeeding)
      return calls
    }
    #expect(value == 2)
    let values = try #require(metrics.snapshot()[policy: "payments"])
    #expect(values.attempts == [.success: 1, .failure: 1, .refused: 0])
    #expect(values.successfulRuns == 1)
    #expect(values.inFlightAttempts == 0)
    var attemptBuckets = Array(repeating: 0, count: 16)
    attemptBuckets[retry.failureBucket] += 1
    attemptBuckets[retry.successBucket] += 1
    #expect(values.attemptDurations.bucketCounts == attemptBuckets)
    #expect(values.attemptDurations.sum == retry.failing + retry.succeeding)
    var runBuckets = Array(repeating: 0, count: 16)
    runBuckets[retry.runBucket] = 1
    #expect(values.runDurations.bucketCounts == runBuckets)
    #expect(values.runDurations.sum == retry.failing + retry.succeeding)
  }

  @Test("an error no rule matches ends the run with reason errorNotMatched")
  func notMatched() async throws {
    let metrics = RetryMetrics()
    let environment = RetryEnvironment(clock: ImmediateClock(), metrics: metrics)
    let policy = try named("search", "retry 2 on serverError")
    await #expect(throws: Failure.badRequest) {
      try await policy.run(in: environment) { throw Failure.badRequest }
    }
    let values = metrics.snapshot()[policy: "search"]
    #expect(values?.failedRuns == [.errorNotMatched: 1])
    #expect(values?.attempts[.failure] == 1)
  }

  @Test("an empty budget refuses the retry: a refused attempt by 'budget'")
  func budgetRefusal() async throws {
    let metrics = RetryMetrics()
    let budget = RetryBudget()
    while budget.withdrawForRetry() {}
    let environment = RetryEnvironment(clock: ImmediateClock(), budget: budget, metrics: metrics)
    let policy = try named("payments", "retry 3 on serverError budget 10%")
    await #expect(throws: Failure.serverError) {
      try await policy.run(in: environment) { throw Failure.serverError }
    }
    let values = try #require(metrics.snapshot()[policy: "payments"])
    #expect(values.failedRuns == [.budgetExhausted: 1])
    #expect(values.attempts == [.success: 0, .failure: 1, .refused: 1])
    #expect(values.refusals[.budget] == 1)
    #expect(values.refusals[.breaker] == 0)
  }

  @Test("an open breaker refuses attempts, and the state gauge follows the breaker")
  func breakerRefusal() async throws {
    let clock = ManualClock()
    let metrics = RetryMetrics()
    let breaker = CircuitBreaker(clock: clock)
    let environment = RetryEnvironment(clock: clock, breaker: breaker, metrics: metrics)
    let policy = try named("payments", "retry 0 on serverError breaker 50% min 1 for 5s")
    await #expect(throws: Failure.serverError) {
      try await policy.run(in: environment) { throw Failure.serverError }
    }
    #expect(metrics.snapshot()[policy: "payments"]?.breakerState == .open)
    await #expect(throws: CircuitOpenError.self) {
      try await policy.run(in: environment) { 1 }
    }
    let values = try #require(metrics.snapshot()[policy: "payments"])
    #expect(values.attempts == [.success: 0, .failure: 1, .refused: 1])
    #expect(values.refusals[.breaker] == 1)
    #expect(values.failedRuns == [.retriesExhausted: 1, .circuitOpen: 1])
    let text = metrics.openMetricsText()
    #expect(text.contains("retry_policy_breaker_state{policy=\"payments\",state=\"open\"} 1\n"))
    clock.advance(by: .seconds(5))
    #expect(metrics.snapshot()[policy: "payments"]?.breakerState == .halfOpen)
    #expect(
      metrics.openMetricsText().contains(
        "retry_policy_breaker_state{policy=\"payments\",state=\"half_open\"} 1\n"))
  }

  @Test("an attempt under way is in flight; with an observer, RetryContext names it")
  func inFlightAndContext() async throws {
    let metrics = RetryMetrics()
    let environment = RetryEnvironment(
      clock: ImmediateClock(), observer: { _ in }, metrics: metrics)
    let policy = try named("search", "retry 2 on serverError")
    #expect(RetryContext.current == nil)
    var seen: [RetryContext?] = []
    var inFlight: [Int?] = []
    let value = try await policy.run(in: environment) { () async throws -> Int in
      seen.append(RetryContext.current)
      inFlight.append(metrics.snapshot()[policy: "search"]?.inFlightAttempts)
      if seen.count < 3 { throw Failure.serverError }
      return 3
    }
    #expect(value == 3)
    #expect(
      seen == [
        RetryContext(policy: "search", attempt: 1), RetryContext(policy: "search", attempt: 2),
        RetryContext(policy: "search", attempt: 3),
      ])
    #expect(inFlight == [1, 1, 1])
    #expect(metrics.snapshot()[policy: "search"]?.inFlightAttempts == 0)
    #expect(RetryContext.current == nil)
  }

  @Test("a hedged run records every attempt it started, and the context of each")
  func hedged() async throws {
    let metrics = RetryMetrics()
    let environment = RetryEnvironment(observer: { _ in }, metrics: metrics)
    let policy = try named("quotes", "retry 2 on serverError hedge 1 after 10ms")
    let attempt = try await policy.runHedged(in: environment) { attempt in
      guard RetryContext.current?.attempt == attempt.number,
        RetryContext.current?.policy == "quotes"
      else { return -1 }
      if attempt.number == 1 { throw Failure.serverError }
      return attempt.number
    }
    #expect(attempt == 2)
    let values = try #require(metrics.snapshot()[policy: "quotes"])
    #expect(values.attempts == [.success: 1, .failure: 1, .refused: 0])
    #expect(values.successfulRuns == 1)
    #expect(values.inFlightAttempts == 0)
  }

  @Test("a PolicyStore's runs record into its metrics by the policy's name")
  func store() async throws {
    let path = FileManager.default.temporaryDirectory
      .appendingPathComponent("metrics-\(UInt64.random(in: 0...UInt64.max)).retry").path
    try "policy payments = retry 1 on serverError\n".write(
      toFile: path, atomically: true, encoding: .utf8)
    defer { try? FileManager.default.removeItem(atPath: path) }
    let metrics = RetryMetrics()
    let store = try PolicyStore(path: path, metrics: metrics)
    var calls = 0
    let value = try await store.run("payments", in: RetryEnvironment(clock: ImmediateClock())) {
      calls += 1
      if calls == 1 { throw Failure.serverError }
      return calls
    }
    #expect(value == 2)
    let values = metrics.snapshot()[policy: "payments"]
    #expect(values?.attempts == [.success: 1, .failure: 1, .refused: 0])
    #expect(values?.successfulRuns == 1)
  }

  @Test("RetryContext is set around every attempt of every run, and nil outside one")
  func contextInEveryRun() async throws {
    #expect(RetryContext.current == nil)
    let policy = try named("search", "retry 1 on serverError")
    let search = RetryContext(policy: "search", attempt: 1)
    #expect(try await policy.run { RetryContext.current } == search)
    #expect(try await policy.run(in: RetryEnvironment()) { RetryContext.current } == search)
    let observed = RetryEnvironment(observer: { _ in })
    #expect(try await policy.run(in: observed) { RetryContext.current } == search)
    let anonymous = try compile(policy: "retry 1")
    let recorded = RetryEnvironment(metrics: RetryMetrics())
    #expect(
      try await anonymous.run(in: recorded) { RetryContext.current }
        == RetryContext(policy: "anonymous", attempt: 1))
    let guarded = try named("guarded", "retry 1 breaker 50%")
    let inBreaker = try await guarded.run(in: RetryEnvironment(breaker: CircuitBreaker())) {
      RetryContext.current
    }
    #expect(inBreaker == RetryContext(policy: "guarded", attempt: 1))
    let timed = try named("timed", "retry 1 timeout 1s")
    #expect(
      try await timed.run { RetryContext.current } == RetryContext(policy: "timed", attempt: 1))
    let counter = Mutex(0)
    let second = try await policy.run(in: RetryEnvironment(clock: ImmediateClock())) {
      () async throws -> RetryContext? in
      let attempt = counter.withLock { count in
        count += 1
        return count
      }
      if attempt == 1 { throw Failure.serverError }
      return RetryContext.current
    }
    #expect(second == RetryContext(policy: "search", attempt: 2))
    #expect(RetryContext.current == nil)
  }
}
