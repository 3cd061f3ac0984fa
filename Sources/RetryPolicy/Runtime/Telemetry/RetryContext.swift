/// The run an operation's code is part of: the policy's name and the attempt's number, for a
/// span attribute or a log line.
///
/// A run in an environment with an observer (``RetryEnvironment/observer``) sets ``current``
/// around each attempt; outside such a run it is nil. (Setting a task-local value takes a
/// lock of the task's status and an executor check: several times the rest of a successful
/// run, so runs without an observer, metrics-only ones included, do without it.) Code called
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

  /// The attempt under way in the current task, or nil outside a run with an observer.
  @TaskLocal public static var current: RetryContext?
}

extension CompiledPolicy {
  /// The name that metrics and ``RetryContext`` give the policy: its name, or `anonymous`.
  @usableFromInline
  package var metricsName: String { name ?? "anonymous" }
}
