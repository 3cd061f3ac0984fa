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

  /// Whether the run that made the attempt cut it off with its own `timeout`, which its
  /// breaker always counts as a failure (contract §12).
  ///
  /// Set only while that run decides what the cut-off means; the run clears it before it
  /// throws the error or reports it as the run's end, so a run around that one sees an inner
  /// run's timeout as an error like any other. Equality and hashing ignore it.
  package var isCutOffByThisRun = false

  /// Creates the error for an attempt that exceeded `timeout`.
  public init(timeout: Duration) {
    self.timeout = timeout
  }

  /// The error of an attempt the run itself cut off at `timeout`.
  package init(cutOffAt timeout: Duration) {
    self.timeout = timeout
    self.isCutOffByThisRun = true
  }

  /// Whether both errors are for the same limit.
  public static func == (lhs: Self, rhs: Self) -> Bool { lhs.timeout == rhs.timeout }

  /// Hashes the limit.
  public func hash(into hasher: inout Hasher) { hasher.combine(timeout) }

  /// Whether `error` is an attempt the current run cut off with its own `timeout`.
  package static func isOwnCutOff(_ error: any Error) -> Bool {
    (error as? AttemptTimeoutError)?.isCutOffByThisRun == true
  }

  /// `error` as a run throws it: an attempt it cut off is an error like any other for
  /// whoever catches it.
  package static func leavingRun(_ error: any Error) -> any Error {
    guard var timeout = error as? AttemptTimeoutError, timeout.isCutOffByThisRun else {
      return error
    }
    timeout.isCutOffByThisRun = false
    return timeout
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
