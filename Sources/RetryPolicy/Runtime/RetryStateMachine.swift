/// The decisions of one run of a policy, as a pure state machine: given a failed attempt, it
/// says whether to retry, after which delay and by which rule, or why to stop.
///
/// It performs nothing: no sleeping, no clock, no hooks, no budget. The driver
/// (``RetryRun``) feeds it each failure with the elapsed time and the task's cancellation,
/// performs the action it returns, and asks the shared budget before a retry.
package struct RetryStateMachine: Sendable {
  /// What the driver does after a failed attempt.
  package enum Action: Sendable, Hashable {
    /// Wait `delay`, run rule `rule`'s hook if it has one, then attempt again.
    case retry(rule: Int, delay: Duration)
    /// Stop and throw.
    case giveUp(RetryStopReason)
  }

  /// The policy's rules, in order.
  package let rules: [RetryRule]
  /// The policy's `within` deadline, counted from the first attempt.
  package let deadline: Duration?
  /// The attempts started so far.
  package private(set) var attempts: Int
  /// The delays decided so far, added up (saturating).
  package private(set) var totalDelay: Duration = .zero
  /// Retries made by each rule; each rule counts its own.
  package private(set) var retriesByRule: [Int]
  /// The delay each rule waited last, which decorrelated jitter grows from.
  private var previousDelayByRule: [Duration?]

  /// Creates the state of a run of `policy` that has made `attempts` attempts so far.
  package init(policy: CompiledPolicy, attempts: Int = 0) {
    self.rules = policy.rules
    self.deadline = policy.deadline
    self.attempts = attempts
    self.retriesByRule = Array(repeating: 0, count: policy.rules.count)
    self.previousDelayByRule = Array(repeating: nil, count: policy.rules.count)
  }

  /// Records that an attempt starts.
  package mutating func attemptStarted() {
    if attempts < Int.max { attempts += 1 }
  }

  /// Decides what follows a failed attempt.
  ///
  /// In order: cancellation stops the run; then the first rule whose classes match takes the
  /// error (none: the error is not matched); a rule with no retries left stops the run; the
  /// delay is drawn (or taken from the error under `honoring retry-after`, capped by `max`);
  /// a delay that would end past the deadline stops the run. Otherwise the retry is counted
  /// against its rule.
  ///
  /// - Parameters:
  ///   - error: The attempt's error, classified.
  ///   - isTaskCancelled: Whether the running task is cancelled.
  ///   - elapsed: The time since the first attempt started.
  ///   - random: The source of jitter.
  package mutating func attemptFailed(
    _ error: ErrorClassification,
    isTaskCancelled: Bool,
    elapsed: Duration,
    using random: inout some RandomNumberGenerator
  ) -> Action {
    if isTaskCancelled || error.isCancellation { return .giveUp(.cancelled) }
    guard let index = rules.firstIndex(where: error.isHandled(by:)) else {
      return .giveUp(.errorNotMatched)
    }
    let rule = rules[index]
    let made = retriesByRule[index]
    if let limit = rule.behavior.maxCount, made >= limit { return .giveUp(.retriesExhausted) }
    let retry = made + 1
    var delay = rule.delay(beforeRetry: retry, previous: previousDelayByRule[index], using: &random)
    if rule.honorsRetryAfter, let carried = (error.error as? any RetryAfterProviding)?.retryAfter {
      delay = Self.clamp(carried, cap: rule.maxDelay)
    }
    if let deadline, Self.passes(deadline, after: elapsed, plus: delay) {
      return .giveUp(.deadlineExceeded)
    }
    retriesByRule[index] = retry
    previousDelayByRule[index] = delay
    totalDelay = totalDelay.addingClamped(delay)
    return .retry(rule: index, delay: delay)
  }

  /// A carried delay within [0, cap], the cap being the rule's `max` or the saturation point.
  private static func clamp(_ delay: Duration, cap: Duration?) -> Duration {
    let ceiling = Swift.max(.zero, Swift.min(cap ?? Duration.saturatedDelay, .saturatedDelay))
    return Swift.min(Swift.max(delay, .zero), ceiling)
  }

  /// Whether waiting `delay` after `elapsed` ends past `deadline`; never overflows.
  private static func passes(_ deadline: Duration, after elapsed: Duration, plus delay: Duration)
    -> Bool
  {
    guard elapsed < Duration.clampLimit, delay < Duration.clampLimit else { return true }
    return elapsed + delay > deadline
  }
}

extension Duration {
  /// The bound below which the runtime adds durations exactly: 2^50 s (about 36 million years),
  /// far inside what `Duration` can hold, so a sum of two such values never overflows.
  package static let clampLimit: Duration = .seconds(1 << 50)

  /// The sum, stopping at ±``clampLimit`` instead of overflowing.
  package func addingClamped(_ other: Duration) -> Duration {
    let total = self / .seconds(1) + other / .seconds(1)
    guard total.magnitude < Duration.clampLimit / .seconds(1) else {
      return total > 0 ? Duration.clampLimit : .zero - Duration.clampLimit
    }
    return self + other
  }
}
