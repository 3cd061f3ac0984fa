/// An error that carries the delay its source asked for before a retry, such as the value of
/// an HTTP `Retry-After` header or a gRPC pushback.
///
/// A rule with `honoring retry-after` uses ``retryAfter`` instead of the delay it would have
/// computed (jitter included), still capped by the rule's `max`. A nil value means "no
/// opinion": the computed delay is used. A negative value is treated as zero (a `Retry-After`
/// date already past means "retry now").
///
///     struct HTTPError: RetryAfterProviding {
///       var status: Int
///       var retryAfter: Duration?
///     }
public protocol RetryAfterProviding: Error {
  /// The delay the error asks for before the next attempt, or nil to let the rule decide.
  var retryAfter: Duration? { get }
}

/// The error of an attempt cut off by the policy's `timeout`; its error class is `timeout`.
///
/// When the limit passes, the runtime cancels the attempt and waits for the operation to
/// return. A value it returns even then is the run's value (a late success is a success); an
/// error it throws counts as this one, so an operation that ignores cancellation delays the
/// run but is never run again once its result is in hand. When retries run out, `run` throws
/// this error.
public struct AttemptTimeoutError: Error, Hashable, CustomStringConvertible {
  /// The limit the attempt exceeded.
  public var timeout: Duration

  /// Creates the error for an attempt that exceeded `timeout`.
  public init(timeout: Duration) {
    self.timeout = timeout
  }

  /// A phrase such as `attempt timed out after 10s`.
  public var description: String {
    "attempt timed out after \(timeout.policyText)"
  }
}

/// The error thrown when a rule's `after NAME` names a hook the environment did not register.
///
/// The runtime throws it when the rule is about to retry, instead of retrying. Hand
/// ``RetryEnvironment/vocabulary`` to the compiler to catch the misspelling at compile time.
public struct UnregisteredHookError: Error, Hashable, CustomStringConvertible {
  /// The hook name the rule uses.
  public var name: String

  /// Creates the error for the hook `name`.
  public init(name: String) {
    self.name = name
  }

  /// A phrase such as `no hook named 'refreshToken' is registered`.
  public var description: String {
    "no hook named '\(name)' is registered"
  }
}
