// A hedged run's side of `throttle`, `rate` and `limit`: each attempt, the first and every
// extra one, asks them after the breaker and before the budget, as any run's attempt does
// (``RunStage/beforeAttempt``). An attempt that waits for its token of `rate`, or for its
// place in the line of `limit N queue M`, waits in a child task of the hedged run's group
// (``RunShedding/admissionWait(_:until:on:)``); its event resumes the attempt's admission.

/// What a hedged attempt's admission says.
enum HedgeAdmission {
  /// Every stage admitted it: it starts.
  case admitted
  /// A stage refused it, for this reason.
  case refused(RetryStopReason)
  /// It waits first (in a child task), then asks the stages from `resume` on.
  case wait(AdmissionWait)
}

/// What comes after a hedged attempt's wait for admission.
enum HedgeResumption {
  /// The stages from this index of ``RunStage/beforeAttempt`` are asked next.
  case from(Int)
  /// The attempt may not start, for this reason.
  case refused(RetryStopReason)
}

/// How a hedged attempt's wait for admission ended, as its child task reports it.
enum HedgeAdmissionOutcome: Sendable {
  /// Its token came after `delay`: the stages from `resume` on are asked next.
  case token(delay: Duration, resume: Int)
  /// The wait for its token was cancelled.
  case tokenCancelled
  /// Its wait in line ended: with a slot, or without one (cancelled, or `within` passed).
  case slot(ConcurrencyLimiter.Permit?, resume: Int)
}

extension RunShedding {
  /// Waits for what `wait` names, in a hedged run's child task: the token's time on `clock`,
  /// or a slot in line until `deadline` (`within`).
  func admissionWait<C: Clock<Duration>>(
    _ wait: AdmissionWait, until deadline: C.Instant?, on clock: C
  ) async -> HedgeAdmissionOutcome {
    switch wait.kind {
    case .token(let delay):
      do {
        try await sleepFreeingOnCancel(for: delay, on: clock)
        return .token(delay: delay, resume: wait.resume)
      } catch {
        return .tokenCancelled
      }
    case .slot(let ticket):
      return .slot(await slot(for: ticket, until: deadline, on: clock), resume: wait.resume)
    }
  }
}

extension HedgeDriver {
  /// Asks `throttle`, `rate` or `limit` (`stage`) for the next attempt: nil when it admits
  /// it; else its refusal (reported), or the wait before the stages from index `next`.
  mutating func admitShedding(_ stage: RunStage, next: Int) -> HedgeAdmission? {
    guard shedding != nil else { return nil }
    switch stage {
    case .throttle:
      // The driver of other runs draws for every attempt under a shedding stage: so does this.
      guard let refusal = shedding?.admitThrottle(drawingFrom: &random) else { return nil }
      return shed(.throttled, refusal)
    case .rate:
      switch shedding?.admitRate(maxWait: remainingWithin) {
      case .wait(let delay)?:
        pendingToken = true
        return .wait(AdmissionWait(kind: .token(delay), resume: next))
      case .refused(let refusal)?: return shed(.rateLimited, refusal)
      case nil: return nil
      }
    case .limit:
      switch shedding?.admitLimit() {
      case .queued(let ticket)?:
        pendingSlot = true
        return .wait(AdmissionWait(kind: .slot(ticket), resume: next))
      case .refused(let refusal)?: return shed(.limitExceeded, refusal)
      case nil: return nil
      }
    case .deadline, .attemptTimeout, .breaker, .budget, .hedge, .rules:
      return nil
    }
  }

  /// Whether an attempt waits for its token or its place in line: no other starts meanwhile.
  var isWaitingForAdmission: Bool { pendingToken || pendingSlot }

  /// Takes the end of a wait for admission: the stage to ask next, or why the attempt may not
  /// start (reported).
  mutating func admissionEnded(_ outcome: HedgeAdmissionOutcome) -> HedgeResumption {
    switch outcome {
    case .token(_, let resume):
      pendingToken = false
      return .from(resume)
    case .tokenCancelled:
      pendingToken = false
      shedding?.cancelRateWait()
      return .refused(.cancelled)
    case .slot(let permit?, let resume):
      pendingSlot = false
      shedding?.adopt(permit)
      return .from(resume)
    case .slot(nil, _):
      pendingSlot = false
      if Task.isCancelled { return .refused(.cancelled) }
      _ = shed(.limitExceeded, LimitExceededError(limit: shedding?.limit ?? 0, waited: true))
      return .refused(.limitExceeded)
    }
  }

  /// A refusal by `throttle`, `rate` or `limit`: reported, and neither the breaker nor the
  /// budget counts it (the breaker's permit is given back).
  private mutating func shed(_ reason: RetryStopReason, _ error: any Error) -> HedgeAdmission {
    breaker?.recordNeither(nextPermit)
    refusal = error
    environment.report(
      .attemptShed(attempt: started + 1, reason: reason), recording: &recorder, at: elapsed)
    return .refused(reason)
  }

  /// What is left of `within`; nil without it.
  var remainingWithin: Duration? {
    guard let deadline = machine.deadline else { return nil }
    let left = deadline.subtractingClamped(elapsed)
    return left.isPositive ? left : .zero
  }

  /// Ends attempt `number` for the shedding stages: its slot given back (its latency measured
  /// unless it was cancelled), a throttle's accept counted.
  mutating func endShedding(_ number: Int, isMeasured: Bool, isAccept: Bool) {
    guard shedding != nil else { return }
    if isAccept { shedding?.recordAccept() }
    guard let permit = slots.removeValue(forKey: number) else { return }
    if let limit = shedding?.release(permit, isMeasured: isMeasured) {
      environment.report(
        .limitChanged(attempt: number, limit: limit), recording: &recorder, at: elapsed)
    }
  }

  /// Gives back, when the run ends, the slots of the attempts still in flight and the token
  /// of an attempt that waits for one.
  mutating func endShedding() {
    guard shedding != nil else { return }
    for permit in slots.values { _ = shedding?.release(permit, isMeasured: false) }
    slots = [:]
    if pendingToken { shedding?.cancelRateWait() }
    pendingToken = false
  }

  /// Gives back a slot that a wait in line got as the run ended (its child task's event came
  /// after the run's end).
  mutating func discard(_ outcome: HedgeAdmissionOutcome) {
    if case .slot(let permit?, _) = outcome { _ = shedding?.release(permit, isMeasured: false) }
  }
}
