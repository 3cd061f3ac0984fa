/// The driver of one run, which performs what ``RetryStateMachine`` decides.
///
/// It waits on the clock, runs hooks, draws on the budget and reports events. `run` and
/// retrying sequences share it.
@usableFromInline
package struct RetryRun: Sendable {
  /// This run's own copy of the environment's random source.
  private var random: RandomSource
  /// The decisions so far; it also holds the policy's rules and deadline.
  package private(set) var machine: RetryStateMachine
  /// The policy's shared budget, when it has `budget P%`.
  private let budget: RetryBudget?
  /// When the run started on the environment's clock; read only when `within` or an observer
  /// needs the elapsed time, so that other runs never read the clock.
  private let start: (any InstantProtocol<Duration>)?

  /// Starts a run in `environment`; `attempts` counts attempts already made (1 after a failed
  /// fast path).
  @inlinable
  @inline(__always)
  package init(
    policy: borrowing CompiledPolicy, environment: borrowing RetryEnvironment, attempts: Int = 0
  ) {
    // The parts the run needs, passed one by one: copying the whole environment into `init`
    // costs a copy and a destruction of all of it per run.
    self.init(
      policy: policy, random: environment.random, clock: environment.clock,
      isObserved: environment.observer != nil, attempts: attempts)
  }

  @usableFromInline
  init(
    policy: borrowing CompiledPolicy, random: any RandomNumberGenerator & Sendable,
    clock: borrowing any Clock<Duration>, isObserved: Bool, attempts: Int
  ) {
    self.random = RandomSource(base: random)
    self.machine = RetryStateMachine(policy: policy, attempts: attempts)
    self.budget = policy.activeBudget
    let needsTime = policy.deadline != nil || isObserved
    self.start = needsTime ? clock.now : nil
  }

  /// Records that an attempt starts; the first one deposits into the budget.
  ///
  /// Every method takes the run's environment, the one it started with, which the run borrows
  /// instead of keeping a copy.
  @usableFromInline
  package mutating func startAttempt(in environment: borrowing RetryEnvironment) {
    machine.attemptStarted()
    if let budget, machine.attempts == 1 { budget.recordFirstAttempt() }
    if let observer = environment.observer { observer(.attemptStarted(attempt: machine.attempts)) }
  }

  /// Reports that the last attempt succeeded and the run is over.
  @usableFromInline
  package func finishSucceeded(in environment: borrowing RetryEnvironment) {
    finish(.succeeded, in: environment)
  }

  /// Handles a failed attempt: returns when the next attempt may start (after the delay and
  /// the hook), or throws what the run throws.
  ///
  /// It throws the attempt's error unchanged when the error is not matched, retries are
  /// exhausted, the deadline is near or the budget is empty; `CancellationError` when the task
  /// is cancelled; a hook's error when the hook throws; ``UnregisteredHookError`` for a hook
  /// name with no hook.
  ///
  /// It runs on the caller's executor (`nonisolated(nonsending)`): only the clock's sleep and
  /// a hook may run elsewhere. A retry with neither delay nor hook does not suspend.
  nonisolated(nonsending) package mutating func recover(
    from error: any Error, in environment: RetryEnvironment
  ) async throws {
    if let wait = try decideRetry(after: error, in: environment) {
      try await perform(wait, after: error, in: environment)
    }
  }

  /// What comes before the wait of a retry, all synchronous: returns nil when the next
  /// attempt may start at once, the wait to perform first otherwise, or throws what the run
  /// throws.
  ///
  /// Reports the failure, asks the state machine (which stops a cancelled task), finds the
  /// hook, draws on the budget and reports the retry. Cancellation is checked once, before
  /// the decision: a retry that does not suspend starts the next attempt at once, and
  /// ``perform(_:after:)`` checks again after a wait.
  @usableFromInline
  package mutating func decideRetry(
    after error: any Error, in environment: borrowing RetryEnvironment
  ) throws -> RetryWait? {
    if let observer = environment.observer {
      observer(.attemptFailed(attempt: machine.attempts, error: error))
    }
    let classification = ErrorClassification(error, predicates: environment.errorClasses)
    let action = machine.attemptFailed(
      classification, isTaskCancelled: Task.isCancelled, elapsed: elapsed(on: environment.clock),
      using: &random)
    switch action {
    case .giveUp(let reason):
      throw stop(reason, error, in: environment)
    case .retry(let index, let delay):
      var hook: (@Sendable () async throws -> Void)?
      if let name = machine.hookName(ofRule: index) {
        hook = environment.hooks[name]
        if hook == nil {
          throw stop(.hookFailed, UnregisteredHookError(name: name), in: environment)
        }
      }
      if let budget, !budget.withdrawForRetry() {
        throw stop(.budgetExhausted, error, in: environment)
      }
      if let observer = environment.observer {
        observer(.retryScheduled(attempt: machine.attempts, rule: index, delay: delay))
      }
      guard delay.isPositive || hook != nil else { return nil }
      return RetryWait(delay: delay, hook: hook)
    }
  }

  /// Sleeps the wait's delay on the clock, then runs its hook; throws as ``recover(from:)``
  /// says, and `CancellationError` when the task is cancelled by the end of the wait.
  @usableFromInline
  @inline(__always)
  nonisolated(nonsending) package func perform(
    _ wait: RetryWait, after error: any Error, in environment: RetryEnvironment
  ) async throws {
    if wait.delay.isPositive {
      do {
        try await sleep(on: environment.clock, for: wait.delay)
      } catch {
        throw stop(.cancelled, error, in: environment)
      }
    }
    if let hook = wait.hook {
      do {
        try await hook()
      } catch {
        throw stop(Task.isCancelled ? .cancelled : .hookFailed, error, in: environment)
      }
    }
    if Task.isCancelled { throw stop(.cancelled, error, in: environment) }
  }

  /// Reports the end of a run for `reason`, and gives the error to throw: cancellation always
  /// throws a `CancellationError`.
  private func stop(
    _ reason: RetryStopReason, _ error: any Error, in environment: borrowing RetryEnvironment
  ) -> any Error {
    let thrown: any Error =
      reason == .cancelled && !(error is CancellationError) ? CancellationError() : error
    if let observer = environment.observer {
      observer(.gaveUp(attempt: machine.attempts, reason: reason, error: thrown))
    }
    finish(.failed(reason), in: environment)
    return thrown
  }

  private func finish(_ outcome: RetryOutcome, in environment: borrowing RetryEnvironment) {
    guard let observer = environment.observer else { return }
    let summary = RetrySummary(
      attempts: machine.attempts, totalDelay: machine.totalDelay,
      elapsed: elapsed(on: environment.clock), outcome: outcome)
    observer(.finished(summary))
  }

  /// The time since the run started, or zero when nothing needs it (see ``start``).
  private func elapsed(on clock: any Clock<Duration>) -> Duration {
    guard let start else { return .zeroInline }
    return duration(since: start, on: clock)
  }
}

/// A random source of any type, as one concrete type: the state machine's draws are
/// specialized for it, and only ``next()`` is a dynamic call.
struct RandomSource: RandomNumberGenerator, Sendable {
  var base: any RandomNumberGenerator & Sendable

  @inline(__always)
  mutating func next() -> UInt64 {
    base.next()
  }
}

/// What a run waits for before its next attempt: a delay on its clock, then a hook.
@usableFromInline
package struct RetryWait: Sendable {
  /// The delay to sleep first; zero for none.
  package var delay: Duration
  /// The hook to run after the delay.
  package var hook: (@Sendable () async throws -> Void)?
}

/// Sleeps `delay` on `clock`: `Clock.sleep(for:)`, which it is, without that function's frame
/// and executor switch.
@inline(__always)
nonisolated(nonsending) private func sleep<C: Clock<Duration>>(
  on clock: C, for delay: Duration
) async throws {
  try await clock.sleep(until: deadline(on: clock, after: delay), tolerance: nil)
}

/// `clock.now.advanced(by: delay)`, out of line: in the async caller, each instant of a
/// clock's unknown type costs a task allocation, and this way only the deadline needs one.
@inline(never)
private func deadline<C: Clock<Duration>>(on clock: C, after delay: Duration) -> C.Instant {
  clock.now.advanced(by: delay)
}

/// The time on `clock` since `start`, an instant `clock` gave; zero for an instant of another
/// clock, which the driver never passes.
private func duration<C: Clock<Duration>>(
  since start: any InstantProtocol<Duration>, on clock: C
) -> Duration {
  guard let start = start as? C.Instant else { return .zero }
  return start.duration(to: clock.now)
}

// MARK: - Attempts under `timeout`

/// The caller's operation, carried into the child task that runs one attempt under `timeout`.
///
/// Unchecked, because the operation need not be `Sendable`. It is sound: the operation is
/// never called concurrently with itself or with its caller. The caller is suspended awaiting
/// the attempt, and the attempt's child task is awaited to its end, even after a timeout,
/// before the run goes on; an actor-isolated operation still runs on its actor.
struct UncheckedOperation<Success>: @unchecked Sendable {
  let call: () async throws -> Success
}

/// A result handed from the attempt's child task to the awaiting caller, exactly once.
struct UncheckedValue<Value>: @unchecked Sendable {
  let value: Value
}

private enum AttemptEvent<Success>: Sendable {
  case completed(Result<UncheckedValue<Success>, any Error>)
  case timerFired
  case timerStopped
}

extension CompiledPolicy {
  /// Runs one attempt, cut off after `attemptTimeout` when the policy has one.
  nonisolated(nonsending) func attempt<Success>(
    on clock: any Clock<Duration>,
    _ operation: () async throws -> Success
  ) async throws -> Success {
    guard let limit = attemptTimeout else { return try await operation() }
    let body:
      nonisolated(nonsending) (@escaping () async throws -> Success) async throws -> Success =
        { escapable in
          try await runAttempt(UncheckedOperation(call: escapable), limit: limit, clock: clock)
        }
    return try await withoutActuallyEscaping(operation, do: body)
  }
}

/// Runs the operation in a child task beside a timer; when the timer fires first, cancels the
/// operation, waits for it to return, and throws ``AttemptTimeoutError``.
private func runAttempt<Success>(
  _ operation: UncheckedOperation<Success>, limit: Duration, clock: any Clock<Duration>
) async throws -> Success {
  let result = await withTaskGroup(of: AttemptEvent<Success>.self) { group in
    group.addTask {
      do {
        return .completed(.success(UncheckedValue(value: try await operation.call())))
      } catch {
        return .completed(.failure(error))
      }
    }
    group.addTask {
      do {
        try await clock.sleep(for: limit)
        return .timerFired
      } catch {
        return .timerStopped
      }
    }
    var hasTimedOut = false
    while let event = await group.next() {
      switch event {
      case .completed(let result):
        group.cancelAll()
        return hasTimedOut ? .failure(AttemptTimeoutError(timeout: limit)) : result
      case .timerFired:
        hasTimedOut = true
        group.cancelAll()
      case .timerStopped:
        continue
      }
    }
    return .failure(hasTimedOut ? AttemptTimeoutError(timeout: limit) : CancellationError())
  }
  return try result.get().value
}
