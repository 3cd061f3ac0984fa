/// The error class and hook names a host knows, handed to the compiler so that a
/// misspelt name is a compile error with a "did you mean" suggestion.
///
///     let vocabulary = Vocabulary(errorClasses: ["serverError", "unauthorized"], hooks: ["refreshToken"])
///     let policy = try compile(policy: "retry 1 on unauthorised after refreshToken", vocabulary: vocabulary)
///     // <policy>:1:12: error: unknown error class 'unauthorised'; did you mean 'unauthorized'?
public struct Vocabulary: Sendable, Hashable {
  /// The error class names accepted in `on` and `except`, or nil to accept any name.
  ///
  /// The built-in classes (``builtInErrorClasses``) and status forms are always accepted.
  public var errorClasses: Set<String>?
  /// The hook names accepted in `after`, or nil to accept any name.
  public var hooks: Set<String>?

  /// Creates a vocabulary; a nil set accepts every name of its kind.
  public init(errorClasses: Set<String>? = nil, hooks: Set<String>? = nil) {
    self.errorClasses = errorClasses
    self.hooks = hooks
  }

  /// Accepts every name.
  public static let open = Vocabulary()

  /// The error class names every policy may use.
  ///
  /// They are `any`, `timeout`, `transient` and the retry-worthy `URLError` names
  /// (`timedOut`, `networkConnectionLost`, …). Status forms (`503`, `5xx`) are accepted
  /// too, checked on their own.
  public static let builtInErrorClasses: Set<String> = HTTPErrorClasses.names.union([
    "any", "timeout",
  ])
}
