import RetryPolicy

extension RetryEnvironment {
  /// The key of ``breakerGroup`` among the environment's extension values.
  private enum BreakerGroupKey {}

  /// Breakers by downstream host: `RetryPolicyHTTP` runs each request with the breaker of its
  /// URL's host, which wins over ``RetryEnvironment/breaker``, ``RetryEnvironment/breakers``
  /// and the registry's.
  ///
  ///     let hosts = CircuitBreakerGroup()
  ///     var environment = RetryEnvironment()
  ///     environment.breakerGroup = hosts
  ///     let (data, _) = try await URLSession.shared.data(from: url, policy: policy, in: environment)
  public var breakerGroup: CircuitBreakerGroup? {
    get { self[extension: BreakerGroupKey.self, as: CircuitBreakerGroup.self] }
    set { self[extension: BreakerGroupKey.self, as: CircuitBreakerGroup.self] = newValue }
  }

  /// This environment with `group` as its ``breakerGroup``.
  ///
  ///     let environment = RetryEnvironment(clock: clock).breakers(perHost: hosts)
  public func breakers(perHost group: CircuitBreakerGroup) -> RetryEnvironment {
    var environment = self
    environment.breakerGroup = group
    return environment
  }
}

extension RetrySummary {
  /// For an HTTP request run by `RetryPolicyHTTP`, the status of the last response; nil when
  /// the last attempt got no response, and for runs of other operations.
  public var statusCode: Int? {
    get {
      guard case .integer(let code) = details["http.statusCode"] else { return nil }
      return code
    }
    set { details["http.statusCode"] = newValue.map { .integer($0) } }
  }

  /// For an HTTP request run by `RetryPolicyHTTP`, its method, such as `GET`; nil otherwise.
  public var method: String? {
    get {
      guard case .text(let method) = details["http.method"] else { return nil }
      return method
    }
    set { details["http.method"] = newValue.map { .text($0) } }
  }
}
