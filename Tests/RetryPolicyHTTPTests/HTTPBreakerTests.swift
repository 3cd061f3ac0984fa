import Foundation
import HTTPTestServer
import RetryPolicy
import RetryPolicyHTTP
import RetryPolicyTesting
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

@Suite("HTTP: a circuit breaker per host")
struct HTTPBreakerTests {
  @Test("a failing host opens its own circuit; another host's stays closed")
  func breakersArePerHost() async throws {
    let failing = try TestHTTPServer(script: [.respond(status: 503), .respond(status: 503)])
    defer { failing.stop() }
    let healthy = try TestHTTPServer(script: [
      .respond(status: 200, body: "one"), .respond(status: 200, body: "two"),
    ])
    defer { healthy.stop() }
    var policy = try compile(policy: "retry 0 on 5xx")
    policy.breaker = CircuitBreakerPolicy(failurePercent: 50, minimumAttempts: 2)
    let clock = ManualClock()
    let hosts = CircuitBreakerGroup(clock: clock)
    let environment = RetryEnvironment(clock: clock).breakers(perHost: hosts)
    let session = makeSession()
    for _ in 0..<2 {
      let (_, response) = try await session.data(
        from: failing.url(), policy: policy, in: environment)
      #expect(status(response) == 503)
    }
    await #expect(throws: CircuitOpenError(remaining: .seconds(5))) {
      _ = try await session.data(from: failing.url(), policy: policy, in: environment)
    }
    #expect(failing.requests.count == 2)
    let (data, response) = try await session.data(
      from: healthy.url(), policy: policy, in: environment)
    #expect(status(response) == 200)
    #expect(String(decoding: data, as: UTF8.self) == "one")
    #expect(hosts.breaker(for: "127.0.0.1:\(failing.port)").state == .open)
    #expect(hosts.breaker(for: "127.0.0.1:\(healthy.port)").state == .closed)
    #expect(hosts.keys.count == 2)
  }

  @Test("a POST that may not be repeated is one attempt under the breaker; its failure counts")
  func notIdempotentCounts() async throws {
    let server = try TestHTTPServer(script: Array(repeating: .respond(status: 503), count: 4))
    defer { server.stop() }
    var policy = try compile(policy: "retry 3 on 5xx")
    policy.breaker = CircuitBreakerPolicy(failurePercent: 50, minimumAttempts: 3)
    let clock = ManualClock()
    let hosts = CircuitBreakerGroup(clock: clock)
    let recorder = RetryEventRecorder()
    let environment = RetryEnvironment(clock: clock, observer: recorder.observer)
      .breakers(perHost: hosts)
    let session = makeSession()
    var request = URLRequest(url: server.url())
    request.httpMethod = "POST"
    for _ in 0..<3 {
      let (_, response) = try await session.data(for: request, policy: policy, in: environment)
      #expect(status(response) == 503)
    }
    // Three POSTs, one attempt each, opened the host's circuit: the fourth is refused.
    await #expect(throws: CircuitOpenError.self) {
      _ = try await session.data(for: request, policy: policy, in: environment)
    }
    #expect(server.requests.count == 3)
    #expect(hosts.breaker(for: "127.0.0.1:\(server.port)").state == .open)
    let reasons = recorder.events.compactMap { event -> RetryStopReason? in
      if case .gaveUp(_, let reason, _) = event { return reason }
      return nil
    }
    #expect(
      reasons.prefix(2) == [.retriesRefused(.notIdempotent), .retriesRefused(.notIdempotent)])
    #expect(recorder.summaries.first?.outcome == .failed(.retriesRefused(.notIdempotent)))
    #expect(recorder.summaries.first?.method == "POST")
    #expect(policy.rules.count == 1)
  }

  @Test("a group made without a clock gives breakers that read the environment's manual clock")
  func groupWithoutClockReadsRunClock() async throws {
    let server = try TestHTTPServer(script: [
      .respond(status: 503), .respond(status: 200, body: "back"),
    ])
    defer { server.stop() }
    var policy = try compile(policy: "retry 0 on 5xx")
    policy.breaker = CircuitBreakerPolicy(
      failurePercent: 100, minimumAttempts: 1, openDuration: .seconds(5))
    let clock = ManualClock()
    let hosts = CircuitBreakerGroup()
    let environment = RetryEnvironment(clock: clock).breakers(perHost: hosts)
    let session = makeSession()
    _ = try await session.data(from: server.url(), policy: policy, in: environment)
    await #expect(throws: CircuitOpenError(remaining: .seconds(5))) {
      _ = try await session.data(from: server.url(), policy: policy, in: environment)
    }
    // Five seconds on the test's clock, none on the real one: the next request is the probe.
    clock.advance(by: .seconds(5))
    let (data, response) = try await session.data(
      from: server.url(), policy: policy, in: environment)
    #expect(status(response) == 200)
    #expect(String(decoding: data, as: UTF8.self) == "back")
    #expect(hosts.breaker(for: "127.0.0.1:\(server.port)").state == .closed)
  }

  @Test("a POST that may not be repeated is one attempt under the budget: it deposits")
  func notIdempotentDepositsIntoBudget() async throws {
    let server = try TestHTTPServer(script: [.respond(status: 503), .respond(status: 503)])
    defer { server.stop() }
    let policy = try compile(policy: "retry 3 on 5xx budget 10%")
    let budget = RetryBudget()
    let environment = RetryEnvironment(clock: ManualClock(), budget: budget)
    var request = URLRequest(url: server.url())
    request.httpMethod = "POST"
    for _ in 0..<2 {
      let (_, response) = try await makeSession().data(
        for: request, policy: policy, in: environment)
      #expect(status(response) == 503)
    }
    #expect(server.requests.count == 2)
    // Two first attempts deposited 0.1 each; no retry withdrew a token.
    #expect(abs(budget.tokens - (Double(RetryBudget.initialTokens) + 0.2)) < 1e-9)
  }
}
