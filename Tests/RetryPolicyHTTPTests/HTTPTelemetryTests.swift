import Foundation
import HTTPTestServer
import RetryPolicy
import RetryPolicyHTTP
import RetryPolicyTesting
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The resend count on an HTTP run's events, and its metrics.
@Suite("HTTP telemetry: resend counts and metrics")
struct HTTPTelemetryTests {
  @Test("each failed response carries its resend count, the summary the run's, metrics count all")
  func resendCounts() async throws {
    let server = try TestHTTPServer(script: [
      .respond(status: 503), .respond(status: 503), .respond(status: 200, body: "fine"),
    ])
    defer { server.stop() }
    var compiled = try compile(policy: "retry 3 on 5xx backoff 1s")
    compiled.name = "items"
    let policy = compiled
    let clock = ManualClock()
    let log = EventLog()
    let metrics = RetryMetrics()
    let environment = RetryEnvironment(
      clock: clock, observer: { log.record($0) }, metrics: metrics)
    let session = makeSession()
    let url = server.url("/items")
    let ((_, response), _) = try await drivingClock(clock) {
      try await session.data(from: url, policy: policy, in: environment)
    }
    #expect(status(response) == 200)
    let resends = log.all.compactMap { event -> Int? in
      guard case .attemptFailed(_, let error as HTTPStatusError) = event else { return nil }
      return error.resendCount
    }
    #expect(resends == [0, 1])
    #expect(log.summary?.resendCount == 2)
    let values = metrics.snapshot()[policy: "items"]
    #expect(values?.attempts == [.success: 1, .failure: 2, .refused: 0])
    #expect(values?.successfulRuns == 1)
  }

  @Test("a POST whose retries are refused counts under the reason label 'notIdempotent'")
  func notIdempotentLabel() async throws {
    let server = try TestHTTPServer(script: [.respond(status: 503)])
    defer { server.stop() }
    var policy = try compile(policy: "retry 3 on 5xx backoff 1s")
    policy.name = "orders"
    let metrics = RetryMetrics()
    var request = URLRequest(url: server.url("/orders"))
    request.httpMethod = "POST"
    let (_, response) = try await makeSession().data(
      for: request, policy: policy, in: RetryEnvironment(clock: ManualClock(), metrics: metrics))
    #expect(status(response) == 503)
    #expect(server.requests.count == 1)
    let values = try #require(metrics.snapshot()[policy: "orders"])
    #expect(values.failedRuns == [.retriesRefused(.notIdempotent): 1])
    #expect(values.attempts == [.success: 0, .failure: 1, .refused: 0])
    let text = metrics.openMetricsText()
    #expect(
      text.contains(
        "retry_policy_runs_total{policy=\"orders\",outcome=\"failure\",reason=\"notIdempotent\"} 1"
      ))
    #expect(!text.contains("reason=\"retriesRefused\""))
  }
}
