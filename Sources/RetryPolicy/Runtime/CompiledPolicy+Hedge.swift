// Hedged runs (`hedge N after D`): concurrent attempts in a task group.
//
// A separate path from `run`, whose attempts never overlap and whose operation need not be
// `Sendable`: `run`'s fast path is untouched by hedging. Decisions stay with
// `RetryStateMachine` (which failures a rule retries, `within`); this driver only adds the
// hedge timer, the cap of 1 + N attempts, the budget withdrawal of each extra attempt, and the
// waits of an attempt for its token of `rate` or its place in line (`HedgeDriver+Shedding`).

extension CompiledPolicy {
  /// Runs `operation` with hedging: concurrent attempts, the first success wins.
  ///
  /// With `hedge N after D`, the first attempt starts at once; while no attempt has
  /// finished, another starts every D, up to N extra (N + 1 attempts in all). A failure that
  /// a rule would retry starts the next attempt at once (its rule's count still applies). The
  /// first success is returned and the other attempts are cancelled; a failure that no rule
  /// retries (or cancellation) cancels the others and is thrown; when every attempt has
  /// failed, the last error is thrown, the run's reason naming what refused the next attempt:
  /// ``RetryStopReason/hedgeLimitReached`` (all N + 1 had started), `budgetExhausted`,
  /// `deadlineExceeded`, or `retriesExhausted` when the rule's count ran out. Every extra attempt draws on the `budget`, and none
  /// starts past `within`; `timeout` limits each attempt. Each attempt asks the breaker,
  /// `throttle`, `rate` and `limit` in the order every run does (<doc:TheRunPipeline>): one
  /// they refuse is reported and spends no budget token (a refused first attempt throws the
  /// stage's error, a later refusal that leaves nothing in flight ends the run with the last
  /// error), and one that waits for its token or its place in line starts when it comes. The
  /// run returns only after every attempt it started has returned, so nothing runs after it;
  /// cancelling the caller cancels every attempt.
  ///
  /// Without `hedge`, this is `run(in:)` with the attempt.
  ///
  ///     let policy = try compile(policy: "retry 2 on unavailable hedge 2 after 100ms")
  ///     let quote = try await policy.runHedged { attempt in try await pricing.quote() }
  ///
  /// - Parameters:
  ///   - environment: The clock, random source, error classes, observer and budget.
  ///   - operation: The work to attempt, given its attempt; attempts may overlap.
  /// - Returns: The value of the first attempt that succeeds.
  public func runHedged<Success: Sendable>(
    in environment: RetryEnvironment = RetryEnvironment(),
    _ operation: @escaping @Sendable (RetryAttempt) async throws -> Success
  ) async throws -> Success {
    guard let hedge else {
      return try await run(in: environment) { attempt in try await operation(attempt) }
    }
    return try await runHedged(
      on: environment.clock, hedge: hedge, in: environment, operation)
  }

  /// Runs `operation` with hedging: concurrent attempts, the first success wins.
  ///
  /// Everything ``runHedged(in:_:)-(_,(RetryAttempt)->Success)`` says holds; the operation
  /// is not told its attempt.
  ///
  ///     let policy = try compile(policy: "retry 2 on unavailable hedge 2 after 100ms")
  ///     let quote = try await policy.runHedged { try await pricing.quote() }
  ///
  /// - Parameters:
  ///   - environment: The clock, random source, error classes, observer and budget.
  ///   - operation: The work to attempt; attempts may overlap.
  /// - Returns: The value of the first attempt that succeeds.
  public func runHedged<Success: Sendable>(
    in environment: RetryEnvironment = RetryEnvironment(),
    _ operation: @escaping @Sendable () async throws -> Success
  ) async throws -> Success {
    try await runHedged(in: environment) { (_: RetryAttempt) in try await operation() }
  }

  private func runHedged<C: Clock<Duration>, Success: Sendable>(
    on clock: C, hedge: HedgePolicy, in environment: RetryEnvironment,
    _ operation: @escaping @Sendable (RetryAttempt) async throws -> Success
  ) async throws -> Success {
    var driver = HedgeDriver(policy: self, hedge: hedge, environment: environment, clock: clock)
    let limit = attemptTimeout
    let name = environment.observer != nil ? metricsName : nil
    let result = await withTaskGroup(of: HedgeEvent<Success>.self) { group in
      /// Asks the stages from index `stage` of ``RunStage/beforeAttempt`` and starts an
      /// attempt; returns why it may not start instead (the breaker, `throttle`, `rate` or
      /// `limit` refused it, or an extra attempt found no budget token). An attempt that waits
      /// for its token or its place in line waits in a child task, whose event resumes it.
      func start(from stage: Int = 0) -> RetryStopReason? {
        if stage == 0, driver.isWaitingForAdmission { return nil }
        switch driver.admit(from: stage) {
        case .refused(let reason):
          return reason
        case .wait(let wait):
          let shedding = driver.shedding
          let deadline = driver.remainingWithin.map { clock.now.advanced(by: $0) }
          group.addTask {
            .admission(await shedding?.admissionWait(wait, until: deadline, on: clock))
          }
          return nil
        case .admitted:
          break
        }
        let number = driver.attemptStarted()
        group.addTask {
          do {
            let attempt = RetryAttempt(number: number)
            @Sendable func make() async throws -> Success {
              guard let limit else { return try await operation(attempt) }
              return try await timingOut(on: clock, limit: limit) { try await operation(attempt) }
            }
            // Only an observed run tells the operation its attempt (see `run(in:)`).
            guard let name else { return .finished(number, .success(try await make())) }
            let value = try await RetryContext.$current.withValue(
              RetryContext(policy: name, attempt: number), operation: make)
            return .finished(number, .success(value))
          } catch {
            return .finished(number, .failure(error))
          }
        }
        guard driver.mayHedgeLater else { return nil }
        let generation = driver.generation
        group.addTask {
          do {
            try await sleepFreeingOnCancel(for: hedge.delay, on: clock)
            return .timerFired(generation: generation)
          } catch {
            return .timerStopped
          }
        }
        return nil
      }
      /// Ends the run for `reason` when nothing is in flight or waiting: the first attempt
      /// throws what refused it, a later one the last error.
      func stopIfIdle(_ reason: RetryStopReason) -> Result<Success, any Error>? {
        guard driver.inFlight == 0, !driver.isWaitingForAdmission else { return nil }
        let error: any Error =
          reason == .cancelled
          ? CancellationError()
          : driver.lastError ?? driver.refusal ?? CircuitOpenError(remaining: nil)
        return .failure(driver.stop(reason, error, driver.started))
      }
      /// Handles a child task's event; returns the run's result when it ends the run.
      func handle(_ event: HedgeEvent<Success>) -> Result<Success, any Error>? {
        switch event {
        case .finished(let number, .success(let value)):
          driver.attemptSucceeded(number)
          driver.finish(.succeeded)
          return .success(value)
        case .finished(let number, .failure(let error)):
          switch driver.attemptFailed(number, error) {
          case .startNext:
            if let reason = start(), driver.inFlight == 0, !driver.isWaitingForAdmission {
              return .failure(driver.stop(reason, error, number))
            }
          case .wait: break
          case .stop(let thrown): return .failure(thrown)
          }
        case .timerFired(let generation):
          if driver.mayStartOnTimer(generation: generation) { _ = start() }
        case .timerStopped:
          break
        case .admission(let outcome?):
          switch driver.admissionEnded(outcome) {
          case .from(let stage):
            if let reason = start(from: stage) { return stopIfIdle(reason) }
          case .refused(let reason):
            return stopIfIdle(reason)
          }
        case .admission(nil):
          break
        }
        return nil
      }
      var outcome: Result<Success, any Error>?
      if let reason = start() { outcome = stopIfIdle(reason) }
      while outcome == nil, let event = await group.next() { outcome = handle(event) }
      group.cancelAll()
      // Attempts cancelled when the run ends never report: their permits and slots are
      // released, and the token of an attempt that waited for one is given back; a slot a
      // wait in line got as the run ended is given back as its event comes.
      driver.releasePermits()
      while let event = await group.next() {
        if case .admission(let outcome?) = event { driver.discard(outcome) }
      }
      // Unreachable without an outcome: an attempt is in flight until its event is handled.
      return outcome ?? .failure(driver.lastError ?? CancellationError())
    }
    return try result.get()
  }
}

/// What a hedged run's child task reports.
private enum HedgeEvent<Success: Sendable>: Sendable {
  /// Attempt `number` returned or threw.
  case finished(Int, Result<Success, any Error>)
  /// The hedge delay passed since the start that armed this timer.
  case timerFired(generation: Int)
  /// A timer was cancelled.
  case timerStopped
  /// An attempt's wait for its token or its place in line ended (nil: no shedding stage).
  case admission(HedgeAdmissionOutcome?)
}

/// The decisions of a hedged run: which attempt may start, and when the run ends.
///
/// It performs nothing but the budget's bookkeeping and the observer's events.
struct HedgeDriver<C: Clock<Duration>> {
  enum Action {
    case startNext
    case wait
    case stop(any Error)
  }

  let hedge: HedgePolicy
  let environment: RetryEnvironment
  let clock: C
  let start: C.Instant
  let budget: RetryBudget?
  let budgetRatio: Double
  var machine: RetryStateMachine
  var random: RandomSource
  /// Attempts started, and attempts started but not finished.
  var started = 0
  var inFlight = 0
  /// Bumped at each start: only the timer armed by the latest start may start the next.
  var generation = 0
  var lastError: (any Error)?
  /// The breaker each attempt asks first, for a policy with `breaker`, and its clause.
  let breaker: CircuitBreaker?
  let breakerPolicy: CircuitBreakerPolicy?
  /// The permit of each attempt in flight, by number, under a breaker.
  var permits: [Int: CircuitBreakerStateMachine.Permit] = [:]
  /// The permit of the attempt about to start.
  var nextPermit = CircuitBreakerStateMachine.Permit.normal
  /// The run's side of the environment's ``RetryMetrics``, if it has one.
  var recorder: HedgeRecorder?
  /// The throttle, rate and limit each attempt asks after the breaker, for a policy with them.
  var shedding: RunShedding?
  /// The slot of `limit` each attempt in flight holds, by number.
  var slots: [Int: ConcurrencyLimiter.Permit] = [:]
  /// Whether an attempt waits for its token of `rate` (taken, given back if it never starts).
  var pendingToken = false
  /// Whether an attempt waits for its place in the line of `limit N queue M`.
  var pendingSlot = false

  init(policy: CompiledPolicy, hedge: HedgePolicy, environment: RetryEnvironment, clock: C) {
    self.hedge = hedge
    self.environment = environment
    self.clock = clock
    self.start = clock.now
    self.budget = environment.budget(for: policy)
    self.budgetRatio = policy.budgetRatio ?? 0
    self.machine = RetryStateMachine(policy: policy)
    self.random = RandomSource(base: environment.random)
    self.breaker = environment.breaker(for: policy)
    self.breakerPolicy = policy.breaker
    self.recorder = environment.metrics.map {
      HedgeRecorder($0, policy: policy, breaker: breaker)
    }
    if policy.throttle != nil || policy.rate != nil || policy.limit != nil {
      shedding = RunShedding(policy: policy, state: environment.sharedState(for: policy))
      shedding?.bindRate(to: clock)
    }
  }

  /// The error of the last refusal: the breaker's, `throttle`'s, `rate`'s or `limit`'s.
  var refusal: (any Error)?

  /// Asks the stages from index `first` of ``RunStage/beforeAttempt`` whether the next
  /// attempt may start: the breaker, `throttle`, `rate` and `limit` (which may make it wait
  /// first), then the budget.
  ///
  /// For an extra attempt, the budget's token is withdrawn last; the first attempt deposits.
  /// A refused attempt neither spends nor earns a token.
  mutating func admit(from first: Int) -> HedgeAdmission {
    // The stages in their documented order (``RunStage/beforeAttempt``), as for `run`.
    var index = first
    while index < RunStage.beforeAttempt.count {
      let stage = RunStage.beforeAttempt[index]
      index += 1
      switch stage {
      case .deadline:
        if started > 0, let deadline = machine.deadline, elapsed >= deadline {
          return .refused(.deadlineExceeded)
        }
      case .breaker:
        guard let breaker else { continue }
        switch breaker.requestAttempt(on: environment.breakerClock) {
        case .admitted(let permit, let transition):
          nextPermit = permit
          if transition == .halfOpened {
            environment.report(.circuitHalfOpened(attempt: started + 1))
          }
        case .refused(let remaining):
          let left = remaining.map { Duration.nanoseconds($0) }
          environment.report(
            .attemptRefused(attempt: started + 1, remaining: left, cause: breaker.cause))
          refusal = CircuitOpenError(remaining: left)
          return .refused(.circuitOpen)
        }
      case .budget:
        guard started > 0 else {
          budget?.recordFirstAttempt(ratio: budgetRatio)
          continue
        }
        if let budget, !budget.withdrawForRetry() {
          breaker?.recordNeither(nextPermit)
          _ = shedding?.release(isMeasured: false)
          return .refused(.budgetExhausted)
        }
      case .throttle, .rate, .limit:
        if let admission = admitShedding(stage, next: index) { return admission }
      case .attemptTimeout, .hedge, .rules:
        // Asked around the attempt (its timer, the hedge timer) and after it failed.
        continue
      }
    }
    return .admitted
  }

  /// Tells the breaker attempt `number` succeeded.
  mutating func attemptSucceeded(_ number: Int) {
    endShedding(number, isMeasured: true, isAccept: true)
    if recorder != nil {
      let now = elapsed
      recorder?.attemptSucceeded(number, at: now)
    }
    guard let breaker, let breakerPolicy, let permit = permits.removeValue(forKey: number)
    else { return }
    if breaker.recordSuccess(permit, policy: breakerPolicy, on: environment.breakerClock) == .closed
    {
      environment.report(.circuitClosed(attempt: number))
    }
  }

  /// Releases the permits of the attempts still in flight when the run ends.
  mutating func releasePermits() {
    for permit in permits.values { breaker?.recordNeither(permit) }
    permits = [:]
    endShedding()
    // The attempts cancelled when the run ended count as failures.
    if recorder != nil {
      let now = elapsed
      recorder?.endUnfinished(at: now)
    }
  }

  var elapsed: Duration { start.duration(to: clock.now) }

  /// Whether an attempt after the current ones may still be started by the timer.
  var mayHedgeLater: Bool { started <= hedge.count }

  /// Counts a start and returns the attempt's number.
  mutating func attemptStarted() -> Int {
    started += 1
    inFlight += 1
    generation += 1
    if breaker != nil { permits[started] = nextPermit }
    if let slot = shedding?.takePermit() { slots[started] = slot }
    machine.attemptStarted()
    environment.report(.attemptStarted(attempt: started), recording: &recorder, at: elapsed)
    return started
  }

  /// Why an extra attempt may not start now, or nil when it may; its budget token is
  /// withdrawn when it starts, after the breaker admitted it.
  func refusalOfExtra() -> RetryStopReason? {
    if Task.isCancelled { return .cancelled }
    guard started <= hedge.count else { return .hedgeLimitReached }
    if let deadline = machine.deadline, elapsed >= deadline { return .deadlineExceeded }
    if let budget, !budget.hasToken { return .budgetExhausted }
    return nil
  }

  mutating func mayStartOnTimer(generation fired: Int) -> Bool {
    fired == generation && inFlight > 0 && !isWaitingForAdmission && refusalOfExtra() == nil
  }

  mutating func attemptFailed(_ number: Int, _ error: any Error) -> Action {
    inFlight -= 1
    lastError = error
    environment.report(
      .attemptFailed(attempt: number, error: error), recording: &recorder, at: elapsed)
    let classification = ErrorClassification(error, predicates: environment.errorClasses)
    let action = machine.attemptFailed(
      classification, isTaskCancelled: Task.isCancelled, elapsed: elapsed, using: &random)
    endShedding(
      number, isMeasured: action != .giveUp(.cancelled),
      isAccept: action == .giveUp(.errorNotMatched))
    if let breaker, let breakerPolicy, let permit = permits.removeValue(forKey: number) {
      switch action {
      case .giveUp(.cancelled):
        breaker.recordNeither(permit)
      case .giveUp(.errorNotMatched) where !AttemptTimeoutError.isOwnCutOff(error):
        breaker.recordNeither(permit)
      case .giveUp, .retry:
        if case .opened(let cause) = breaker.recordFailure(
          permit, policy: breakerPolicy, on: environment.breakerClock)
        {
          environment.report(.circuitOpened(attempt: number, cause: cause))
        }
      }
    }
    switch action {
    case .retry(let rule, _):
      // A rule would retry: the reason to stop, if the last attempt has failed, is what
      // refuses the next one (the hedge count, `within`, the budget), never the rule.
      guard let refusal = refusalOfExtra() else {
        environment.report(.retryScheduled(attempt: number, rule: rule, delay: .zero))
        return .startNext
      }
      if refusal == .cancelled { return .stop(stop(.cancelled, CancellationError(), number)) }
      return inFlight == 0 ? .stop(stop(refusal, error, number)) : .wait
    case .giveUp(.cancelled):
      return .stop(stop(.cancelled, CancellationError(), number))
    case .giveUp(.errorNotMatched):
      return .stop(stop(.errorNotMatched, error, number))
    case .giveUp(let reason):
      return inFlight == 0 ? .stop(stop(reason, error, number)) : .wait
    }
  }

  mutating func stop(_ reason: RetryStopReason, _ error: any Error, _ number: Int) -> any Error {
    let error = AttemptTimeoutError.leavingRun(error)
    environment.report(
      .gaveUp(attempt: number, reason: reason, error: error), recording: &recorder, at: elapsed)
    finish(.failed(reason))
    return error
  }

  mutating func finish(_ outcome: RetryOutcome) {
    let elapsed = elapsed
    environment.report(
      .finished(
        RetrySummary(attempts: started, totalDelay: .zero, elapsed: elapsed, outcome: outcome)),
      recording: &recorder, at: elapsed)
  }
}
