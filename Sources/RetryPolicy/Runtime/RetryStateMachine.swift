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
  /// Each rule's retries and last delay, inline for the first few rules.
  private var ruleStates: RuleStates

  /// Retries made by each rule; each rule counts its own.
  package var retriesByRule: [Int] {
    rules.indices.map { ruleStates[$0].retries }
  }

  /// Creates the state of a run of `policy` that has made `attempts` attempts so far.
  package init(policy: borrowing CompiledPolicy, attempts: Int = 0) {
    self.rules = policy.rules
    self.deadline = policy.deadline
    self.attempts = attempts
    self.ruleStates = RuleStates(count: policy.rules.count)
  }

  /// Forgets every rule's retries, keeping the count of attempts: a long-lived sequence's
  /// new episode.
  package mutating func restart() {
    ruleStates = RuleStates(count: rules.count)
  }

  /// Records that an attempt starts.
  package mutating func attemptStarted() {
    if attempts < Int.max { attempts += 1 }
  }

  /// Decides what follows a failed attempt.
  ///
  /// In order: cancellation stops the run; then the rule that takes the error is found (see
  /// ``takingRule(of:among:)``; none: the error is not matched); a rule with no retries left
  /// stops the run (no other rule takes over); the
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
    // The rules are read through a buffer, which borrows each rule instead of copying it.
    let decision = rules.withUnsafeBufferPointer { rules -> Decision in
      guard let index = Self.takingRule(of: error, among: rules) else {
        return .giveUp(.errorNotMatched)
      }
      let state = ruleStates[index]
      let made = state.retries
      if let limit = rules[index].behavior.maxCount, made >= limit {
        return .giveUp(.retriesExhausted)
      }
      var delay = Duration.zeroInline
      // `immediately` waits zero whatever the jitter. Without jitter, or with a kind that
      // spreads a zero base over [0, 0] without drawing (see `drawDelay`), the draw is
      // skipped; proportional jitter draws its factor even then, and keeps doing so, so that
      // the generator's sequence stays what it was.
      if case .immediate = rules[index].behavior, !rules[index].hasProportionalJitter {
      } else {
        // The delay clauses alone, each borrowed: calling `delay` on the rule itself would
        // copy all of it, names and hook included, as the generator is `inout`.
        delay = RetryRule.drawDelay(
          behavior: rules[index].behavior, jitter: rules[index].jitter,
          maxDelay: rules[index].maxDelay, beforeRetry: made + 1,
          previous: made > 0 ? state.previousDelay : nil, using: &random)
      }
      if rules[index].honorsRetryAfter,
        let carried = (error.error as? any RetryAfterProviding)?.retryAfter
      {
        delay = Self.clamp(carried, cap: rules[index].maxDelay)
      }
      return .retry(rule: index, retry: made + 1, delay: delay)
    }
    switch decision {
    case .giveUp(let reason):
      return .giveUp(reason)
    case .retry(let index, let retry, let delay):
      if let deadline, Self.passes(deadline, after: elapsed, plus: delay) {
        return .giveUp(.deadlineExceeded)
      }
      ruleStates[index] = RuleState(retries: retry, previousDelay: delay)
      return .retry(rule: index, delay: delay)
    }
  }

  /// The rule of a block that takes `error`: the first rule that names it, else the first
  /// rule without `on` that takes it; nil when no rule does.
  ///
  /// A rule *names* the error when its `on` list has a class other than `any` that contains
  /// the error (a status, a status class, `transient`, a type, a case or a registered name)
  /// and its `except` list does not exclude it. A rule without `on` (or with `on any`) takes
  /// every error but cancellation that its `except` list does not exclude, but only when no
  /// rule of the block names the error: so `retry 2` before `retry 4 on 503` leaves a 503 to
  /// the second rule, whatever the order of the two.
  package static func takingRule(
    of error: ErrorClassification, among rules: UnsafeBufferPointer<RetryRule>
  ) -> Int? {
    // Cancellation and the refusals of a breaker and of load shedding (`circuitOpen`,
    // `limitExceeded`, `throttled`, `rateLimited`, thrown by a run inside the operation) are
    // never retried, even by a rule that names their class (contract §12, §14).
    guard !error.isCancellation, !error.isCircuitOpen, !error.isShed else { return nil }
    var catchAll: Int?
    for index in rules.indices {
      // Each rule's classes were resolved when it was made: no class text is read here. The
      // matcher is read in place (a copy would retain and release its two lists).
      if rules[index].matcher.isCatchAll {
        // Only the first catch-all that takes the error matters, and only if no rule names it.
        if catchAll == nil, !rules[index].matcher.excludes(error) { catchAll = index }
        continue
      }
      if rules[index].matcher.includes(error), !rules[index].matcher.excludes(error) {
        return index
      }
    }
    return catchAll
  }

  /// The hook name of rule `index`, read in place.
  @inline(__always)
  package func hookName(ofRule index: Int) -> String? {
    rules.withUnsafeBufferPointer { $0[index].hook }
  }

  /// What the rules say of a failure, before the deadline is checked and the retry counted.
  private enum Decision {
    case retry(rule: Int, retry: Int, delay: Duration)
    case giveUp(RetryStopReason)
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
    let limit = Duration.clampLimit.attoseconds
    guard elapsed.attoseconds < limit, delay.attoseconds < limit else { return true }
    return elapsed.attoseconds + delay.attoseconds > deadline.attoseconds
  }
}

extension RetryRule {
  /// Whether the rule's jitter is `jitter P%`, which draws even for a zero delay.
  fileprivate var hasProportionalJitter: Bool {
    if case .proportional? = jitter { return true }
    return false
  }
}

/// One rule's part of a run: the retries it made and the delay it waited last (meaningful
/// once it has made a retry), which decorrelated jitter grows from.
struct RuleState: Sendable {
  var retries = 0
  var previousDelay: Duration = .zeroInline
}

/// The ``RuleState`` of each rule of a policy: the first four inline, so that a run of a
/// typical policy allocates nothing for them; the rest in an array.
struct RuleStates: Sendable {
  private static let inlineCount = 4
  private var inline = (RuleState(), RuleState(), RuleState(), RuleState())
  private var overflow: [RuleState]

  /// The states of `count` rules, none of which has retried.
  init(count: Int) {
    let extra = count - Self.inlineCount
    overflow = extra > 0 ? Array(repeating: RuleState(), count: extra) : []
  }

  /// The state of rule `index`, which must be one of the `count` rules.
  subscript(index: Int) -> RuleState {
    get {
      switch index {
      case 0: inline.0
      case 1: inline.1
      case 2: inline.2
      case 3: inline.3
      default: overflow[index - Self.inlineCount]
      }
    }
    set {
      switch index {
      case 0: inline.0 = newValue
      case 1: inline.1 = newValue
      case 2: inline.2 = newValue
      case 3: inline.3 = newValue
      default: overflow[index - Self.inlineCount] = newValue
      }
    }
  }
}
