import Foundation

/// What the runtime needs to know about one error to match it against the classes of rules,
/// found lazily: only what a class asks for is looked at, once per failed attempt.
///
/// A name matches (contract §3) when the host registered it with a predicate that accepts
/// the error, when it is the error's type name, or when it is the case name of the enum value
/// the error is. The built-in `any` matches every error but cancellation; `timeout` also
/// matches an ``AttemptTimeoutError``. Which of these a class asks is decided once, from its
/// text, by its ``ErrorClassMatcher``.
///
/// Names are read through the standard library's public reflection only (`Mirror`,
/// `String(describing:)` of a type): a type's names once per type, an enum value's case name
/// once per bit pattern of the value (see ``ErrorNameCache``), so that a failed attempt costs
/// a dictionary lookup, not a reflection. Creating one costs two metatype comparisons; a rule
/// without `on` or `except` looks at nothing more.
package struct ErrorClassification {
  /// The error itself, for predicates.
  package let error: any Error
  /// Whether the error is a `CancellationError`, which no rule retries.
  package let isCancellation: Bool
  /// Whether the error is the runtime's `timeout` error.
  package let isAttemptTimeout: Bool
  /// Whether the error is a ``CircuitOpenError`` (class `circuitOpen`), which no rule retries.
  package let isCircuitOpen: Bool
  /// Whether the error is a refusal of the policy's own load shedding (``LimitExceededError``,
  /// ``ThrottledError``, ``RateLimitedError``: classes `limitExceeded`, `throttled`,
  /// `rateLimited`), which no rule retries.
  package let isShed: Bool
  /// Whether the error is a `URLError`, which the built-in URL error names may match.
  private let isURLError: Bool
  /// The error's dynamic type, by which the HTTP classes find how to read its status.
  private let errorType: ObjectIdentifier
  private let predicates: [String: @Sendable (any Error) -> Bool]

  /// Classifies `error` with the host's registered predicates.
  package init(_ error: any Error, predicates: [String: @Sendable (any Error) -> Bool] = [:]) {
    self.error = error
    // Both are structs, so `is` amounts to comparing the dynamic type, without a dynamic cast.
    let errorType = type(of: error)
    self.isCancellation = errorType == CancellationError.self
    self.isAttemptTimeout = errorType == AttemptTimeoutError.self
    self.isCircuitOpen = errorType == CircuitOpenError.self
    self.isShed =
      errorType == LimitExceededError.self || errorType == ThrottledError.self
      || errorType == RateLimitedError.self
    self.isURLError = errorType == URLError.self
    self.errorType = ObjectIdentifier(errorType)
    self.predicates = predicates
  }

  /// The type's name without module or generic arguments, such as `URLError`.
  package var typeName: String {
    ErrorNameCache.shared.typeNames(of: error)[0]
  }

  /// The enum case name, such as `serverError` for `APIError.serverError(code: 503)`; nil
  /// when the error is not an enum, or is a case without payload of an enum that customizes
  /// its description (public reflection does not show that name).
  package var caseName: String? {
    ErrorNameCache.shared.caseName(of: error)
  }

  /// Whether a predicate registered under `name` accepts the error.
  @inline(__always)
  package func isAccepted(byPredicate name: String) -> Bool {
    guard !predicates.isEmpty, let predicate = predicates[name] else { return false }
    return predicate(error)
  }

  /// Whether `name` is the error's enum case name, its type's name or a superclass's name.
  package func hasName(_ name: String) -> Bool {
    ErrorNameCache.shared.caseName(of: error) == name
      || ErrorNameCache.shared.typeNames(of: error).contains(name)
  }

  /// Whether the class `name`, which is no built-in class, contains the error: a registered
  /// predicate accepts it, or `name` is its type, superclass or case name.
  package func isNamed(_ name: String) -> Bool {
    isAccepted(byPredicate: name) || hasName(name)
  }

  /// The status of an ``HTTPStatusProviding`` error, or nil.
  package var statusCode: Int? {
    HTTPErrorClasses.statusCode(of: error, type: errorType)
  }

  /// The code of a `URLError`, or nil.
  package var urlErrorCode: URLError.Code? {
    isURLError ? HTTPErrorClasses.urlErrorCode(of: error) : nil
  }

  /// Whether the error is in the built-in class `transient`.
  package var isTransient: Bool {
    HTTPErrorClasses.isTransient(error, type: errorType, isURLError: isURLError)
  }

  /// Whether the class written `name` contains the error, the text being resolved on this
  /// call (see ``ErrorClassMatcher/matches(_:)``).
  ///
  /// For tests and one-off questions: a run classifies through the matchers its rules built
  /// once (``RetryRule/matcher``), and never calls this.
  package func matches(_ name: String) -> Bool {
    ErrorClassMatcher(name).matches(self)
  }

  /// Whether `rule` takes the error: one of its `on` classes (any error but cancellation when
  /// it has none) and none of its `except` classes.
  package func isHandled(by rule: RetryRule) -> Bool {
    rule.matcher.takes(self)
  }
}
