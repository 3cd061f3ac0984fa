import Foundation
import HTTPTestServer
import RetryPolicy
import RetryPolicyHTTP
import RetryPolicyTesting
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Which rule of a block takes a failed response, and the reason a refused request stops.
@Suite("HTTP: block routing and stop reasons")
struct HTTPRoutingTests {
  @Test(
    "a status a later rule names is that rule's, not a first rule's without 'on'",
    arguments: [
      "retry 2 backoff 100ms", "retry 2 except 404 delay 100ms", "retry 2 on any delay 100ms",
    ])
  func namedStatusWinsOverCatchAll(first: String) async throws {
    let server = try TestHTTPServer(script: [
      .respond(status: 503, headers: ["Retry-After": "2"]),
      .respond(status: 503, headers: ["Retry-After": "2"]),
      .respond(status: 503, headers: ["Retry-After": "2"]),
      .respond(status: 200, body: "fourth"),
    ])
    defer { server.stop() }
    let file = try compile(
      policyFile: """
        policy catchAllFirst {
          \(first)
          retry 4 on 503 backoff 1s max 30s honoring retry-after
        }
        """)
    let policy = try #require(file["catchAllFirst"])
    let clock = ManualClock()
    let session = makeSession()
    let url = server.url()
    let ((data, response), waits) = try await drivingClock(clock) {
      try await session.data(from: url, policy: policy, in: RetryEnvironment(clock: clock))
    }
    #expect(status(response) == 200)
    #expect(String(decoding: data, as: UTF8.self) == "fourth")
    #expect(waits == [.seconds(2), .seconds(2), .seconds(2)])
    #expect(server.requests.count == 4)
  }

  @Test("a POST refused for lack of idempotency stops with 'not idempotent', in events and summary")
  func refusedPostSaysWhy() async throws {
    let server = try TestHTTPServer(script: [.respond(status: 503), .respond(status: 200)])
    defer { server.stop() }
    let policy = try compile(policy: "retry 3 on 5xx delay 1s")
    var request = URLRequest(url: server.url("/orders"))
    request.httpMethod = "POST"
    let recorder = RetryEventRecorder()
    let (_, response) = try await makeSession().upload(
      for: request, from: Data("{}".utf8), policy: policy,
      in: RetryEnvironment(clock: ManualClock(), observer: recorder.observer))
    #expect(status(response) == 503)
    let reasons = recorder.events.compactMap { event -> RetryStopReason? in
      if case .gaveUp(_, let reason, _) = event { reason } else { nil }
    }
    #expect(reasons == [.retriesRefused(.notIdempotent)])
    #expect(recorder.summaries.map(\.outcome) == [.failed(.retriesRefused(.notIdempotent))])
    #expect(RetryStopReason.retriesRefused(.notIdempotent).description == "request not idempotent")
    #expect(RetryStopReason.retriesRefused(.notIdempotent).caseName == "notIdempotent")
    #expect(
      recorder.events.map(\.description).contains(
        "attempt 1 failed; gave up: request not idempotent"))
  }

  @Test("a refused POST whose status no rule names still reports 'error not matched'")
  func refusedPostUnmatchedStatus() async throws {
    let server = try TestHTTPServer(script: [.respond(status: 503)])
    defer { server.stop() }
    let policy = try compile(policy: "retry 3 on 429 delay 1s")
    var request = URLRequest(url: server.url("/orders"))
    request.httpMethod = "POST"
    let recorder = RetryEventRecorder()
    let (_, response) = try await makeSession().upload(
      for: request, from: Data("{}".utf8), policy: policy,
      in: RetryEnvironment(clock: ManualClock(), observer: recorder.observer))
    #expect(status(response) == 503)
    #expect(recorder.summaries.map(\.outcome) == [.succeeded])
  }
}
