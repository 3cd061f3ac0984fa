import RetryPolicy
import RetryPolicyTesting
import Synchronization

/// Errors shaped like a typical client's.
enum APIError: Error, Equatable {
  case serverError(code: Int)
  case unauthorized
  case notFound
}

/// A payload-less enum that customizes its description, which must not hide its case names.
enum StorageError: Error, CustomStringConvertible {
  case diskFull
  case corrupted(path: String)

  var description: String { "storage failed" }
}

struct ConnectionLost: Error, Equatable {}

struct Envelope<Payload: Sendable>: Error {
  var payload: Payload
}

/// An error carrying a server's Retry-After.
struct ThrottledError: RetryAfterProviding, Equatable {
  var retryAfter: Duration?
}

/// A rule with the given count and behavior; everything else optional, as in `RetryRule`.
func policy(
  _ rules: RetryRule..., within: Duration? = nil, timeout: Duration? = nil,
  budget: Double? = nil
) -> CompiledPolicy {
  CompiledPolicy(rules: rules, deadline: within, attemptTimeout: timeout, budgetRatio: budget)
}

/// A thread-safe log of strings, for checking the order of attempts and hooks.
final class Log: Sendable {
  private let lines = Mutex<[String]>([])

  func append(_ line: String) {
    lines.withLock { $0.append(line) }
  }

  var entries: [String] {
    lines.withLock { $0 }
  }
}

extension Duration {
  /// Seconds as a `Double`, for readable expectations.
  var inSeconds: Double { self / .seconds(1) }
}
