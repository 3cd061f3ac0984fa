/// The run an operation's code is part of: the policy's name and the attempt's number, for a
/// span attribute or a log line.
///
/// Every run sets ``current`` around each of its attempts; outside a run it is nil. Code called
/// by the operation reads it without being handed anything:
///
///     func fetchUser(_ id: Int) async throws -> User {
///       if let context = RetryContext.current {
///         span.setAttribute("retry.policy", context.policy)
///         request.setValue(String(context.attempt - 1), forHTTPHeaderField: "X-Resend-Count")
///       }
///       …
///     }
///
/// A child task the operation creates inherits it, as task-local values are inherited; a
/// detached task does not.
public struct RetryContext: Sendable, Hashable {
  /// The policy's name, or `anonymous` for a policy compiled from one line (as the `policy`
  /// label of ``RetryMetrics`` says it).
  public var policy: String
  /// The attempt's number, from 1 (the first attempt) up.
  public var attempt: Int

  /// Creates the context of attempt `attempt` of a run of `policy`.
  public init(policy: String, attempt: Int) {
    self.policy = policy
    self.attempt = attempt
  }

  /// The attempt under way in the current task, or nil outside a run.
  @TaskLocal public static var current: RetryContext?
}

extension CompiledPolicy {
  /// The name that metrics and ``RetryContext`` give the policy: its name, or `anonymous`.
  @usableFromInline
  package var metricsName: String { name ?? "anonymous" }
}

extension CompiledPolicy {
  /// Runs `operation` as attempt `number` of a run of this policy, with
  /// ``RetryContext/current`` set for the code it calls.
  @inlinable
  @inline(__always)
  package func attempt<Success>(
    _ number: Int, isolation: isolated (any Actor)?, _ operation: () async throws -> Success
  ) async throws -> Success {
    try await RetryContext.$current.withValue(
      RetryContext(policy: metricsName, attempt: number), operation: operation,
      isolation: isolation)
  }
}
