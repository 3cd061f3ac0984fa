import Synchronization

/// Circuit breakers by key, each made on first use: one per downstream host.
///
/// Given to ``RetryEnvironment/breakerGroup``, it lets `RetryPolicyHTTP` keep one breaker per
/// URL host, so that one failing host does not open the circuit for the others.
///
///     let hosts = CircuitBreakerGroup()
///     let environment = RetryEnvironment(breakerGroup: hosts)
///     let (data, _) = try await URLSession.shared.data(from: url, policy: policy, in: environment)
///     print(hosts.breaker(for: "api.example.com").state)
public final class CircuitBreakerGroup: Sendable {
  private let makeBreaker: @Sendable () -> CircuitBreaker
  private let breakers = Mutex<[String: CircuitBreaker]>([:])

  /// Creates an empty group whose breakers use the system's monotonic clock.
  public init() {
    makeBreaker = { CircuitBreaker() }
  }

  /// Creates an empty group whose breakers measure time on `clock`.
  public init<C: Clock<Duration>>(clock: C) {
    makeBreaker = { CircuitBreaker(clock: clock) }
  }

  /// The breaker of `key`, made closed on first use.
  public func breaker(for key: String) -> CircuitBreaker {
    breakers.withLock { breakers in
      if let breaker = breakers[key] { return breaker }
      let breaker = makeBreaker()
      breakers[key] = breaker
      return breaker
    }
  }

  /// The keys that have a breaker, sorted.
  public var keys: [String] {
    breakers.withLock { $0.keys.sorted() }
  }
}
