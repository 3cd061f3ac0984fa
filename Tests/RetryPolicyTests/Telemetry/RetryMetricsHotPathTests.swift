import Testing

@testable import RetryPolicy

/// The hot path of ``RetryMetrics``: the bucket of a duration, the lookup of a name's
/// counters, runs on the continuous clock (timed on ``MetricsTime``).
@Suite("RetryMetrics hot path")
struct RetryMetricsHotPathTests {
  @Test("the bucket of a duration is the first bound it does not exceed, at every bound")
  func bucketIndex() {
    for (index, bound) in DurationBuckets.bounds.enumerated() {
      #expect(DurationBuckets.index(ofNanoseconds: bound) == index)
      #expect(DurationBuckets.index(ofNanoseconds: bound + 1) == index + 1)
      #expect(DurationBuckets.index(ofNanoseconds: bound - 1) == index)
    }
    #expect(DurationBuckets.index(ofNanoseconds: 0) == 0)
    #expect(DurationBuckets.index(ofNanoseconds: .max) == DurationBuckets.bucketCount - 1)
  }

  @Test("names that share a cache entry keep their own counters")
  func namesInOneEntry() {
    let metrics = RetryMetrics()
    let names = (0..<2000).map { "service-\($0)" }
    for (index, name) in names.enumerated() {
      for _ in 0...(index % 3) { metrics.counters(named: name).attemptStarted() }
    }
    for name in names { metrics.counters(named: name).attemptStarted() }
    let snapshot = metrics.snapshot()
    #expect(snapshot.policies.count == names.count)
    let inFlight = Dictionary(
      uniqueKeysWithValues: snapshot.policies.map { ($0.policy, $0.inFlightAttempts) })
    for (index, name) in names.enumerated() {
      #expect(inFlight[name] == index % 3 + 2)
    }
  }

  @Test("a run on the continuous clock records its attempts and its run, a success at once")
  func continuousClock() async throws {
    let metrics = RetryMetrics()
    let environment = RetryEnvironment(metrics: metrics)
    var policy = try compile(policy: "retry 2 on serverError")
    policy.name = "payments"
    for _ in 0..<5 { _ = try await policy.run(in: environment) { 1 } }
    var failures = 1
    _ = try await policy.run(in: environment) { () async throws -> Int in
      if failures > 0 {
        failures -= 1
        throw TestServerError.serverError
      }
      return 2
    }
    let values = try #require(metrics.snapshot()[policy: "payments"])
    #expect(values.attempts == [.success: 6, .failure: 1, .refused: 0])
    #expect(values.successfulRuns == 6)
    #expect(values.attemptDurations.count == 7)
    #expect(values.runDurations.count == 6)
    #expect(values.inFlightAttempts == 0)
    #expect(
      metrics.openMetricsText().contains(
        "retry_policy_run_duration_seconds_count{policy=\"payments\"} 6\n"))
  }
}

private enum TestServerError: Error {
  case serverError
}
