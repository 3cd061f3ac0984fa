/// What the runtime needs to know about one error to match it against class names: computed
/// once per failed attempt, never cached across errors.
///
/// A name matches (contract §3) when the host registered it with a predicate that accepts
/// the error, when it is the error's type name, or when it is the case name of the enum value
/// the error is. The built-in `any` matches every error but cancellation; `timeout` also
/// matches an ``AttemptTimeoutError``.
package struct ErrorClassification {
  /// The error itself, for predicates.
  package let error: any Error
  /// Whether the error is a `CancellationError`, which no rule retries.
  package let isCancellation: Bool
  /// Whether the error is the runtime's `timeout` error.
  package let isAttemptTimeout: Bool
  /// The type's name without module or generic arguments, such as `URLError`.
  package let typeName: Substring
  /// The enum case name, such as `serverError` for `APIError.serverError(code: 503)`.
  package let caseName: String?
  private let predicates: [String: @Sendable (any Error) -> Bool]

  /// Classifies `error` with the host's registered predicates.
  package init(_ error: any Error, predicates: [String: @Sendable (any Error) -> Bool] = [:]) {
    self.error = error
    self.isCancellation = error is CancellationError
    self.isAttemptTimeout = error is AttemptTimeoutError
    let fullTypeName = String(describing: type(of: error))
    self.typeName = fullTypeName.prefix { $0 != "<" }
    self.caseName = enumCaseName(of: error)
    self.predicates = predicates
  }

  /// Whether the class `name` contains the error.
  package func matches(_ name: String) -> Bool {
    switch name {
    case "any": return !isCancellation
    case "timeout" where isAttemptTimeout: return true
    default: break
    }
    if let predicate = predicates[name], predicate(error) { return true }
    return name == typeName || name == caseName
  }

  /// Whether `rule` takes the error: one of its `on` classes (any error but cancellation when
  /// it has none) and none of its `except` classes.
  package func isHandled(by rule: RetryRule) -> Bool {
    guard !isCancellation else { return false }
    let isIncluded = rule.errorClasses.isEmpty || rule.errorClasses.contains(where: matches)
    return isIncluded && !rule.excludedClasses.contains(where: matches)
  }
}

/// The case name of an enum value, or nil when `value` is not an enum.
///
/// This asks the runtime's reflection for the name directly (the entry point `print` uses for
/// enums), so it needs no `Mirror`, allocates only the returned string, and works for cases
/// with and without payloads and for enums that customize their description.
private func enumCaseName<Value: Error>(of value: Value) -> String? {
  guard let name = _swiftEnumCaseName(value) else { return nil }
  return String(cString: name)
}

@_silgen_name("swift_EnumCaseName")
private func _swiftEnumCaseName<Value>(_ value: Value) -> UnsafePointer<CChar>?
