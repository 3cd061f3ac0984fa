extension CompiledPolicy {
  /// Runs `operation`, retrying it as the policy says, and returns its first success.
  ///
  /// Each attempt calls `operation` afresh. An error goes to the first rule whose `on` list
  /// names it; when none does, to the first rule without `on` (which takes any error but
  /// cancellation); `except` leaves errors to the other rules. Each rule counts its own
  /// retries. When the error matches no rule, when
  /// its rule has no retries left, when the next delay would end past `within`, or when the
  /// shared `budget` is empty, `run` throws the last error unchanged.
  ///
  ///     let policy = try compile(policy: "retry 5 on serverError backoff 1s x1.5 jitter 10%")
  ///     let user = try await policy.run { try await client.fetchUser(id) }
  ///
  /// Cancellation: the first attempt always starts; after that, a cancelled task stops waiting
  /// at once, never starts another attempt, and `run` throws `CancellationError`.
  ///
  /// Attempts never overlap here, so `hedge N after D` is not applied: a hedged policy runs
  /// its attempts one after another, and an observed run says so first with
  /// ``RetryEvent/hedgeNotApplied(_:)``. `runHedged`, which takes a `@Sendable` operation,
  /// races them. (An overload of `run` taking a `@Sendable` closure cannot tell them apart:
  /// Swift prefers it for every closure literal, and a closure that captures a mutable local
  /// or an actor's state would then no longer compile.)
  ///
  /// Errors match a class name when the host registered it with a predicate (see
  /// ``RetryEnvironment``), when it is the error's type name (`URLError`), or when the error is
  /// an enum value with that case name (`APIError.serverError(code: 503)` is a `serverError`).
  ///
  /// This form waits on the continuous clock with system random jitter and no registered
  /// names or hooks; ``run(in:isolation:_:)-(_,_,()->Success)`` takes all of those. When the policy has neither
  /// `timeout`, `within` nor `budget`, the first attempt is a plain call of `operation`: a
  /// success costs no allocation.
  ///
  /// - Parameters:
  ///   - isolation: The caller's actor, which runs `operation`; leave the default.
  ///   - operation: The work to attempt. It need not be `Sendable`: attempts never overlap.
  /// - Returns: The value of the first attempt that succeeds.
  @inlinable
  public func run<Success>(
    isolation: isolated (any Actor)? = #isolation,
    _ operation: () async throws -> Success
  ) async throws -> Success {
    try await run(in: .standard, isolation: isolation, operation)
  }

  /// Runs `operation` in `environment`, retrying it as the policy says, and returns its first
  /// success.
  ///
  /// Everything ``run(isolation:_:)-(_,()->Success)`` says holds; the environment supplies the clock that
  /// every delay and `timeout` uses, the random source of jitter, the error classes and the
  /// hooks the policy names, and an observer of the run's events.
  ///
  ///     let environment = RetryEnvironment(
  ///       hooks: ["refreshToken": { try await auth.refresh() }])
  ///     let policy = try compile(policy: "retry 1 on unauthorized after refreshToken")
  ///     let profile = try await policy.run(in: environment) { try await api.profile() }
  ///
  /// With `timeout`, each attempt runs in a child task, cancelled when the limit passes; the
  /// run then waits for the operation to return. A value it returns is the run's value, even
  /// after the limit (a late success is a success); an error counts as
  /// ``AttemptTimeoutError`` (class `timeout`). An operation that ignores cancellation
  /// therefore holds the run up until it returns.
  ///
  /// - Parameters:
  ///   - environment: The clock, random source, error classes, hooks and observer.
  ///   - isolation: The caller's actor, which runs `operation`; leave the default.
  ///   - operation: The work to attempt. It need not be `Sendable`: attempts never overlap.
  /// - Returns: The value of the first attempt that succeeds.
  @inlinable
  public func run<Success>(
    in environment: RetryEnvironment,
    isolation: isolated (any Actor)? = #isolation,
    _ operation: () async throws -> Success
  ) async throws -> Success {
    guard attemptTimeout == nil else {
      return try await runTimingOut(in: environment, isolation: isolation, operation)
    }
    let firstFailure: (any Error)?
    var permit = CircuitBreakerStateMachine.Permit.normal
    if deadline == nil, budgetRatio == nil, limit == nil, throttle == nil, rate == nil,
      !environment.isObserved
    {
      if let clause = breaker {
        // The breaker is read from the borrowed environment before and after the attempt,
        // never kept in a variable: a shared breaker is then not retained by every run.
        guard environment.breaker != nil, environment.breakers.isEmpty || name == nil else {
          return try await drive(in: environment, after: nil, isolation: isolation, operation)
        }
        // A closed circuit admits without a permit: its success only counts.
        if environment.breaker?.isClosedNow == false {
          permit =
            try environment.breaker?.admitFirstAttempt(on: environment.breakerClock) ?? .normal
        }
        do {
          let value = try await attempt(1, isolation: isolation, operation)
          environment.breaker?.recordFirstSuccess(
            permit, policy: clause, on: environment.breakerClock)
          return value
        } catch {
          firstFailure = error
        }
      } else {
        do {
          return try await attempt(1, isolation: isolation, operation)
        } catch {
          firstFailure = error
        }
      }
    } else if throttle != nil, !environment.isObserved,
      let throttle = try admitFirstThrottled(in: environment)
    {
      // `throttle xK` alone: the first attempt is counted and judged with one atomic step.
      do {
        let value = try await attempt(1, isolation: isolation, operation)
        throttle.recordAccept()
        return value
      } catch {
        firstFailure = error
      }
    } else if !environment.isObserved, let slot = countedLimitSlot(in: environment) {
      // `limit N` alone: the first attempt's slot is one atomic step, without the driver.
      try slot.acquire()
      do {
        let value = try await attempt(1, isolation: isolation, operation)
        slot.release()
        return value
      } catch {
        slot.release()
        firstFailure = error
      }
    } else if !environment.isObserved, rateTokensAtHand(in: environment)?.take() == true {
      // `rate` alone, a token handed out ahead: one atomic step, nothing to give back.
      do {
        return try await attempt(1, isolation: isolation, operation)
      } catch {
        firstFailure = error
      }
    } else if !environment.isObserved, let slot = adaptiveLimitSlot(in: environment) {
      // `limit adaptive` alone: one atomic step each way; the limiter times a few attempts.
      let start = try slot.acquire()
      do {
        let value = try await attempt(1, isolation: isolation, operation)
        slot.release(started: start, isMeasured: true)
        return value
      } catch {
        slot.release(
          started: start, isMeasured: !(Task.isCancelled || error is CancellationError))
        firstFailure = error
      }
    } else if !environment.isObserved, let gate = sheddingGate(in: environment) {
      // `throttle`, `rate`, `limit` without `queue`: asked without the driver.
      let first = try await attemptFirst(
        through: gate, in: environment, isolation: isolation, operation)
      switch first {
      case .success(let value)?: return value
      case .failure(let error)?: firstFailure = error
      case nil: firstFailure = nil
      }
    } else if deadline == nil, budgetRatio == nil, breaker == nil, limit == nil, throttle == nil,
      rate == nil,
      environment.observer == nil, let counters = environment.metrics?.counters(named: name)
    {
      guard environment.isContinuousClock else {
        return try await runRecording(
          on: environment.clock, into: counters, in: environment, isolation: isolation,
          operation)
      }
      // Timed on ``MetricsTime`` (a few nanoseconds a reading), no clock opened: the first
      // attempt is a plain call, a success records its attempt and its run at once.
      let start = MetricsTime.now()
      counters.attemptStarted()
      let value: Success
      do {
        value = try await attempt(1, isolation: isolation, operation)
      } catch {
        return try await drive(
          in: environment, after: error, recordingSince: start, into: counters,
          isolation: isolation, operation)
      }
      counters.firstAttemptSucceeded(afterNanoseconds: MetricsTime.since(start))
      return value
    } else {
      firstFailure = nil
    }
    return try await drive(
      in: environment, after: firstFailure, permit: permit, isolation: isolation, operation)
  }

  /// Runs `operation` when only metrics record the run on a clock other than the
  /// continuous clock (a test's manual clock), the first attempt a plain call.
  ///
  /// The first attempt is timed on the run's clock, and a success records its attempt and
  /// its run at once, with no driver. A failure goes on in the driver, whose run starts when
  /// the first attempt did.
  @inlinable
  func runRecording<C: Clock<Duration>, Success>(
    on clock: C,
    into counters: PolicyCounters,
    in environment: RetryEnvironment,
    isolation: isolated (any Actor)?,
    _ operation: () async throws -> Success
  ) async throws -> Success {
    let start = clock.now
    counters.attemptStarted()
    let value: Success
    do {
      value = try await attempt(1, isolation: isolation, operation)
    } catch {
      return try await drive(
        on: clock, in: environment, after: error, startedAt: start, into: counters,
        isolation: isolation, operation)
    }
    counters.firstAttemptSucceeded(after: start.duration(to: clock.now))
    return value
  }

  /// Runs `operation`, passing it the attempt it makes, retrying as the policy says, and
  /// returns its first success.
  ///
  /// Everything ``run(isolation:_:)-(_,()->Success)`` says holds; the operation also learns its attempt's
  /// number, from 1.
  ///
  ///     let page = try await policy.run { attempt in
  ///       try await api.page(7, isRetry: attempt.number > 1)
  ///     }
  ///
  /// - Parameters:
  ///   - isolation: The caller's actor, which runs `operation`; leave the default.
  ///   - operation: The work to attempt, given its attempt.
  /// - Returns: The value of the first attempt that succeeds.
  @inlinable
  public func run<Success>(
    isolation: isolated (any Actor)? = #isolation,
    _ operation: (RetryAttempt) async throws -> Success
  ) async throws -> Success {
    try await run(in: .standard, isolation: isolation, operation)
  }

  /// Runs `operation` in `environment`, passing it the attempt it makes, retrying as the
  /// policy says, and returns its first success.
  ///
  /// Everything ``run(in:isolation:_:)-(_,_,()->Success)`` says holds; the operation also learns its attempt's
  /// number, from 1.
  ///
  /// - Parameters:
  ///   - environment: The clock, random source, error classes, hooks, observer and budget.
  ///   - isolation: The caller's actor, which runs `operation`; leave the default.
  ///   - operation: The work to attempt, given its attempt.
  /// - Returns: The value of the first attempt that succeeds.
  @inlinable
  public func run<Success>(
    in environment: RetryEnvironment,
    isolation: isolated (any Actor)? = #isolation,
    _ operation: (RetryAttempt) async throws -> Success
  ) async throws -> Success {
    // Attempts are sequential, so counting the calls numbers them: the common form's loop
    // stays free of the extra closure this one needs.
    var number = 0
    return try await run(in: environment, isolation: isolation) {
      number += 1
      return try await operation(RetryAttempt(number: number))
    }
  }

  /// The driver loop of a run, inlined into `run` so that, without `timeout`, every attempt is
  /// a plain call from the caller's own frame and isolation.
  ///
  /// It opens the environment's clock once (see ``drive(on:in:after:isolation:_:)``).
  ///
  /// Never inlined into `run`: a run waiting for its retry holds both frames, and `run`'s
  /// stays small enough for the task's first slab (with this inlined, it took 1,408 bytes).
  @inlinable
  @inline(never)
  func drive<Success>(
    in environment: RetryEnvironment,
    after firstFailure: (any Error)?,
    permit: CircuitBreakerStateMachine.Permit = .normal,
    recordingSince recordingStart: UInt64? = nil,
    into recordingCounters: PolicyCounters? = nil,
    isolation: isolated (any Actor)?,
    _ operation: () async throws -> Success
  ) async throws -> Success {
    // The continuous clock (the default) is driven as ``ContinuousRunClock``: the driver is
    // then specialized for a clock whose instants have a fixed layout, where an opened clock's
    // (and `ContinuousClock`'s own) instants cost task allocations and metadata look-ups that
    // a waiting run holds.
    guard environment.isContinuousClock else {
      return try await driveOnEnvironmentClock(
        in: environment, after: firstFailure, permit: permit, recordingSince: recordingStart,
        into: recordingCounters, isolation: isolation, operation)
    }
    return try await drive(
      on: ContinuousRunClock(), in: environment, after: firstFailure, permit: permit,
      recordingSince: recordingStart, into: recordingCounters, isolation: isolation, operation)
  }

  /// The driver loop over the environment's clock, opened (a test's manual clock): out of line,
  /// so that the frame of the driver above, which a run waiting for its retry holds, has one
  /// run and the values of one loop, not those of both.
  @inlinable
  @inline(never)
  func driveOnEnvironmentClock<Success>(
    in environment: RetryEnvironment,
    after firstFailure: (any Error)?,
    permit: CircuitBreakerStateMachine.Permit,
    recordingSince recordingStart: UInt64?,
    into recordingCounters: PolicyCounters?,
    isolation: isolated (any Actor)?,
    _ operation: () async throws -> Success
  ) async throws -> Success {
    // Another clock is driven as the environment's ``ErasedClock``, for which the driver is
    // specialized too, unless `rate` counts its tokens on it (by the clock's identity); the
    // suspending clock as itself, whose waits go to the process's timer heap.
    if rate == nil, let clock = environment.erasedClock {
      return try await drive(
        on: clock, in: environment, after: firstFailure, permit: permit,
        recordingSince: recordingStart, into: recordingCounters, isolation: isolation, operation)
    }
    return try await drive(
      on: environment.clock, in: environment, after: firstFailure, permit: permit,
      recordingSince: recordingStart, into: recordingCounters, isolation: isolation, operation)
  }

  /// The driver loop over the environment's clock, opened as `C`.
  ///
  /// ``RetryRun`` makes every decision, reports every event and checks cancellation; the loop
  /// only calls it: the decision synchronously, and `perform` (the wait, the hook, or a yield)
  /// only when there is something to wait for.
  ///
  /// - Parameters:
  ///   - clock: The environment's clock, opened.
  ///   - environment: The run's environment.
  ///   - firstFailure: The error of a plain first attempt `run` already made, or nil when no
  ///     attempt was made yet.
  ///   - isolation: The caller's actor: the same as `run`'s, into which this is inlined.
  ///   - operation: The work to attempt.
  @inlinable
  @inline(__always)
  func drive<C: Clock<Duration>, Success>(
    on clock: C,
    in environment: RetryEnvironment,
    after firstFailure: (any Error)?,
    permit: CircuitBreakerStateMachine.Permit = .normal,
    recordingSince recordingStart: UInt64? = nil,
    into recordingCounters: PolicyCounters? = nil,
    isolation: isolated (any Actor)?,
    _ operation: () async throws -> Success
  ) async throws -> Success {
    try await drive(
      on: clock, in: environment, after: firstFailure, permit: permit, startedAt: nil,
      recordingSince: recordingStart, into: recordingCounters, isolation: isolation, operation)
  }

  /// The driver loop, its run started at `start` when `run` made the first attempt itself
  /// (nil: now), or at `recordingStart` on ``MetricsTime`` when only metrics time it.
  @inlinable
  @inline(__always)
  func drive<C: Clock<Duration>, Success>(
    on clock: C,
    in environment: RetryEnvironment,
    after firstFailure: (any Error)?,
    permit: CircuitBreakerStateMachine.Permit = .normal,
    startedAt start: C.Instant?,
    recordingSince recordingStart: UInt64? = nil,
    into recordingCounters: PolicyCounters? = nil,
    isolation: isolated (any Actor)?,
    _ operation: () async throws -> Success
  ) async throws -> Success {
    var run = RetryRun(
      policy: self, environment: environment, clock: clock,
      attempts: firstFailure == nil ? 0 : 1, permit: permit, startedAt: start,
      recordingSince: recordingStart, into: recordingCounters)
    // The failure of the last attempt, handled at the top of the loop: one place that
    // decides and waits, so that the frame (which a waiting run holds) has one set of the
    // wait's values, not one for the first failure and one for the others.
    var failure = firstFailure
    while true {
      if let error = failure {
        failure = nil
        if let wait = try run.decideRetry(after: error, in: environment) {
          try await run.perform(wait, after: error, in: environment, on: clock)
        }
      }
      if let wait = try run.startAttempt(in: environment) {
        try await run.admit(after: wait, in: environment, on: clock)
      }
      do {
        let value = try await attempt(run.attempts, isolation: isolation, operation)
        run.finishSucceeded(in: environment)
        return value
      } catch {
        failure = error
      }
    }
  }

  /// A run under `timeout`: the same driver, each attempt in a child task beside a timer
  /// (see `timingOut(on:limit:_:)`); out of line, as it allocates anyway.
  @usableFromInline
  func runTimingOut<Success>(
    in environment: RetryEnvironment,
    isolation: isolated (any Actor)?,
    _ operation: () async throws -> Success
  ) async throws -> Success {
    try await runTimingOut(on: environment.clock, in: environment, isolation: isolation, operation)
  }

  private func runTimingOut<C: Clock<Duration>, Success>(
    on clock: C,
    in environment: RetryEnvironment,
    isolation: isolated (any Actor)?,
    _ operation: () async throws -> Success
  ) async throws -> Success {
    guard let limit = attemptTimeout else {
      return try await drive(
        on: clock, in: environment, after: nil, isolation: isolation, operation)
    }
    return try await drive(on: clock, in: environment, after: nil, isolation: isolation) {
      try await timingOut(on: clock, limit: limit, operation)
    }
  }
}
