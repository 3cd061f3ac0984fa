import Foundation
import HTTPTestServer
import RetryPolicy
import RetryPolicyHTTP
import RetryPolicyTesting
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Real requests through URLSession to a real server on 127.0.0.1, the waits on a manual
/// clock.
@Suite("HTTP end to end: URLSession under a policy against a local server")
struct HTTPEndToEndTests {
  @Test("503, 503, 200: three requests, the backoff waited on the clock, and the 200 returned")
  func serverErrorsThenSuccess() async throws {
    let server = try TestHTTPServer(script: [
      .respond(status: 503), .respond(status: 503), .respond(status: 200, body: "fine"),
    ])
    defer { server.stop() }
    let policy = try compile(policy: "retry 3 on 5xx backoff 1s")
    let clock = ManualClock()
    let session = makeSession()
    let url = server.url("/items")
    let ((data, response), waits) = try await drivingClock(clock) {
      try await session.data(from: url, policy: policy, in: RetryEnvironment(clock: clock))
    }
    #expect(status(response) == 200)
    #expect(String(decoding: data, as: UTF8.self) == "fine")
    #expect(waits == [.seconds(1), .seconds(2)])
    #expect(server.requests.map(\.method) == ["GET", "GET", "GET"])
    #expect(server.requests.map(\.path) == ["/items", "/items", "/items"])
  }

  @Test(
    "429 with Retry-After waits what the server asks, in seconds or as an HTTP-date, capped by max",
    arguments: [
      (["Retry-After": "2"], Duration.seconds(2)),
      (
        [
          "Date": "Sun, 06 Nov 1994 08:49:37 GMT",
          "Retry-After": "Sun, 06 Nov 1994 08:49:44 GMT",
        ], .seconds(7)
      ),
      (["Retry-After": "3600"], .seconds(30)),
      (["Retry-After": "soon"], .milliseconds(100)),
    ])
  func retryAfter(headers: [String: String], wait: Duration) async throws {
    let server = try TestHTTPServer(script: [
      .respond(status: 429, headers: headers), .respond(status: 200, body: "ok"),
    ])
    defer { server.stop() }
    let policy = try compile(policy: "retry 3 on 429 backoff 100ms max 30s honoring retry-after")
    let clock = ManualClock()
    let session = makeSession()
    let url = server.url()
    let ((_, response), waits) = try await drivingClock(clock) {
      try await session.data(from: url, policy: policy, in: RetryEnvironment(clock: clock))
    }
    #expect(status(response) == 200)
    #expect(waits == [wait])
    #expect(server.requests.count == 2)
  }

  @Test("Retry-After is ignored without 'honoring retry-after'")
  func retryAfterNeedsTheClause() async throws {
    let server = try TestHTTPServer(script: [
      .respond(status: 429, headers: ["Retry-After": "20"]), .respond(status: 200),
    ])
    defer { server.stop() }
    let policy = try compile(policy: "retry 3 on 429 backoff 1s")
    let clock = ManualClock()
    let session = makeSession()
    let url = server.url()
    let (_, waits) = try await drivingClock(clock) {
      try await session.data(from: url, policy: policy, in: RetryEnvironment(clock: clock))
    }
    #expect(waits == [.seconds(1)])
  }

  @Test("a Retry-After that would end past 'within' stops at once with the last response")
  func retryAfterPastDeadline() async throws {
    let server = try TestHTTPServer(script: [
      .respond(status: 429, headers: ["Retry-After": "60"], body: "slow down"),
      .respond(status: 200),
    ])
    defer { server.stop() }
    let policy = try compile(policy: "retry 5 on 429 backoff 1s honoring retry-after within 10s")
    let clock = ManualClock()
    let session = makeSession()
    let url = server.url()
    let ((data, response), waits) = try await drivingClock(clock) {
      try await session.data(from: url, policy: policy, in: RetryEnvironment(clock: clock))
    }
    #expect(status(response) == 429)
    #expect(String(decoding: data, as: UTF8.self) == "slow down")
    #expect(waits.isEmpty)
    #expect(server.requests.count == 1)
  }

  @Test("5xx runs out: the last 503 is returned with its body, not thrown")
  func retriesRunOut() async throws {
    let server = try TestHTTPServer(script: [
      .respond(status: 503, body: "first"), .respond(status: 502, body: "second"),
      .respond(status: 503, body: "third"),
    ])
    defer { server.stop() }
    let policy = try compile(policy: "retry 2 on 5xx delay 1s")
    let clock = ManualClock()
    let session = makeSession()
    let url = server.url()
    let ((data, response), waits) = try await drivingClock(clock) {
      try await session.data(from: url, policy: policy, in: RetryEnvironment(clock: clock))
    }
    #expect(status(response) == 503)
    #expect(String(decoding: data, as: UTF8.self) == "third")
    #expect(waits == [.seconds(1), .seconds(1)])
    #expect(server.requests.count == 3)
  }

  @Test("a status no rule names is returned at once: 404 under 'on 5xx'")
  func unnamedStatus() async throws {
    let server = try TestHTTPServer(script: [.respond(status: 404, body: "none")])
    defer { server.stop() }
    let policy = try compile(policy: "retry 3 on 5xx, transient delay 1s")
    let session = makeSession()
    let (data, response) = try await session.data(
      from: server.url(), policy: policy, in: RetryEnvironment(clock: ManualClock()))
    #expect(status(response) == 404)
    #expect(String(decoding: data, as: UTF8.self) == "none")
    #expect(server.requests.count == 1)
  }

  @Test("a POST without an Idempotency-Key is sent once, and its 503 returned")
  func postIsNotRetried() async throws {
    let server = try TestHTTPServer(script: [.respond(status: 503), .respond(status: 200)])
    defer { server.stop() }
    let policy = try compile(policy: "retry 3 on 5xx delay 1s")
    var request = URLRequest(url: server.url("/orders"))
    request.httpMethod = "POST"
    let (_, response) = try await makeSession().upload(
      for: request, from: Data("{\"item\":1}".utf8), policy: policy,
      in: RetryEnvironment(clock: ManualClock()))
    #expect(status(response) == 503)
    #expect(server.requests.map(\.method) == ["POST"])
  }

  @Test(
    "a POST with an Idempotency-Key, or opted in at the call site, is retried with the same key and body",
    arguments: [true, false])
  func postWithKeyIsRetried(withKey: Bool) async throws {
    let server = try TestHTTPServer(script: [
      .respond(status: 503), .respond(status: 201, body: "created"),
    ])
    defer { server.stop() }
    let policy = try compile(policy: "retry 3 on 5xx delay 1s")
    var request = URLRequest(url: server.url("/orders"))
    request.httpMethod = "POST"
    if withKey { request.setValue("order-42", forHTTPHeaderField: "Idempotency-Key") }
    let clock = ManualClock()
    let session = makeSession()
    let body = Data("{\"item\":1}".utf8)
    let ((data, response), _) = try await drivingClock(clock) { [request] in
      try await session.upload(
        for: request, from: body, policy: policy, in: RetryEnvironment(clock: clock),
        assumingIdempotent: !withKey)
    }
    #expect(status(response) == 201)
    #expect(String(decoding: data, as: UTF8.self) == "created")
    let requests = server.requests
    #expect(requests.map(\.method) == ["POST", "POST"])
    #expect(requests.map(\.body) == [body, body])
    if withKey {
      #expect(requests.map { $0.headers["idempotency-key"] } == ["order-42", "order-42"])
    }
  }

  @Test(
    "a dropped connection is retried as networkConnectionLost",
    arguments: [TestHTTPServer.Reply.dropBeforeResponse, .dropMidResponse])
  func droppedConnection(drop: TestHTTPServer.Reply) async throws {
    let server = try TestHTTPServer(script: [drop, .respond(status: 200, body: "whole")])
    defer { server.stop() }
    let policy = try compile(policy: "retry 2 on networkConnectionLost delay 1s")
    let clock = ManualClock()
    let log = EventLog()
    let session = makeSession()
    let url = server.url()
    let environment = RetryEnvironment(clock: clock, observer: log.record)
    let ((data, _), waits) = try await drivingClock(clock) {
      try await session.data(from: url, policy: policy, in: environment)
    }
    #expect(String(decoding: data, as: UTF8.self) == "whole")
    #expect(waits == [.seconds(1)])
    let failures = log.all.compactMap { event -> URLError.Code? in
      if case .attemptFailed(_, let error) = event { return (error as? URLError)?.code }
      return nil
    }
    #expect(failures == [.networkConnectionLost])
  }

  @Test("a request whose body is a stream is never retried, even opted in")
  func streamBodyIsNotRetried() async throws {
    let server = try TestHTTPServer(script: [.respond(status: 503), .respond(status: 200)])
    defer { server.stop() }
    let policy = try compile(policy: "retry 3 on 5xx delay 1s")
    var request = URLRequest(url: server.url("/upload"))
    request.httpMethod = "PUT"
    request.httpBodyStream = InputStream(data: Data("streamed".utf8))
    let (_, response) = try await makeSession().data(
      for: request, policy: policy, in: RetryEnvironment(clock: ManualClock()),
      assumingIdempotent: true)
    #expect(status(response) == 503)
    #expect(server.requests.map(\.method) == ["PUT"])
  }

  @Test("events carry the status and the method; the summary the last status and the method")
  func eventsCarryStatusAndMethod() async throws {
    let server = try TestHTTPServer(script: [.respond(status: 503), .respond(status: 503)])
    defer { server.stop() }
    let policy = try compile(policy: "retry 1 on 503 delay 1s")
    let clock = ManualClock()
    let log = EventLog()
    let session = makeSession()
    var request = URLRequest(url: server.url())
    request.httpMethod = "DELETE"
    let environment = RetryEnvironment(clock: clock, observer: log.record)
    _ = try await drivingClock(clock) { [request] in
      try await session.data(for: request, policy: policy, in: environment)
    }
    let failures = log.all.compactMap { event -> String? in
      if case .attemptFailed(_, let error) = event { return "\(error)" }
      return nil
    }
    #expect(failures == ["DELETE 503", "DELETE 503"])
    let summary = try #require(log.summary)
    #expect(summary.statusCode == 503)
    #expect(summary.method == "DELETE")
    #expect(summary.attempts == 2)
    #expect(summary.outcome == .failed(.retriesExhausted))
  }

  @Test("a response slower than 'timeout' is cut off on the clock and retried as 'timeout'")
  func slowResponse() async throws {
    let server = try TestHTTPServer(script: [.hold, .respond(status: 200, body: "quick")])
    defer { server.stop() }
    let policy = try compile(policy: "retry 1 on timeout delay 1s timeout 2s")
    let clock = ManualClock()
    let session = makeSession()
    let url = server.url()
    let run = Task {
      try await session.data(from: url, policy: policy, in: RetryEnvironment(clock: clock))
    }
    // The first attempt's timer; the second attempt's is left alone, so it gets its answer.
    // The cut-off waits for the server to hold the first request: cut off before it is sent,
    // the retry would be the request the server holds.
    await clock.waitForSleepers()
    await server.waitForRequests(1)
    #expect(clock.nextDeadline == ManualClock.Instant(offset: .seconds(2)))
    clock.advance(by: .seconds(2))
    await clock.waitForSleepers()  // the retry's delay, once the cut-off attempt returned
    #expect(clock.nextDeadline == ManualClock.Instant(offset: .seconds(3)))
    clock.advance(by: .seconds(1))
    let (data, _) = try await run.value
    #expect(String(decoding: data, as: UTF8.self) == "quick")
    #expect(server.requests.count == 2)
  }
}
