/// What the runtime needs to know about one error to match it against class names, found
/// lazily: only what a name asks for is looked at, once per failed attempt.
///
/// A name matches (contract §3) when the host registered it with a predicate that accepts
/// the error, when it is the error's type name, or when it is the case name of the enum value
/// the error is. The built-in `any` matches every error but cancellation; `timeout` also
/// matches an ``AttemptTimeoutError``.
///
/// Creating one costs two metatype comparisons. Matching allocates nothing: a rule without
/// `on` or `except` looks at nothing more; a registered name calls its predicate; a type or
/// case name is compared byte by byte with the runtime's own copy of the name (the C strings
/// of its metadata), so no `String` is made.
package struct ErrorClassification {
  /// The error itself, for predicates.
  package let error: any Error
  /// Whether the error is a `CancellationError`, which no rule retries.
  package let isCancellation: Bool
  /// Whether the error is the runtime's `timeout` error.
  package let isAttemptTimeout: Bool
  private let predicates: [String: @Sendable (any Error) -> Bool]

  /// Classifies `error` with the host's registered predicates.
  package init(_ error: any Error, predicates: [String: @Sendable (any Error) -> Bool] = [:]) {
    self.error = error
    // Both are structs, so `is` amounts to comparing the dynamic type, without a dynamic cast.
    let errorType = type(of: error)
    self.isCancellation = errorType == CancellationError.self
    self.isAttemptTimeout = errorType == AttemptTimeoutError.self
    self.predicates = predicates
  }

  /// The type's name without module or generic arguments, such as `URLError`.
  package var typeName: Substring {
    let (start, count) = _getTypeName(type(of: error), qualified: false)
    let name = String(decoding: UnsafeBufferPointer(start: start, count: count), as: UTF8.self)
    return name.prefix { $0 != "<" }
  }

  /// The enum case name, such as `serverError` for `APIError.serverError(code: 503)`.
  package var caseName: String? {
    enumCaseName(of: error).map { String(cString: $0) }
  }

  /// Whether the class `name` contains the error.
  package func matches(_ name: String) -> Bool {
    switch name {
    case "any": return !isCancellation
    case "timeout" where isAttemptTimeout: return true
    default: break
    }
    if !predicates.isEmpty, let predicate = predicates[name], predicate(error) { return true }
    return hasCaseName(name) || hasTypeName(name)
  }

  /// Whether `rule` takes the error: one of its `on` classes (any error but cancellation when
  /// it has none) and none of its `except` classes.
  package func isHandled(by rule: RetryRule) -> Bool {
    isHandled(on: rule.errorClasses, except: rule.excludedClasses)
  }

  /// Whether a rule with these `on` and `except` classes takes the error.
  func isHandled(on included: [String], except excluded: [String]) -> Bool {
    guard !isCancellation else { return false }
    let isIncluded = included.isEmpty || included.contains(where: matches)
    return isIncluded && (excluded.isEmpty || !excluded.contains(where: matches))
  }

  /// Whether the error is an enum value whose case is `name`, compared without a `String`.
  private func hasCaseName(_ name: String) -> Bool {
    guard let cString = enumCaseName(of: error) else { return false }
    let caseName = UnsafeRawPointer(cString).assumingMemoryBound(to: UInt8.self)
    var byte = caseName
    for expected in name.utf8 {
      // A NUL ends the C string: it never equals a byte of `name` but a NUL, refused here.
      guard expected != 0, byte.pointee == expected else {
        return Self.hasNonASCII(name, caseName) && name == String(cString: cString)
      }
      byte += 1
    }
    return byte.pointee == 0
      || (Self.hasNonASCII(name, caseName) && name == String(cString: cString))
  }

  /// Whether the error's type name, up to its generic arguments, is `name`.
  ///
  /// The runtime keeps the names it hands out (`_getTypeName`, behind `String(describing:)`
  /// of a type) in a cache of its own, so this reads the bytes in place.
  private func hasTypeName(_ name: String) -> Bool {
    let (start, count) = _getTypeName(type(of: error), qualified: false)
    let bytes = UnsafeBufferPointer(start: start, count: count)
    let end = bytes.firstIndex(of: UInt8(ascii: "<")) ?? bytes.endIndex
    if name.utf8.elementsEqual(bytes[..<end]) { return true }
    let hasNonASCII = name.utf8.contains { $0 >= 0x80 } || bytes.contains { $0 >= 0x80 }
    return hasNonASCII && name == typeName
  }

  /// Whether `name` or the C string `other` has a non-ASCII byte: only then can strings whose
  /// bytes differ still be equal as `String`s, which compare by canonical equivalence.
  private static func hasNonASCII(_ name: String, _ other: UnsafePointer<UInt8>) -> Bool {
    if name.utf8.contains(where: { $0 >= 0x80 }) { return true }
    var byte = other
    while byte.pointee != 0 {
      if byte.pointee >= 0x80 { return true }
      byte += 1
    }
    return false
  }
}

/// The case name of an enum value as the runtime's C string, or nil when `value` is not an
/// enum.
///
/// This asks the runtime's reflection for the name directly (the entry point `print` uses for
/// enums), so it needs no `Mirror` and allocates nothing, and works for cases with and
/// without payloads and for enums that customize their description. The string lives in the
/// type's metadata, for the life of the process.
private func enumCaseName<Value: Error>(of value: Value) -> UnsafePointer<CChar>? {
  _swiftEnumCaseName(value)
}

@_silgen_name("swift_EnumCaseName")
private func _swiftEnumCaseName<Value>(_ value: Value) -> UnsafePointer<CChar>?
