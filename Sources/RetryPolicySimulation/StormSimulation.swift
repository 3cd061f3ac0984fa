import Foundation
import RetryPolicy
import Synchronization

/// A discrete-event simulation of a fleet of clients retrying under one policy against one
/// backend, on virtual time: what `retry-policy storm` runs.
///
/// Every retry decision is the library's own: each request is a ``RetryRun``, the driver the
/// runtime uses, fed the elapsed virtual time instead of a clock. The state machine picks the
/// rule and draws the jitter, the client's ``RetryBudget`` allows or refuses the retry, and
/// `within` stops it, exactly as in `run`; hooks are not called. Under `breaker`, each client
/// has its own ``CircuitBreaker`` on the virtual time, as in a real fleet: an attempt it
/// refuses never reaches the backend, and the request fails at once. Under `limit`,
/// `throttle` and `rate`, each client likewise has its own state (the runtime's pure state
/// machines on the virtual time), asked in the runtime's order after the breaker: throttle,
/// rate, limit. A rate's wait delays the attempt; a waiter in a limit's line starts when an
/// attempt of its client ends, or leaves at `within`; a refusal ends the request. As in the
/// runtime, the throttle's accepts are the attempts that succeeded or failed with an error
/// no rule of the policy takes (a `serverError` under `retry 3 on timeout`).
///
/// The model, in full:
/// - requests arrive as a Poisson process of rate `clients × rate` (the sum of the clients'
///   own Poisson processes), each from a client drawn at random; requests keep arriving,
///   uncounted, for a quarter of the duration (at most 30 s) after it, so that the last
///   seconds are not measured against an emptying backend;
/// - the backend is a queue of work served at `capacity` attempts per second; an attempt's
///   latency is its wait in the queue plus a service time of mean `latency` (half fixed, half
///   exponential); an attempt still unanswered after the client's timeout fails with
///   ``AttemptTimeoutError`` (class `timeout`) and its work stays queued: a saturated backend
///   serves requests nobody waits for; a queue holding a timeout's worth of work takes no
///   more (the attempt hangs until its timeout);
/// - during the outage, each attempt fails with probability `failureRate` with
///   ``StormBackendError/serverError`` after a tenth of the service time, taking no work; when
///   the outage starts, attempts in flight fail the same way (connections reset); with
///   `slowdown F` the backend serves `F` times slower and `capacity / F` attempts per second.
package struct StormSimulation: Sendable {
  /// The scenario.
  package var scenario: StormScenario

  /// Creates a simulation of `scenario`.
  package init(scenario: StormScenario) {
    self.scenario = scenario
  }

  /// Simulates the fleet under `policy`; the same scenario and policy give the same result.
  ///
  /// With `metrics`, every request's run records into it, on the virtual time, under the
  /// policy's name.
  package func run(
    _ policy: CompiledPolicy, metrics: RetryMetrics? = nil
  ) throws(StormSimulationError) -> StormResult {
    // Concurrent attempts would need their own model of load; none is better than a wrong one.
    guard policy.hedge == nil else { throw .hedgingNotSimulated }
    try scenario.check()
    var engine = StormEngine(scenario: scenario, policy: policy, metrics: metrics)
    try engine.run()
    return engine.result()
  }
}

/// The state of one simulation.
struct StormEngine {
  /// A request in flight, in a slot of ``StormEngine/requests``.
  struct Request {
    var run: RetryRun
    /// The client that sent it (kept under shedding).
    var client: Int32 = 0
    /// When its current attempt started (kept under shedding).
    var attemptStart: Int64 = 0
    /// Its ticket while it waits in its client's line, else 0.
    var ticket: UInt64 = 0
    /// When it arrived (kept under shedding).
    var arrival: Int64 = 0
  }

  enum EventKind: UInt8 {
    case succeeded, serverError, timedOut, retry
    /// A rate's wait is over: the limit is asked next.
    case rateWaited
    /// A waiter's `within` passed: it leaves the line if it still waits.
    case queueTimeout
  }

  /// Where admission resumes: the stages are asked in this order.
  enum Stage: Int, Comparable {
    case throttle, rate, limit

    static func < (lhs: Stage, rhs: Stage) -> Bool { lhs.rawValue < rhs.rawValue }
  }

  let scenario: StormScenario
  let policy: CompiledPolicy
  let environment: RetryEnvironment
  let budgets: [RetryBudget]
  /// Each client's breaker, for a policy with `breaker`.
  let breakers: [CircuitBreaker]
  /// The virtual time the breakers read.
  let clock = VirtualTime()
  let timeout: Int64
  let serverError: any Error = StormBackendError.serverError
  let timeoutError: any Error
  var requests: [Request] = []
  var freeSlots: [Int32] = []
  var events = EventHeap()
  var backend: SeededRandomNumberGenerator
  var backlog = 0.0
  var backlogTime: Int64 = 0
  var latencies = LatencyHistogram()
  /// The 100 ms period of the latest attempt, its attempts, and the most of any period
  /// before it: attempts start in order of time, so one counter does.
  var tenth: Int64 = -1
  var tenthAttempts = 0
  var peakTenthAttempts = 0
  var stats: StormResult
  /// Whether the policy has neither `within` nor a budget: its first attempts need no run.
  let isFastPath: Bool
  /// Every attempt, those of the uncounted requests after the duration too.
  var allAttempts = 0
  /// Whether the policy has `limit`, `throttle` or `rate`.
  let isShedding: Bool
  /// Each client's shedding state, for such a policy.
  var shedding: [StormClientShedding] = []
  /// The random draws of the throttles.
  var throttleRandom: SeededRandomNumberGenerator
  /// Whether a failure with the backend's error, or a timeout, is an accept for `throttle`:
  /// as in the driver, an attempt that failed with an error no rule matches is one.
  let acceptsServerError: Bool
  let acceptsTimeout: Bool
  /// What every run records into, when the command asked for metrics.
  let metrics: RetryMetrics?

  init(scenario: StormScenario, policy: CompiledPolicy, metrics: RetryMetrics?) {
    self.scenario = scenario
    self.policy = policy
    self.metrics = metrics
    var hooks: [String: @Sendable () async throws -> Void] = [:]
    for name in policy.rules.compactMap(\.hook) { hooks[name] = {} }
    // With metrics, each run's recorder reports through the environment, as in `run`.
    self.environment = RetryEnvironment(
      errorClasses: ["serverError": { $0 is StormBackendError }], hooks: hooks, metrics: metrics)
    self.budgets =
      policy.budgetRatio == nil ? [] : (0..<scenario.clients).map { _ in RetryBudget() }
    let clock = self.clock
    self.breakers =
      policy.breaker == nil
      ? []
      : (0..<scenario.clients).map { _ in CircuitBreaker(reading: { clock.now }) }
    let policyTimeout = policy.attemptTimeout.map(Self.nanoseconds)
    self.timeout = max(1, policyTimeout ?? scenario.timeout)
    // With the policy's own `timeout`, the attempt is cut off by the run, as the driver's timer
    // would; without one, by the client's socket (the scenario's timeout): an error like any other.
    self.timeoutError =
      policyTimeout == nil
      ? AttemptTimeoutError(timeout: .nanoseconds(timeout))
      : AttemptTimeoutError(cutOffAt: .nanoseconds(timeout))
    self.backend = SeededRandomNumberGenerator(seed: mix(scenario.seed, 2))
    self.stats = StormResult(policy: policy)
    self.isShedding = policy.limit != nil || policy.throttle != nil || policy.rate != nil
    self.isFastPath =
      policy.deadline == nil && policy.budgetRatio == nil && policy.breaker == nil
      && metrics == nil && !isShedding
    if isShedding {
      shedding = Array(repeating: StormClientShedding(policy: policy), count: scenario.clients)
    }
    self.throttleRandom = SeededRandomNumberGenerator(seed: mix(scenario.seed, 3))
    let classes = environment.errorClasses
    let serverError = self.serverError
    let timeoutError = self.timeoutError
    (acceptsServerError, acceptsTimeout) = policy.rules.withUnsafeBufferPointer { rules in
      (
        RetryStateMachine.takingRule(
          of: ErrorClassification(serverError, predicates: classes), among: rules) == nil,
        RetryStateMachine.takingRule(
          of: ErrorClassification(timeoutError, predicates: classes), among: rules) == nil
      )
    }
    let seconds = Int((scenario.duration + 999_999_999) / 1_000_000_000)
    stats.seconds = StormResult.Seconds(count: seconds)
  }

  /// A duration in whole nanoseconds, clamped to a century.
  static func nanoseconds(_ duration: Duration) -> Int64 {
    let (seconds, attoseconds) = duration.components
    guard seconds < 3_155_760_000 else { return 3_155_760_000_000_000_000 }
    guard seconds >= 0, attoseconds >= 0 else { return 0 }
    return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
  }

  mutating func run() throws(StormSimulationError) {
    var arrivals = SeededRandomNumberGenerator(seed: mix(scenario.seed, 1))
    let arrivalRate = Double(scenario.clients) * scenario.rate / 1e9
    var nextArrival = Self.exponential(&arrivals, mean: 1 / arrivalRate)
    var index: UInt64 = 0
    // Requests keep arriving for a while after the duration, uncounted, so that the last
    // seconds' requests meet the load they would meet, not an emptying backend.
    let tailEnd = scenario.arrivalEnd
    while true {
      if nextArrival < tailEnd, events.top.map({ nextArrival <= $0.time }) ?? true {
        let now = nextArrival
        let client = Int(arrivals.next() % UInt64(scenario.clients))
        index &+= 1
        try arrive(at: now, client: client, index: index)
        nextArrival = now + max(1, Self.exponential(&arrivals, mean: 1 / arrivalRate))
      } else if let event = events.pop() {
        try handle(event)
      } else {
        break
      }
    }
  }

  mutating func arrive(at now: Int64, client: Int, index: UInt64) throws(StormSimulationError) {
    clock.set(now)
    let isCounted = now < scenario.duration
    if isCounted {
      stats.offered += 1
      if scenario.isInOutage(now) { stats.outageOffered += 1 }
      stats.seconds.updateLatest(Int(now / 1_000_000_000)) { $0.offered += 1 }
    }
    // As `run` does: without `within` or a budget, the first attempt is a plain call, and a
    // run is made only when it fails, having made 1 attempt; otherwise the run starts first.
    var run: RetryRun?
    if !isFastPath {
      var started = makeRun(index: index, client: client, attempts: 0)
      do {
        // The storm's runs ask no shedding stage (it keeps its own): they never wait here.
        _ = try started.startAttempt(in: environment, elapsed: .zero)
      } catch {
        if started.wasRefused { countRefusal(.breaker, at: now, isCounted: isCounted) }
        return
      }
      run = started
    }
    if isShedding, let run {
      let slot = store(Request(run: run, client: Int32(truncatingIfNeeded: client), arrival: now))
      try admit(slot: slot, at: now, arrival: now, from: .throttle)
      return
    }
    let (end, kind) = try attempt(at: now, isCounted: isCounted)
    // A request whose first attempt succeeds needs no slot: only retries need its run, and
    // the breaker, which hears of the success when it happens.
    var slot: Int32 = -1
    if kind != .succeeded || !breakers.isEmpty || metrics != nil {
      slot = store(Request(run: run ?? makeRun(index: index, client: client, attempts: 1)))
    }
    events.push(time: end, arrival: now, slot: slot, kind: kind.rawValue)
  }

  /// Keeps `request` in a free slot; returns the slot.
  mutating func store(_ request: Request) -> Int32 {
    if let free = freeSlots.popLast() {
      requests[Int(free)] = request
      return free
    }
    requests.append(request)
    return Int32(truncatingIfNeeded: requests.count - 1)
  }

  /// Starts the attempt of the request in `slot` on the backend.
  mutating func start(slot: Int32, at now: Int64, arrival: Int64) throws(StormSimulationError) {
    requests[Int(slot)].attemptStart = now
    let (end, kind) = try attempt(at: now, isCounted: arrival < scenario.duration)
    events.push(time: end, arrival: arrival, slot: slot, kind: kind.rawValue)
  }

  /// The run of request number `index`, from `client`, with its own seeded jitter.
  func makeRun(index: UInt64, client: Int, attempts: Int) -> RetryRun {
    var run = RetryRun(
      policy: policy, random: SeededRandomNumberGenerator(seed: mix(scenario.seed, index &+ 16)),
      budget: budgets.isEmpty ? nil : budgets[client],
      breaker: breakers.isEmpty ? nil : breakers[client], attempts: attempts,
      asksShedding: false)
    if let metrics { run.record(into: metrics, policy: policy) }
    return run
  }

  mutating func handle(_ event: Event) throws(StormSimulationError) {
    let now = event.time
    clock.set(now)
    let slot = event.slot
    let arrival = event.arrival
    switch EventKind(rawValue: event.kind) ?? .succeeded {
    case .succeeded:
      if arrival < scenario.duration {
        stats.succeeded += 1
        latencies.record(now - arrival)
        stats.seconds.update(Int(arrival / 1_000_000_000)) { $0.succeeded += 1 }
      }
      if slot >= 0 {
        if isShedding { try attemptEnded(slot: slot, at: now, isAccept: true) }
        if !breakers.isEmpty || metrics != nil {
          requests[Int(slot)].run.finishSucceeded(
            in: environment, elapsed: .nanoseconds(now - arrival))
        }
        freeSlots.append(slot)
      }
    case .serverError, .timedOut:
      let elapsed = Duration.nanoseconds(now - arrival)
      let isServerError = event.kind == EventKind.serverError.rawValue
      let error = isServerError ? serverError : timeoutError
      if isShedding {
        try attemptEnded(
          slot: slot, at: now, isAccept: isServerError ? acceptsServerError : acceptsTimeout)
      }
      let delay: Int64
      do {
        let wait = try requests[Int(slot)].run.decideRetry(
          after: error, in: environment, elapsed: elapsed)
        delay = wait.map { Self.nanoseconds($0.delay) } ?? 0
      } catch {
        freeSlots.append(slot)
        return
      }
      if delay > 0 {
        events.push(
          time: now &+ delay, arrival: arrival, slot: slot, kind: EventKind.retry.rawValue)
      } else {
        try retry(slot: slot, at: now, arrival: arrival)
      }
    case .retry:
      try retry(slot: slot, at: now, arrival: arrival)
    case .rateWaited:
      try admit(slot: slot, at: now, arrival: arrival, from: .limit)
    case .queueTimeout:
      let request = requests[Int(slot)]
      let client = Int(request.client)
      guard request.ticket != 0, request.arrival == arrival,
        shedding[client].limit?.leave(request.ticket) == true
      else { return }
      shedding[client].waiters[request.ticket] = nil
      requests[Int(slot)].ticket = 0
      refuse(.limit, slot: slot, at: now, isCounted: arrival < scenario.duration)
    }
  }

  mutating func retry(slot: Int32, at now: Int64, arrival: Int64) throws(StormSimulationError) {
    do {
      _ = try requests[Int(slot)].run.startAttempt(
        in: environment, elapsed: .nanoseconds(now - arrival))
    } catch {
      if requests[Int(slot)].run.wasRefused {
        countRefusal(.breaker, at: now, isCounted: arrival < scenario.duration)
      }
      freeSlots.append(slot)
      return
    }
    if isShedding {
      try admit(slot: slot, at: now, arrival: arrival, from: .throttle)
      return
    }
    let (end, kind) = try attempt(at: now, isCounted: arrival < scenario.duration)
    events.push(time: end, arrival: arrival, slot: slot, kind: kind.rawValue)
  }

  /// Starts an attempt on the backend: when it ends, and how.
  mutating func attempt(at now: Int64, isCounted: Bool) throws(StormSimulationError) -> (
    Int64, EventKind
  ) {
    allAttempts += 1
    guard allAttempts <= scenario.attemptLimit else {
      throw .tooManyAttempts(limit: scenario.attemptLimit)
    }
    if now < scenario.duration {
      stats.seconds.updateLatest(Int(now / 1_000_000_000)) { $0.attempts += 1 }
      let period = now / 100_000_000
      if period != tenth {
        peakTenthAttempts = max(peakTenthAttempts, tenthAttempts)
        tenth = period
        tenthAttempts = 0
      }
      tenthAttempts += 1
    }
    let inOutage = scenario.isInOutage(now)
    if isCounted {
      stats.attempts += 1
      if inOutage { stats.outageAttempts += 1 }
    }
    drainBacklog(to: now)
    let service = serviceTime(slowed: inOutage)
    if inOutage, failureDraw() {
      return (now + service / 10, .serverError)
    }
    // A queue holding a timeout's worth of work or more is full: the attempt hangs unserved.
    let queued = backlog / capacity(slowed: inOutage) * 1e9
    let wait = queued < 1e17 ? Int64(queued) : 100_000_000_000_000_000
    if wait < timeout { backlog += 1 }
    if let start = scenario.outageStart, now < start, now &+ min(wait &+ service, timeout) > start,
      failureDraw()
    {
      return (start, .serverError)
    }
    return wait &+ service > timeout
      ? (now &+ timeout, .timedOut) : (now &+ wait &+ service, .succeeded)
  }
}
