/// The driver of one run, which performs what ``RetryStateMachine`` decides.
///
/// It waits on the clock, runs hooks, draws on the budget and reports events. `run` opens the
/// environment's clock once and drives the run over the concrete clock: the waits are generic
/// over it, and the run's start is kept in a ``Stopwatch`` of that clock, so instants are
/// never cast. Retrying sequences share it. Its own layout does not depend on the clock, so
/// that the driver loop's frame has a fixed size.
///
/// Events come in this order (the guide states it): for each attempt `attemptStarted`; if it
/// fails, `attemptFailed`, then `gaveUp` or `retryScheduled`; a scheduled retry is followed by
/// the next `attemptStarted`, or by `gaveUp` when the wait is cancelled, the hook fails, the
/// deadline passes during the wait or the hook, or the budget is empty when the retry's
/// attempt would start. Last, `finished`.
@usableFromInline
package struct RetryRun: Sendable {
  /// This run's own copy of the environment's random source.
  var random: RandomSource
  /// The decisions so far; it also holds the policy's rules and deadline.
  package private(set) var machine: RetryStateMachine
  /// The budget this run draws on, when the policy has `budget P%`.
  private let budget: RetryBudget?
  /// The policy's budget ratio, deposited by the first attempt.
  private let budgetRatio: Double
  /// The circuit breaker each attempt asks first, when the policy has `breaker`.
  var circuit: RunCircuit?
  // The flags sit in the padding after `circuit`: every byte of the run is a byte of the
  // driver's frame, which a run waiting for its retry holds (see `ContinuousRunClock`).
  /// Whether the next attempt is the first of its run, which deposits into the budget
  /// instead of withdrawing.
  private var isFirstOfEpisode: Bool
  /// Whether ``recorder`` is set (by `record(into:policy:timingSince:)`): a plain flag, read
  /// on every attempt, where the check of the optional's payload is a call.
  var isRecording = false
  /// Which stages the policy has, so that a run of a policy with none of them (the common
  /// `retry N …`) asks none: each flag is set when the policy has the clause, whether or not
  /// the run found its shared object (the checks of the objects themselves stay).
  private let stages: Stages
  /// Retries in a row that neither waited nor ran a hook: every ``yieldInterval``-th yields.
  ///
  /// One byte beside the flags, wrapping at 256, a multiple of the interval.
  private var retriesWithoutSuspending: UInt8 = 0
  /// The throttle, rate and limit each attempt asks after the breaker, when the policy has
  /// them.
  var shedding: RunShedding?
  /// When the run started, on the run's clock; kept only when `within` or an observer needs
  /// the elapsed time, so that other runs never read the clock.
  var stopwatch: (any RunStopwatch)?
  /// When the current episode of a sequence started, as the time since the run started:
  /// `within` counts from it, the summary's `elapsed` from the run's start.
  private var episodeStart: Duration = .zeroInline
  /// The error of the last failed attempt, while a retry is scheduled: what the run throws
  /// when the retry's attempt cannot start.
  private(set) var pendingError: (any Error)?
  /// The time actually spent waiting the policy's delays (saturating).
  package internal(set) var totalDelay: Duration = .zeroInline
  /// Why this run may make no retry, when it may not (RetryPolicyHTTP's `notIdempotent`: a
  /// request it may not send twice): a failure a rule would retry then ends the run as
  /// `retriesRefused`, after the breaker and the budget counted it as any failure.
  package var retryRefusal: RetryRefusal? {
    get { refusal?.value }
    set { refusal = newValue.map(RefusalBox.init) }
  }
  /// ``retryRefusal``, behind one reference: set only by RetryPolicyHTTP, it takes 8 bytes of
  /// the run instead of 32.
  private var refusal: RefusalBox?
  /// The run's side of the environment's ``RetryMetrics``, if it has one.
  var recorder: RunRecorder?

  /// How often a run of retries that never suspend yields its thread: every 4th such retry.
  package static var yieldInterval: Int { 4 }

  /// Starts a run in `environment` on `clock`, its opened clock; `attempts` counts attempts
  /// already made (1 after a failed fast path, whose deposit there is no budget to make);
  /// `recordingCounters`, the counters of the policy's name when `run` already found them.
  @inlinable
  @inline(__always)
  package init<C: Clock<Duration>>(
    policy: borrowing CompiledPolicy, environment: borrowing RetryEnvironment, clock: C,
    attempts: Int = 0, permit: CircuitBreakerStateMachine.Permit = .normal,
    startedAt start: C.Instant? = nil, recordingSince recordingStart: UInt64? = nil,
    into recordingCounters: PolicyCounters? = nil
  ) {
    // The parts the run needs, passed one by one: copying the whole environment into `init`
    // costs a copy and a destruction of all of it per run.
    // (Not `||`: its autoclosure would consume the borrowed environment.)
    let isObserved = environment.isObserved
    // Metrics on the continuous clock time the run themselves (``MetricsTime``), from
    // `recordingStart` when `run` made the first attempt itself.
    let isContinuousClock = environment.isContinuousClock
    var isTimed = policy.deadline != nil
    if environment.observer != nil { isTimed = true }
    self.init(policy: policy, sharing: environment, attempts: attempts, permit: permit)
    if let metrics = environment.metrics {
      if !isContinuousClock { isTimed = true }
      record(
        into: metrics, policy: policy,
        timingSince: isContinuousClock ? recordingStart ?? MetricsTime.now() : nil,
        counters: recordingCounters)
    }
    if policy.rate != nil { bindRate(to: clock) }
    // `run` and `retrying` never race attempts (their operation need not be `Sendable`):
    // a hedged policy says so rather than dropping `hedge` silently.
    if isObserved, let hedge = policy.hedge { Self.reportNotHedging(hedge, in: environment) }
    // `start`: the first attempt, made by `run` itself, started then (and was counted).
    if isTimed { startStopwatch(on: clock, at: start) }
  }

  /// Starts a run that never reads a clock: a driver on its own virtual time (the storm
  /// simulator) passes the elapsed time to ``startAttempt(in:elapsed:)`` and
  /// ``decideRetry(after:in:elapsed:)``.
  @usableFromInline
  package init(
    policy: borrowing CompiledPolicy, random: any RandomNumberGenerator & Sendable,
    budget: RetryBudget?, breaker: CircuitBreaker? = nil, attempts: Int = 0,
    permit: CircuitBreakerStateMachine.Permit = .normal, asksShedding: Bool = true
  ) {
    self.random = RandomSource(base: random)
    self.machine = RetryStateMachine(policy: policy, attempts: attempts)
    self.stages = Stages(policy: policy).union(budget == nil ? [] : .budget)
    self.budget = budget
    self.budgetRatio = policy.budgetRatio ?? 0
    if let breaker, let clause = policy.breaker {
      self.circuit = RunCircuit(breaker: breaker, policy: clause, permit: permit)
    }
    // The storm simulator keeps each client's shedding state itself (`asksShedding` false).
    self.shedding =
      asksShedding
      ? RunShedding(
        policy: policy,
        state: RetryStateRegistry.processWide.state(for: policy, clock: ContinuousClock()))
      : nil
    self.isFirstOfEpisode = attempts == 0
    self.stopwatch = nil
  }

  /// The attempts started so far.
  @usableFromInline
  package var attempts: Int { machine.attempts }

  /// Whether the circuit breaker refused an attempt of this run (which then ended).
  package var wasRefused: Bool { circuit?.wasRefused ?? false }

  /// Starts the next attempt, or throws what the run throws when it may not start.
  ///
  /// A retry's attempt may not start past the `within` deadline (a long hook, or a late wake,
  /// can bring it there), nor without a budget token, which it withdraws here: a run that
  /// ends during its wait spends nothing. The first attempt deposits into the budget.
  ///
  /// Every method takes the run's environment, the one it started with, which the run borrows
  /// instead of keeping a copy. `elapsed`, when given, is the time since the run started on
  /// the caller's virtual time, instead of the run's stopwatch.
  ///
  /// It returns nil once the attempt started, else what it waits for first (a token of
  /// `rate`, a slot in line): the driver then calls ``admit(after:in:on:)``.
  @usableFromInline
  package mutating func startAttempt(
    in environment: borrowing RetryEnvironment, elapsed given: Duration? = nil
  ) throws -> AdmissionWait? {
    try admit(from: 0, in: environment, elapsed: given)
  }

  /// Asks the stages from index `first` of ``RunStage/beforeAttempt``, then starts the attempt.
  mutating func admit(
    from first: Int, in environment: borrowing RetryEnvironment, elapsed given: Duration?
  ) throws -> AdmissionWait? {
    // The stages in their documented order (``RunStage/beforeAttempt``): the first refusal
    // ends the run, and a stage that spends comes after every stage that may refuse.
    var index = stages.isEmpty ? RunStage.beforeAttempt.count : first
    while index < RunStage.beforeAttempt.count {
      let stage = RunStage.beforeAttempt[index]
      index += 1
      switch stage {
      case .deadline:
        if let error = pendingError, let deadline = machine.deadline,
          (given ?? Self.elapsed(stopwatch, since: episodeStart)) > deadline
        {
          throw stop(.deadlineExceeded, error, in: environment, elapsed: given)
        }
      case .breaker:
        if circuit != nil,
          let refusal = circuit?.admit(attempt: machine.attempts + 1, in: environment)
        {
          // The first attempt throws the circuit's error, a later one the last error.
          throw stop(.circuitOpen, pendingError ?? refusal, in: environment, elapsed: given)
        }
      case .throttle:
        if shedding != nil,
          let refusal = shedding?.admitThrottle(drawingFrom: &random)
        {
          throw refuse(.throttled, refusal, in: environment, elapsed: given)
        }
      case .rate, .limit:
        // Each may make the attempt wait (``admit(after:in:on:)``) or refuse it.
        if shedding != nil,
          let wait = try admitShedding(stage, next: index, in: environment, elapsed: given)
        {
          if isRecording { recorder?.willWait() }
          return wait
        }
      case .budget:
        if let error = pendingError, let budget, !isFirstOfEpisode, !budget.withdrawForRetry() {
          circuit?.failed(attempt: machine.attempts + 1, counts: false, in: environment)
          _ = shedding?.release(isMeasured: false)
          throw stop(.budgetExhausted, error, in: environment, elapsed: given)
        }
      case .attemptTimeout, .hedge, .rules:
        // Asked by the driver around the attempt, and after it failed.
        continue
      }
    }
    pendingError = nil
    if isFirstOfEpisode {
      budget?.recordFirstAttempt(ratio: budgetRatio)
      isFirstOfEpisode = false
    }
    machine.attemptStarted()
    if isRecording {
      // A retry's attempt that starts at once starts when the failure was recorded.
      let now = recorder?.retryStart(given) ?? Self.recordingTime(given, recorder, stopwatch)
      recorder?.attemptStarted(at: now)
    }
    environment.report(.attemptStarted(attempt: machine.attempts))
    return nil
  }

  /// Reports that the last attempt succeeded and the run is over.
  @usableFromInline
  package mutating func finishSucceeded(
    in environment: borrowing RetryEnvironment, elapsed given: Duration? = nil
  ) {
    if stages.contains(.breaker) { circuit?.succeeded(attempt: machine.attempts, in: environment) }
    if stages.contains(.shedding), shedding != nil {
      releaseShedding(isMeasured: true, isAccept: true, in: environment)
    }
    finish(.succeeded, in: environment, elapsed: given)
  }

  /// Reports that the attempt under way delivered (a sequence's first element): a success
  /// for the breaker, which releases a probe; the run goes on.
  package mutating func attemptDelivered(in environment: borrowing RetryEnvironment) {
    circuit?.succeeded(attempt: machine.attempts, in: environment)
  }

  /// Releases what the attempt under way holds when the run ends without its result (an
  /// abandoned sequence): a half-open circuit's probe.
  package mutating func abandon() {
    circuit?.release()
  }

  /// Handles a failed attempt: returns when the next attempt may start (after the delay and
  /// the hook), or throws what the run throws.
  ///
  /// It runs on the caller's executor (`nonisolated(nonsending)`): only the clock's sleep and
  /// a hook may run elsewhere.
  nonisolated(nonsending) package mutating func recover<C: Clock<Duration>>(
    from error: any Error, in environment: RetryEnvironment, on clock: C
  ) async throws {
    if let wait = try decideRetry(after: error, in: environment) {
      try await perform(wait, after: error, in: environment, on: clock)
    }
  }

  /// Starts a new episode of a long-lived sequence: a fresh count for every rule, a fresh
  /// `within` window, and a first attempt that deposits into the budget.
  package mutating func startEpisode() {
    machine.restart()
    // The subscription that delivered counts as the episode's first attempt.
    budget?.recordFirstAttempt(ratio: budgetRatio)
    episodeStart = elapsed()
  }

  /// What comes before the wait of a retry, all synchronous: returns nil when the next
  /// attempt may start at once, the wait to perform first otherwise, or throws what the run
  /// throws.
  ///
  /// Reports the failure, asks the state machine (which stops a cancelled task), finds the
  /// hook, checks that the budget has a token (it is withdrawn when the retry's attempt
  /// starts) and reports the retry. Cancellation is checked once, before the decision: a
  /// retry that does not suspend starts the next attempt at once, and ``perform(_:after:in:)``
  /// checks again after a wait. `elapsed`, when given, replaces the stopwatch's reading, as
  /// in ``startAttempt(in:elapsed:)``.
  @usableFromInline
  package mutating func decideRetry(
    after error: any Error, in environment: borrowing RetryEnvironment,
    elapsed given: Duration? = nil
  ) throws -> RetryWait? {
    if isRecording {
      let now = Self.recordingTime(given, recorder, stopwatch)
      recorder?.attemptFailed(at: now)
    }
    environment.report(.attemptFailed(attempt: machine.attempts, error: error))
    let classification = ErrorClassification(error, predicates: environment.errorClasses)
    // Only `within` reads the elapsed time here; without it, the clock is not read.
    let elapsed =
      machine.deadline == nil
      ? Duration.zeroInline : given ?? Self.elapsed(stopwatch, since: episodeStart)
    let action = machine.attemptFailed(
      classification, isTaskCancelled: Task.isCancelled, elapsed: elapsed, using: &random)
    if stages.contains(.shedding), shedding != nil {
      let isCancelled = action == .giveUp(.cancelled)
      releaseShedding(
        isMeasured: !isCancelled, isAccept: action == .giveUp(.errorNotMatched),
        in: environment)
    }
    if stages.contains(.breaker), circuit != nil {
      // A failure for the breaker is an error a rule matches, and an attempt the policy's
      // own `timeout` cut off; cancellation and an error no rule matches are neither.
      let counts: Bool
      switch action {
      case .giveUp(.cancelled): counts = false
      case .giveUp(.errorNotMatched): counts = AttemptTimeoutError.isOwnCutOff(error)
      case .giveUp, .retry: counts = true
      }
      let opened =
        circuit?.failed(attempt: machine.attempts, counts: counts, in: environment) ?? false
      // A run whose own failure opened the circuit ends at once: it never waits out a
      // delay before a retry the circuit would refuse.
      if opened, case .retry = action {
        throw stop(.circuitOpen, error, in: environment, elapsed: given)
      }
    }
    if let retryRefusal = refusal?.value, case .retry = action {
      throw stop(.retriesRefused(retryRefusal), error, in: environment, elapsed: given)
    }
    switch action {
    case .giveUp(let reason):
      throw stop(reason, error, in: environment, elapsed: given)
    case .retry(let index, let delay):
      var hook: (@Sendable (RetryHookContext) async throws -> Void)?
      if let name = machine.hookName(ofRule: index) {
        hook = environment.hooks[name]
        if hook == nil {
          throw stop(
            .hookFailed, UnregisteredHookError(name: name), in: environment, elapsed: given)
        }
      }
      if let budget, !isFirstOfEpisode, !budget.hasToken {
        throw stop(.budgetExhausted, error, in: environment, elapsed: given)
      }
      environment.report(.retryScheduled(attempt: machine.attempts, rule: index, delay: delay))
      // Kept only for the checks at the attempt's start, which only `within` and a budget make.
      if stages.keepsPendingError { pendingError = error }
      guard delay.isPositive || hook != nil else {
        retriesWithoutSuspending &+= 1
        guard Int(retriesWithoutSuspending) % Self.yieldInterval == 0 else { return nil }
        if isRecording { recorder?.willWait() }
        return RetryWait(delay: delay, hook: nil)
      }
      retriesWithoutSuspending = 0
      // The next attempt's start is read after the wait (see ``RunRecorder``).
      if isRecording { recorder?.willWait() }
      return RetryWait(delay: delay, hook: hook)
    }
  }

  /// Sleeps the wait's delay on the clock, then runs its hook (a wait with neither yields
  /// the thread); throws as ``recover(from:in:)`` says, and `CancellationError` when the task
  /// is cancelled by the end of the wait.
  ///
  /// Inlined into the driver. A delay without a hook on the continuous and suspending clocks
  /// is ``waitOnTimer(_:after:in:)``, which is not generic; every other wait is
  /// ``performOnClock(_:after:in:on:)``, specialized for the run's clock where the driver is
  /// (unspecialized, each instant of an unknown clock type costs a task allocation and a
  /// metadata lookup).
  @inlinable
  @inline(__always)
  nonisolated(nonsending) package mutating func perform<C: Clock<Duration>>(
    _ wait: RetryWait, after error: any Error, in environment: RetryEnvironment, on clock: C
  ) async throws {
    if isSystemClock(C.self), wait.hook == nil, wait.delay.isPositive {
      try await waitOnTimer(wait.delay, after: error, in: environment)
    } else {
      try await performOnClock(wait, after: error, in: environment, on: clock)
    }
  }

  /// ``perform(_:after:in:on:)`` on any other clock, which waits with its own `sleep`.
  ///
  /// Never inlined: its instants and its hook would take room in the driver's frame, which a
  /// run waiting on the timer heap holds.
  @inlinable
  @inline(never)
  nonisolated(nonsending) package mutating func performOnClock<C: Clock<Duration>>(
    _ wait: RetryWait, after error: any Error, in environment: RetryEnvironment, on clock: C
  ) async throws {
    if wait.delay.isPositive {
      let deadline = clock.now.advanced(by: wait.delay)
      do {
        try await sleepFreeingOnCancel(until: deadline, on: clock)
        addWaited(wait.delay)
      } catch {
        let remaining = clock.now.duration(to: deadline)
        addWaited(wait.delay, remaining: remaining)
        throw stop(.cancelled, error, in: environment)
      }
    } else if wait.hook == nil {
      await Task.yield()
    }
    if let hook = wait.hook { try await run(hook, after: error, in: environment) }
    if Task.isCancelled { throw stop(.cancelled, error, in: environment) }
  }

  /// Reports the end of a run for `reason`, and gives the error to throw: cancellation always
  /// throws a `CancellationError`.
  @usableFromInline
  mutating func stop(
    _ reason: RetryStopReason, _ error: any Error, in environment: borrowing RetryEnvironment,
    elapsed given: Duration? = nil
  ) -> any Error {
    // However the run ends, the attempt under way no longer holds the circuit's probe.
    if stages.contains(.breaker) { circuit?.release() }
    let thrown: any Error =
      reason == .cancelled && !(error is CancellationError)
      ? CancellationError() : AttemptTimeoutError.leavingRun(error)
    if isRecording { recorder?.gaveUp(reason) }
    environment.report(.gaveUp(attempt: machine.attempts, reason: reason, error: thrown))
    finish(.failed(reason), in: environment, elapsed: given)
    return thrown
  }

  private mutating func finish(
    _ outcome: RetryOutcome, in environment: borrowing RetryEnvironment,
    elapsed given: Duration? = nil
  ) {
    if isRecording {
      let now = Self.recordingTime(given, recorder, stopwatch)
      recorder?.finished(outcome, at: now)
    }
    guard environment.observer != nil else { return }
    let summary = RetrySummary(
      attempts: machine.attempts, totalDelay: totalDelay, elapsed: given ?? elapsed(),
      outcome: outcome)
    environment.report(.finished(summary))
  }

  /// The time since the run's first attempt, or zero when nothing needs it (see
  /// ``stopwatch``): the summary's `elapsed`, across a sequence's episodes.
  private func elapsed() -> Duration {
    stopwatch?.elapsed() ?? .zeroInline
  }

  /// The time since the current episode started (the run's start for `run`), which `within`
  /// counts from.
  func episodeElapsed() -> Duration {
    Self.elapsed(stopwatch, since: episodeStart)
  }
}
