import Foundation

/// One class of an `on` or `except` list, resolved once from its text: what kind of class it
/// is, so that classifying a failure never reads the text again.
///
/// A rule builds its matchers when it is created (``RetryRule/matcher``); a failed attempt
/// then costs a switch on the kind and whatever the kind needs of the error (a status, a
/// `URLError` code, a registered predicate, a type or case name), never a parse of `"503"`
/// or `"5xx"`.
package struct ErrorClassMatcher: Sendable, Hashable {
  /// What a class name is, as its text says.
  package enum Kind: Sendable, Hashable {
    /// `any`: every error but cancellation.
    case any
    /// `timeout`: an attempt cut off by `timeout`, or an error named `timeout`.
    case timeout
    /// A status code such as `503`.
    case status(Int)
    /// A status class such as `5xx`: the statuses 500 to 599.
    case statusClass(ClosedRange<Int>)
    /// A status form the checker rejects (`600`, `5XX`): only a registered predicate of that
    /// name can match it.
    case invalidStatus
    /// `transient`: a retry-worthy `URLError` or a status 408, 500, 502, 503 or 504.
    case transient
    /// `circuitOpen`: an attempt a circuit breaker refused (``CircuitOpenError``).
    case circuitOpen
    /// `limitExceeded`: an attempt a concurrency limit refused (``LimitExceededError``).
    case limitExceeded
    /// `throttled`: an attempt adaptive throttling refused (``ThrottledError``).
    case throttled
    /// `rateLimited`: an attempt a rate limit refused (``RateLimitedError``).
    case rateLimited
    /// A retry-worthy `URLError` code by its Swift name, such as `timedOut`.
    case urlError(URLError.Code)
    /// Any other name: a registered predicate, a type name or an enum case name.
    case named
  }

  /// The kind, decided from the text when the matcher is made.
  package let kind: Kind
  /// The class's text: the key of a registered predicate and, for a word, the type or case
  /// name it may also be.
  package let name: String

  /// The matcher of the class written `name`.
  package init(_ name: String) {
    self.name = name
    if let form = HTTPErrorClasses.statusForm(name) {
      switch form {
      case .none: kind = .invalidStatus
      case .some(let range) where range.count == 1: kind = .status(range.lowerBound)
      case .some(let range): kind = .statusClass(range)
      }
      return
    }
    kind = Self.wordKinds[name] ?? .named
  }

  /// The kinds of the words the language knows as class names.
  ///
  /// They are the built-in classes and the retry-worthy URL error names. One lookup decides a
  /// word's kind (compiling a rule makes a matcher for each of its classes); any other word is
  /// `named`.
  private static let wordKinds: [String: Kind] = {
    var kinds: [String: Kind] = [:]
    for (name, code) in HTTPErrorClasses.urlErrorCodes { kinds[name] = .urlError(code) }
    // The built-in classes come after the URL error names: a built-in name is never one.
    let builtIns: [(String, Kind)] = [
      ("any", .any), ("timeout", .timeout), ("transient", .transient),
      ("circuitOpen", .circuitOpen), ("limitExceeded", .limitExceeded),
      ("throttled", .throttled), ("rateLimited", .rateLimited),
    ]
    for (name, kind) in builtIns { kinds[name] = kind }
    return kinds
  }()

  /// A matcher of the given kind and name, as ``init(_:)`` would make for some text.
  package init(kind: Kind, name: String) {
    self.kind = kind
    self.name = name
  }

  /// Whether the class contains the classified error.
  ///
  /// Any of these makes it so, none hides another (contract §3): the built-in `any` (every
  /// error but cancellation) or `timeout` (an ``AttemptTimeoutError``); a registered predicate
  /// of that name that accepts the error; a status (form) that the error's
  /// ``HTTPStatusProviding`` status is in; `transient` or a URL error name as the grammar
  /// reference lists; the name of the error's type or of one of its superclasses; its enum
  /// case name. A status form is never a type or case name, so it is not reflected on.
  package func matches(_ error: ErrorClassification) -> Bool {
    switch kind {
    case .any:
      return !error.isCancellation
    case .timeout:
      return error.isAttemptTimeout || error.isNamed(name)
    case .status(let code):
      return error.isAccepted(byPredicate: name) || error.statusCode == code
    case .statusClass(let range):
      if error.isAccepted(byPredicate: name) { return true }
      guard let status = error.statusCode else { return false }
      return range.contains(status)
    case .invalidStatus:
      return error.isAccepted(byPredicate: name)
    case .transient:
      if error.isAccepted(byPredicate: name) || error.isTransient { return true }
      return error.hasName(name)
    case .urlError(let code):
      if error.isAccepted(byPredicate: name) || error.urlErrorCode == code { return true }
      return error.hasName(name)
    case .circuitOpen:
      return error.isCircuitOpen || error.isNamed(name)
    case .limitExceeded:
      return error.error is LimitExceededError || error.isNamed(name)
    case .throttled:
      return error.error is ThrottledError || error.isNamed(name)
    case .rateLimited:
      return error.error is RateLimitedError || error.isNamed(name)
    case .named:
      return error.isNamed(name)
    }
  }
}

/// The `on` and `except` lists of one rule, resolved once (see ``ErrorClassMatcher``).
package struct RuleMatcher: Sendable, Hashable {
  /// The classes of `on`; empty means any error but cancellation.
  package let included: [ErrorClassMatcher]
  /// The classes of `except`.
  package let excluded: [ErrorClassMatcher]
  /// Whether the rule takes every error its `except` list leaves: it has no `on`, or `on any`.
  package let isCatchAll: Bool

  /// The matcher of a rule with these `on` and `except` classes.
  package init(on included: [String], except excluded: [String]) {
    self.included = included.map(ErrorClassMatcher.init)
    self.excluded = excluded.map(ErrorClassMatcher.init)
    self.isCatchAll = self.included.isEmpty || self.included.contains { $0.kind == .any }
  }

  /// Whether one of the `on` classes contains the error (false when there are none).
  package func includes(_ error: ErrorClassification) -> Bool {
    included.contains { $0.matches(error) }
  }

  /// Whether one of the `except` classes contains the error.
  package func excludes(_ error: ErrorClassification) -> Bool {
    !excluded.isEmpty && excluded.contains { $0.matches(error) }
  }

  /// Whether the rule takes the error: one of its `on` classes (any error but cancellation
  /// when it has none) and none of its `except` classes.
  package func takes(_ error: ErrorClassification) -> Bool {
    // Cancellation and the refusals of the breaker, limits, throttle and rate are never
    // retried.
    guard !error.isCancellation, !error.isCircuitOpen, !error.isShed else { return false }
    return (included.isEmpty || includes(error)) && !excludes(error)
  }
}
