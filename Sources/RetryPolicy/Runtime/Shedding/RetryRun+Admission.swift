// How an attempt waits before it starts: for its token of `rate`, or in the line of
// `limit N queue M`. `RetryRun.startAttempt(in:elapsed:)` asks the stages and returns the
// wait; the drivers that can wait call `admit(after:in:on:)`, which performs it and asks the
// stages after it.

extension RetryRun {
  /// Performs what ``startAttempt(in:elapsed:)`` returned and asks the stages after it, until
  /// the attempt starts; throws what the run throws when it may not.
  ///
  /// A wait for a token counts as a delay (``totalDelay``); a cancelled wait gives its token
  /// back and ends the run as cancelled. A wait in line ends when a slot is free, when the
  /// task is cancelled, or at the `within` deadline: the attempt is then refused
  /// (``LimitExceededError`` with `waited`, or the last error for a retry).
  @usableFromInline
  nonisolated(nonsending) package mutating func admit<C: Clock<Duration>>(
    after first: AdmissionWait, in environment: RetryEnvironment, on clock: C
  ) async throws {
    var next: AdmissionWait? = first
    while let wait = next {
      switch wait.kind {
      case .token(let delay):
        do {
          try await sleepFreeingOnCancel(for: delay, on: clock)
        } catch {
          shedding?.cancelRateWait()
          throw stop(.cancelled, pendingError ?? error, in: environment)
        }
        totalDelay = totalDelay.addingClamped(delay)
      case .slot(let ticket):
        let deadline = remainingWithin(elapsed: nil).map { clock.now.advanced(by: $0) }
        if let refusal = await shedding?.waitInLine(ticket, until: deadline, on: clock) {
          if Task.isCancelled {
            throw stop(.cancelled, pendingError ?? CancellationError(), in: environment)
          }
          throw refuse(.limitExceeded, refusal, in: environment, elapsed: nil)
        }
      }
      next = try admit(from: wait.resume, in: environment, elapsed: nil)
    }
  }

  /// Asks `rate` or `limit` (`stage`) for the next attempt: nil when it is admitted, else
  /// what it waits for (the stages from index `next` are asked after the wait); throws what
  /// the run throws when the stage refuses it.
  mutating func admitShedding(
    _ stage: RunStage, next: Int, in environment: borrowing RetryEnvironment,
    elapsed given: Duration?
  ) throws -> AdmissionWait? {
    switch stage {
    case .rate:
      switch shedding?.admitRate(maxWait: remainingWithin(elapsed: given)) {
      case .wait(let delay)?: return AdmissionWait(kind: .token(delay), resume: next)
      case .refused(let refusal)?:
        throw refuse(.rateLimited, refusal, in: environment, elapsed: given)
      case nil: return nil
      }
    case .limit:
      switch shedding?.admitLimit() {
      case .queued(let ticket)?: return AdmissionWait(kind: .slot(ticket), resume: next)
      case .refused(let refusal)?:
        throw refuse(.limitExceeded, refusal, in: environment, elapsed: given)
      case nil: return nil
      }
    case .deadline, .attemptTimeout, .breaker, .throttle, .budget, .hedge, .rules:
      return nil
    }
  }

  /// Gives back the limit's slot of the attempt that ended and counts a throttle's accept;
  /// reports an adaptive limit's change.
  mutating func releaseShedding(
    isMeasured: Bool, isAccept: Bool, in environment: borrowing RetryEnvironment
  ) {
    if isAccept { shedding?.recordAccept() }
    if let limit = shedding?.release(isMeasured: isMeasured) {
      environment.report(.limitChanged(attempt: machine.attempts, limit: limit))
    }
  }

  /// Ends the run because `throttle`, `rate` or `limit` refused its next attempt.
  ///
  /// The first attempt throws the stage's error, a later one the last error. The breaker
  /// does not count it.
  mutating func refuse(
    _ reason: RetryStopReason, _ refusal: any Error, in environment: borrowing RetryEnvironment,
    elapsed given: Duration?
  ) -> any Error {
    let attempt = machine.attempts + 1
    _ = circuit?.failed(attempt: attempt, counts: false, in: environment)
    environment.report(.attemptShed(attempt: attempt, reason: reason))
    return stop(reason, pendingError ?? refusal, in: environment, elapsed: given)
  }

  /// What is left of `within` for the current episode; nil without `within`, zero past it.
  func remainingWithin(elapsed given: Duration?) -> Duration? {
    guard let deadline = machine.deadline else { return nil }
    let left = deadline.subtractingClamped(given ?? episodeElapsed())
    return left.isPositive ? left : .zeroInline
  }
}

/// What an attempt waits for before it starts, as ``RetryRun/startAttempt(in:elapsed:)``
/// returns it: its token of `rate`, or a slot in the line of `limit N queue M`.
@usableFromInline
package struct AdmissionWait: Sendable {
  /// What is waited for.
  package enum Kind: Sendable {
    /// The token that comes after this wait.
    case token(Duration)
    /// A slot, in line under this ticket.
    case slot(UInt64)
  }

  /// What is waited for.
  package var kind: Kind
  /// The index in ``RunStage/beforeAttempt`` of the stage asked after the wait.
  package var resume: Int
}
