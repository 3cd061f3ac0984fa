import Foundation
import RetryPolicy

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

extension URLSession {
  /// Loads a request under a policy, retrying failed attempts as the policy says.
  ///
  /// A response counts as a failed attempt when its status is one the policy names in an
  /// `on` list (`503`, `5xx`, `transient`); every other response ends the run. When the run
  /// stops on such a response (its retries spent, `within` about to pass), that response and
  /// its data are returned, as URLSession would have returned them; a thrown error (a
  /// `URLError` such as `timedOut`) is the last error, unchanged. Under
  /// `honoring retry-after`, a response's `Retry-After` (seconds or an HTTP-date) replaces
  /// the computed delay, still capped by `max`.
  ///
  /// Only requests that may be sent twice are retried: the idempotent methods GET, HEAD,
  /// OPTIONS, TRACE, PUT and DELETE, or any method when the request has an
  /// `Idempotency-Key` header or `assumingIdempotent` is true. A request whose body is a
  /// stream (`httpBodyStream`) is never retried. Others get one attempt (under the policy's
  /// `timeout`, the host's breaker and the budget, whose failure the breaker counts); when it
  /// fails in a way a rule would have retried, the run stops with the reason
  /// `RetryStopReason.retriesRefused(_:)` carrying
  /// ``RetryRefusal/notIdempotent`` (`request not idempotent`).
  ///
  /// A connection that closes before the response is complete fails as
  /// `networkConnectionLost` on every platform (FoundationNetworking's other codes for it
  /// are mapped to that one, keeping the original as the underlying error).
  ///
  ///     let policy = try compile(policy: "retry 4 on 5xx, 429, transient backoff 500ms honoring retry-after")
  ///     let (data, response) = try await URLSession.shared.data(for: request, policy: policy)
  ///
  /// - Parameters:
  ///   - request: The request; sent unchanged on every attempt.
  ///   - policy: The compiled policy.
  ///   - environment: The clock, random source, classes, hooks and observer, as for `run`;
  ///     events and the summary carry the status and the method.
  ///   - assumingIdempotent: Whether to retry a method that is not idempotent without an
  ///     `Idempotency-Key` header.
  /// - Returns: The data and response of the last attempt.
  public func data(
    for request: URLRequest, policy: CompiledPolicy, in environment: RetryEnvironment = .init(),
    assumingIdempotent: Bool = false
  ) async throws -> (Data, URLResponse) {
    try await perform(
      request, policy: policy, in: environment, assumingIdempotent: assumingIdempotent
    ) {
      try await self.data(for: request)
    }
  }

  /// Loads a URL with GET under a policy; everything ``data(for:policy:in:assumingIdempotent:)``
  /// says holds.
  ///
  ///     let (data, _) = try await URLSession.shared.data(from: url, policy: policy)
  public func data(
    from url: URL, policy: CompiledPolicy, in environment: RetryEnvironment = .init()
  ) async throws -> (Data, URLResponse) {
    try await data(for: URLRequest(url: url), policy: policy, in: environment)
  }

  /// Uploads `bodyData` with a request under a policy, sending the same body on every
  /// attempt; everything ``data(for:policy:in:assumingIdempotent:)`` says holds.
  ///
  ///     var request = URLRequest(url: url)
  ///     request.httpMethod = "POST"
  ///     request.setValue(UUID().uuidString, forHTTPHeaderField: "Idempotency-Key")
  ///     let (data, _) = try await URLSession.shared.upload(for: request, from: body, policy: policy)
  public func upload(
    for request: URLRequest, from bodyData: Data, policy: CompiledPolicy,
    in environment: RetryEnvironment = .init(), assumingIdempotent: Bool = false
  ) async throws -> (Data, URLResponse) {
    try await perform(
      request, policy: policy, in: environment, assumingIdempotent: assumingIdempotent
    ) {
      try await self.upload(for: request, from: bodyData)
    }
  }

  private func perform(
    _ request: URLRequest, policy: CompiledPolicy, in environment: RetryEnvironment,
    assumingIdempotent: Bool, _ send: () async throws -> (Data, URLResponse)
  ) async throws -> (Data, URLResponse) {
    let method = (request.httpMethod ?? "GET").uppercased()
    let failing = HTTPRequestRules.failingStatuses(of: policy)
    let isRefused = !HTTPRequestRules.mayRetry(
      request, method: method, assumingIdempotent: assumingIdempotent)
    var environment = environment
    if policy.breaker != nil, let group = environment.breakerGroup,
      let host = HTTPRequestRules.breakerKey(of: request)
    {
      // One breaker per host: one failing host does not open the circuit for the others.
      environment.breaker = group.breaker(for: host)
      environment.breakers = [:]
    }
    let lastStatus = StatusRecord()
    if let observer = environment.observer {
      environment.observer = { event in
        guard case .finished(var summary) = event else { return observer(event) }
        summary.statusCode = lastStatus.value
        summary.method = method
        summary.resendCount = max(0, summary.attempts - 1)
        observer(.finished(summary))
      }
    }
    func attempt() async throws -> (Data, URLResponse) {
      lastStatus.value = nil
      let data: Data
      let response: URLResponse
      do {
        (data, response) = try await send()
      } catch let error as URLError {
        throw HTTPRequestRules.normalized(error)
      }
      guard let http = response as? HTTPURLResponse else { return (data, response) }
      lastStatus.value = http.statusCode
      if failing.contains(http.statusCode) {
        throw HTTPStatusError(response: http, data: data, method: method)
      }
      return (data, response)
    }
    do {
      // A request that may not be sent twice is one attempt of the same policy, under its
      // breaker and budget: a failure a rule would retry ends it as `notIdempotent`.
      guard isRefused else { return try await policy.run(in: environment, attempt) }
      return try await policy.run(in: environment, refusingRetries: .notIdempotent, attempt)
    } catch let error as HTTPStatusError {
      return (error.data, error.response.response)
    }
  }
}

/// The rules of the integration that are no part of a policy: which statuses fail an
/// attempt, and which requests may be sent again.
package enum HTTPRequestRules {
  /// The methods RFC 9110 §9.2.2 calls idempotent.
  package static let idempotentMethods: Set<String> = [
    "GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE",
  ]

  /// The key of a request's breaker in a ``CircuitBreakerGroup``: its URL's host in lowercase,
  /// with `:port` when the URL names a port (`api.example.com`, `127.0.0.1:8080`).
  package static func breakerKey(of request: URLRequest) -> String? {
    guard let url = request.url, let host = url.host, !host.isEmpty else { return nil }
    guard let port = url.port else { return host.lowercased() }
    return "\(host.lowercased()):\(port)"
  }

  /// Whether a request may be sent more than once.
  package static func mayRetry(_ request: URLRequest, method: String, assumingIdempotent: Bool)
    -> Bool
  {
    if request.httpBodyStream != nil { return false }
    if assumingIdempotent || idempotentMethods.contains(method) { return true }
    return request.value(forHTTPHeaderField: "Idempotency-Key") != nil
  }

  /// The statuses some rule's `on` list names (by code, by class or in `transient`) and that
  /// rule's `except` list does not exclude: the responses that count as failed attempts.
  ///
  /// So a failed response always has a rule that names it, which takes it before any rule
  /// without `on`: such a rule never retries a status it does not name.
  package static func failingStatuses(of policy: CompiledPolicy) -> StatusSet {
    var set = StatusSet()
    for rule in policy.rules where !rule.errorClasses.isEmpty {
      var named = StatusSet()
      for matcher in rule.matcher.included { insert(matcher, into: &named) }
      var excluded = StatusSet()
      for matcher in rule.matcher.excluded { insert(matcher, into: &excluded) }
      set.formUnion(named, subtracting: excluded)
    }
    return set
  }

  /// Adds the statuses of a class resolved by the rule (a code, a class, `transient`) to
  /// `set`.
  private static func insert(_ matcher: ErrorClassMatcher, into set: inout StatusSet) {
    switch matcher.kind {
    case .transient:
      for status in HTTPErrorClasses.transientStatuses { set.insert(status) }
    case .status(let status):
      set.insert(status)
    case .statusClass(let range):
      for status in range { set.insert(status) }
    case .any, .timeout, .invalidStatus, .urlError, .circuitOpen, .limitExceeded, .throttled,
      .rateLimited, .named:
      break
    }
  }

  /// The error as Apple's URLSession reports it.
  ///
  /// FoundationNetworking (libcurl) reports a
  /// connection that closed before the response was complete as `unknown` ("transfer
  /// closed with N bytes remaining") or `badServerResponse` ("Empty reply from server"),
  /// where Apple's reports `networkConnectionLost`; those become `networkConnectionLost`,
  /// the original kept as `NSUnderlyingErrorKey`. Every other error is returned unchanged.
  package static func normalized(_ error: URLError) -> URLError {
    #if canImport(FoundationNetworking)
      let message = error.localizedDescription
      let isDropped =
        (error.code == .unknown && message.hasPrefix("transfer closed"))
        || (error.code == .badServerResponse && message == "Empty reply from server")
      guard isDropped else { return error }
      var userInfo = error.userInfo
      userInfo[NSUnderlyingErrorKey] = error as NSError
      return URLError(.networkConnectionLost, userInfo: userInfo)
    #else
      return error
    #endif
  }
}

/// A set of statuses 100 … 599, as bits.
package struct StatusSet: Sendable {
  private var words = [UInt64](repeating: 0, count: 8)

  /// Adds a status of 0 … 511 + 100.
  mutating func insert(_ status: Int) {
    let index = status - 100
    guard index >= 0, index < 512 else { return }
    words[index / 64] |= 1 << UInt64(index % 64)
  }

  /// Adds the statuses of `other` that `excluded` does not hold.
  mutating func formUnion(_ other: StatusSet, subtracting excluded: StatusSet) {
    for index in words.indices { words[index] |= other.words[index] & ~excluded.words[index] }
  }

  /// Whether the set holds `status`.
  package func contains(_ status: Int) -> Bool {
    let index = status - 100
    guard index >= 0, index < 512 else { return false }
    return words[index / 64] & (1 << UInt64(index % 64)) != 0
  }
}

/// The status of the last response of a run, written by the attempts and read by the
/// observer (both on the run's task, one after the other).
final class StatusRecord: @unchecked Sendable {
  // Sound: guarded by `lock`.
  private let lock = NSLock()
  private var status: Int?

  var value: Int? {
    get { lock.withLock { status } }
    set { lock.withLock { status = newValue } }
  }
}
