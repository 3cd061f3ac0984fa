import Foundation

/// What the runtime needs to know about one error to match it against class names, found
/// lazily: only what a name asks for is looked at, once per failed attempt.
///
/// A name matches (contract §3) when the host registered it with a predicate that accepts
/// the error, when it is the error's type name, or when it is the case name of the enum value
/// the error is. The built-in `any` matches every error but cancellation; `timeout` also
/// matches an ``AttemptTimeoutError``.
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

  /// Whether the class `name` contains the error.
  ///
  /// Any of these makes it so, none hides another (contract §3): the built-in `any` (every
  /// error but cancellation) or `timeout` (an ``AttemptTimeoutError``); a registered predicate
  /// of that name that accepts the error; the name of the error's type or of one of its
  /// superclasses; its enum case name. The HTTP classes (contract §8) are built in too: a
  /// status form (`503`, `5xx`) matches an ``HTTPStatusProviding`` error of such a status,
  /// `transient` and the URL error names (`timedOut`) match as the grammar reference lists.
  package func matches(_ name: String) -> Bool {
    // A status form is told by its first byte, which spares it the comparisons with words.
    let statusForm = HTTPErrorClasses.statusForm(name)
    if case .none = statusForm {
      switch name {
      case "any": return !isCancellation
      case "timeout" where isAttemptTimeout: return true
      case "circuitOpen" where isCircuitOpen: return true
      default: break
      }
    }
    if !predicates.isEmpty, let predicate = predicates[name], predicate(error) { return true }
    if let form = statusForm {
      guard let range = form, let status = HTTPErrorClasses.statusCode(of: error, type: errorType)
      else { return false }
      return range.contains(status)
    }
    if name == "transient",
      HTTPErrorClasses.isTransient(error, type: errorType, isURLError: isURLError)
    {
      return true
    }
    if isURLError, HTTPErrorClasses.matches(name, error, type: errorType) == true { return true }
    return ErrorNameCache.shared.caseName(of: error) == name
      || ErrorNameCache.shared.typeNames(of: error).contains(name)
  }

  /// Whether `rule` takes the error: one of its `on` classes (any error but cancellation when
  /// it has none) and none of its `except` classes.
  package func isHandled(by rule: RetryRule) -> Bool {
    isHandled(on: rule.errorClasses, except: rule.excludedClasses)
  }

  /// Whether a rule with these `on` and `except` classes takes the error.
  func isHandled(on included: [String], except excluded: [String]) -> Bool {
    guard !isCancellation, !isCircuitOpen else { return false }
    let isIncluded = included.isEmpty || included.contains(where: matches)
    return isIncluded && (excluded.isEmpty || !excluded.contains(where: matches))
  }
}
