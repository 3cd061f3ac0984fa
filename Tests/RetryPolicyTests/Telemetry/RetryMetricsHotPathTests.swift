import Foundation
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

  @Test("names of every length that differ in one byte keep their own counters")
  func namesDifferingInOneByte() {
    let metrics = RetryMetrics()
    var names: [String] = []
    for length in 1...20 {
      for position in 0..<length {
        var bytes = Array(repeating: UInt8(ascii: "a"), count: length)
        bytes[position] = UInt8(ascii: "b")
        names.append(String(decoding: bytes, as: UTF8.self))
      }
      names.append(String(repeating: "a", count: length))
    }
    for (index, name) in names.enumerated() {
      for _ in 0...(index % 4) { metrics.counters(named: name).attemptStarted() }
    }
    let inFlight = Dictionary(
      uniqueKeysWithValues: metrics.snapshot().policies.map { ($0.policy, $0.inFlightAttempts) })
    #expect(inFlight.count == names.count)
    for (index, name) in names.enumerated() {
      #expect(inFlight[name] == index % 4 + 1, "\(name)")
    }
  }

  @Test("threads past the owned stripes, and threads that end and hand theirs on, lose no count")
  func stripesOfManyThreads() {
    let metrics = RetryMetrics()
    let counters = metrics.counters(named: "payments")
    let waves = 3
    let threads = MetricsStripe.ownedCount + 5
    let records = 2_000
    for _ in 0..<waves {
      let done = DispatchGroup()
      for _ in 0..<threads {
        done.enter()
        let thread = Thread {
          for _ in 0..<records {
            counters.attemptStarted()
            counters.attemptEnded(succeeded: false, afterNanoseconds: 1_000)
            counters.attemptStarted()
          }
          done.leave()
        }
        thread.start()
      }
      done.wait()
    }
    let values = metrics.snapshot()[policy: "payments"]
    let total = waves * threads * records
    #expect(values?.attempts == [.success: 0, .failure: total, .refused: 0])
    #expect(values?.inFlightAttempts == total)
    #expect(values?.attemptDurations.sum == .microseconds(total))
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
