import RetryPolicy

/// The storm's side of the shedding stages: each attempt asks its client's `throttle`, `rate`
/// and `limit`, in the driver's order, and a refusal is counted by its cause.
extension StormEngine {
  /// Asks the client's shedding stages, from `stage` on, whether the attempt of the request
  /// in `slot` may start at `now`; starts it, delays it, puts it in line or refuses it.
  mutating func admit(
    slot: Int32, at now: Int64, arrival: Int64, from stage: Stage
  ) throws(StormSimulationError) {
    let client = Int(requests[Int(slot)].client)
    let isCounted = arrival < scenario.duration
    // What is left of `within`, which a rate's wait and a wait in line may not pass.
    let remaining = policy.deadline.map { Self.nanoseconds($0) - (now - arrival) }
    if stage <= .throttle, let clause = policy.throttle, shedding[client].throttle != nil {
      let uniform = Double(throttleRandom.next() >> 11) * 0x1p-53
      let admitted =
        shedding[client].throttle?.request(now: now, factor: clause.factor, uniform: uniform)
        ?? true
      guard admitted else { return refuse(.throttle, slot: slot, at: now, isCounted: isCounted) }
    }
    if stage <= .rate, shedding[client].rate != nil {
      switch shedding[client].rate?.reserve(now: now, maxWait: remaining.map { max($0, 0) }) {
      case .now, nil:
        break
      case .after(let wait):
        events.push(
          time: now &+ wait, arrival: arrival, slot: slot, kind: EventKind.rateWaited.rawValue)
        return
      case .refused:
        return refuse(.rate, slot: slot, at: now, isCounted: isCounted)
      }
    }
    if shedding[client].limit != nil {
      switch shedding[client].limit?.acquire() {
      case .admitted, nil:
        break
      case .queued(let ticket):
        requests[Int(slot)].ticket = ticket
        shedding[client].waiters[ticket] = slot
        if let remaining {
          events.push(
            time: now &+ max(remaining, 0), arrival: arrival, slot: slot,
            kind: EventKind.queueTimeout.rawValue)
        }
        return
      case .refused:
        return refuse(.limit, slot: slot, at: now, isCounted: isCounted)
      }
    }
    try start(slot: slot, at: now, arrival: arrival)
  }

  /// Ends the request in `slot`, its attempt refused by `cause`.
  mutating func refuse(_ cause: StormRefusal, slot: Int32, at now: Int64, isCounted: Bool) {
    countRefusal(cause, at: now, isCounted: isCounted)
    freeSlots.append(slot)
  }

  /// Tells the client's shedding state that the attempt of `slot` ended at `now` (an accept
  /// for `throttle` when it succeeded or failed with an error no rule matches), and starts the
  /// waiters it lets in.
  mutating func attemptEnded(slot: Int32, at now: Int64, isAccept: Bool)
    throws(StormSimulationError)
  {
    let client = Int(requests[Int(slot)].client)
    if isAccept { shedding[client].throttle?.accept(now: now) }
    let started = shedding[client].release(start: requests[Int(slot)].attemptStart, end: now)
    for waiter in started {
      requests[Int(waiter)].ticket = 0
      try start(slot: waiter, at: now, arrival: requests[Int(waiter)].arrival)
    }
  }

  /// Counts an attempt a client's breaker or shedding stage refused at `now`.
  mutating func countRefusal(_ cause: StormRefusal, at now: Int64, isCounted: Bool) {
    if isCounted {
      stats.refused += 1
      stats.refusedBy[cause.rawValue] += 1
    }
    if now < scenario.duration {
      stats.seconds.updateLatest(Int(now / 1_000_000_000)) { $0.refused += 1 }
    }
  }
}
