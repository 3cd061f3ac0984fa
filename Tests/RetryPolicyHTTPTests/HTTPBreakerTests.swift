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
    let environment = RetryEnvironment(clock: clock, breakerGroup: hosts)
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
}
