import RetryPolicy

/// Calls under policies, on the real clock, for as long as the task runs: a payment service
/// that fails one call in five, a search service that is down for a while (its circuit
/// opens), and quick one-line calls.
enum Workload {
  static func run(into metrics: RetryMetrics) async throws {
    let environment = RetryEnvironment(metrics: metrics)
    let file = """
      policy payments = retry 3 on serverError backoff 10ms x2 jitter 20% budget 20%
      policy search = retry 1 on serverError delay 5ms breaker 50% over 10s min 5 for 2s
      """
    let policies = try compile(policyFile: file)
    let payments = policies.policies[0]
    let search = policies.policies[1]
    let ping = try compile(policy: "retry 2 immediately")
    var random = SystemRandomNumberGenerator()
    var round = 0
    while !Task.isCancelled {
      round += 1
      let searchIsDown = round % 200 < 60
      async let paid: Void? = try? payments.run(in: environment) {
        try await Task.sleep(for: .milliseconds(Int.random(in: 1...20, using: &random)))
        if Int.random(in: 0..<5) == 0 { throw ServiceError.serverError }
      }
      async let found: Void? = try? search.run(in: environment) {
        try await Task.sleep(for: .milliseconds(3))
        if searchIsDown { throw ServiceError.serverError }
      }
      _ = try? await ping.run(in: environment) {}
      _ = await (paid, found)
      try await Task.sleep(for: .milliseconds(10))
    }
  }
}
