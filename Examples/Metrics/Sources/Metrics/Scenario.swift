import RetryPolicy
import RetryPolicyTesting

/// The errors of the simulated services.
enum ServiceError: Error {
  case serverError
  case badRequest
}

/// A fixed scenario on virtual time whose metrics exercise every family: successes,
/// retries, exhausted retries, an error no rule matches, a budget's refusal, a circuit that
/// opens and refuses, and an attempt in flight when the text is taken.
enum Scenario {
  /// The metrics' text in both formats, taken during the last attempt.
  static func run() async -> (openMetrics: String, classic: String) {
    let clock = ImmediateClock()
    let metrics = RetryMetrics()
    let breaker = CircuitBreaker(clock: clock)
    let environment = RetryEnvironment(
      clock: clock, budgets: ["orders": RetryBudget()], breakers: ["search": breaker],
      metrics: metrics)
    // Policies as a policy file would name them.
    let file = """
      policy payments = retry 2 on serverError backoff 100ms
      policy orders = retry 10 on serverError budget 10%
      policy search = retry 1 on serverError breaker 50% min 2 for 5s
      """
    guard let policies = try? compile(policyFile: file) else { return ("", "") }
    func policy(_ name: String) -> CompiledPolicy {
      policies[name] ?? CompiledPolicy(rules: [])
    }

    // payments: a success of 20 ms; then two failures of 50 ms and a success of 50 ms (the
    // waits 100 ms and 200 ms): runs of 20 ms and 450 ms.
    _ = try? await policy("payments").run(in: environment) { clock.advance(by: .milliseconds(20)) }
    var calls = 0
    _ = try? await policy("payments").run(in: environment) {
      calls += 1
      clock.advance(by: .milliseconds(50))
      if calls < 3 { throw ServiceError.serverError }
    }
    // orders: eleven failed attempts spend the budget's ten tokens (retriesExhausted); the
    // next run's retry finds none (budgetExhausted, refused by budget).
    for _ in 0..<2 {
      _ = try? await policy("orders").run(in: environment) {
        clock.advance(by: .milliseconds(5))
        throw ServiceError.serverError
      }
    }

    // search: two failures of 2 s open the circuit (retriesExhausted); the next run is refused
    // (circuitOpen, by breaker).
    _ = try? await policy("search").run(in: environment) {
      clock.advance(by: .seconds(2))
      throw ServiceError.serverError
    }
    _ = try? await policy("search").run(in: environment) {}

    // A one-line policy: an error no rule matches ends the run at once (errorNotMatched).
    let oneLine = (try? compile(policy: "retry 3 on serverError")) ?? CompiledPolicy(rules: [])
    _ = try? await oneLine.run(in: environment) {
      clock.advance(by: .seconds(90))
      throw ServiceError.badRequest
    }

    // A name set through the library, with characters the text escapes; the text is taken
    // during its attempt, which is in flight.
    var reports = (try? compile(policy: "retry 1")) ?? CompiledPolicy(rules: [])
    reports.name = "reports \"daily\"\\eu"
    return
      (try? await reports.run(in: environment) {
        (metrics.openMetricsText(), metrics.prometheusText())
      }) ?? ("", "")
  }
}
