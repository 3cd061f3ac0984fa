import RetryPolicy

/// One simulated run of a policy: the policy, the script of outcomes and the seed.
///
/// The run goes through the library's own runtime (`CompiledPolicy.run(in:)`) on an
/// ``ImmediateClock``: delays take no real time, and the clock reads the time they would
/// have reached. The runtime makes every decision (which rule, how long, when to give up);
/// the simulated operation only fails as the script says, and an observer records the
/// runtime's events with the virtual time of each.
///
/// An immediate clock cannot race an attempt against its `timeout` (its timer always wins),
/// so the operation plays the timeout itself: an attempt whose duration (`~D`) reaches the
/// policy's `timeout`, or the outcome `timeout`, takes exactly the timeout and fails with
/// ``AttemptTimeoutError``, class `timeout`, as the runtime's own timer would.
package struct Simulation: Sendable {
  /// The policy to run.
  package var policy: CompiledPolicy
  /// What each attempt does.
  package var script: OutcomeScript
  /// The seed of the jitter's random numbers.
  package var seed: UInt64
  /// What the run records into, if anything, under the policy's name.
  package var metrics: RetryMetrics?
  /// The most attempts the simulation makes before it stops on its own
  /// (``Simulation/attemptLimit`` unless a test asks for fewer).
  package var attemptLimit: Int

  /// Creates the simulation of `policy` under `script`, its jitter seeded with `seed`, cut
  /// short after `attemptLimit` attempts.
  package init(
    policy: CompiledPolicy, script: OutcomeScript, seed: UInt64,
    attemptLimit: Int = Simulation.attemptLimit
  ) {
    self.policy = policy
    self.script = script
    self.seed = seed
    self.attemptLimit = max(1, attemptLimit)
  }

  /// The most attempts a simulation of the tool makes before it stops on its own.
  ///
  /// A policy such as `retry forever immediately within 1m` never moves virtual time
  /// forward. This is the attempts of the largest count the language allows (`retry 10000`).
  package static let attemptLimit = 10_001

  /// The error a scripted attempt throws: its class is `errorClass`.
  struct ScriptedError: HTTPStatusProviding, RetryAfterProviding, CustomStringConvertible {
    /// The class name from the script.
    var errorClass: String
    /// The Retry-After the error carries.
    var retryAfter: Duration?
    /// The HTTP status of an outcome written as one (`503`), 0 for a named class.
    var statusCode: Int { Int(errorClass) ?? 0 }

    var description: String { errorClass }
  }

  /// Runs the policy through the runtime on virtual time.
  package func run() async -> SimulationTimeline? {
    let clock = ImmediateClock()
    let log = EventLog(clock: clock)
    var classes: [String: @Sendable (any Error) -> Bool] = [:]
    for step in script.steps {
      guard let name = step.outcome.errorClass, name != "any", name != "timeout" else {
        continue
      }
      classes[name] = { ($0 as? ScriptedError)?.errorClass == name }
    }
    // A scripted URL error name (`timedOut`) is in `transient` too, as the real one is.
    classes["transient"] = { error in
      guard let name = (error as? ScriptedError)?.errorClass else { return false }
      return name == "transient"
        || (Vocabulary.builtInErrorClasses.contains(name) && name != "any" && name != "timeout")
    }
    var hooks: [String: @Sendable () async throws -> Void] = [:]
    for hook in policy.rules.compactMap(\.hook) {
      hooks[hook] = {}
    }
    var environment = RetryEnvironment(
      clock: clock, random: SeededRandomNumberGenerator(seed: seed), errorClasses: classes,
      hooks: hooks, observer: { log.record($0) },
      // Each simulation's own circuit, on its virtual time: never a process-wide one.
      breaker: policy.breaker == nil ? nil : CircuitBreaker(clock: clock),
      metrics: metrics)
    // And its own budget, limits, throttle and rate: a second simulation of the same policy
    // in one process (the tests, the REPL) starts as afresh as the first.
    environment.registry = RetryStateRegistry()
    // The operation plays the timeout (see above), so the runtime must not race it.
    var running = policy
    running.attemptTimeout = nil
    let script = self.script
    let timeout = policy.attemptTimeout
    let attempts = Counter()
    let attemptLimit = self.attemptLimit
    var finalError: (any Error)?
    do {
      try await running.run(in: environment) {
        let attempt = attempts.increment()
        guard attempt <= attemptLimit else {
          log.markCutShort()
          throw CancellationError()
        }
        try await Self.perform(script.outcome(forAttempt: attempt), clock: clock, timeout: timeout)
      }
    } catch {
      finalError = error
    }
    return log.timeline(
      policy: policy, script: script, seed: seed, error: finalError, elapsed: clock.now.offset,
      attemptLimit: attemptLimit)
  }

  /// Does what one scripted attempt does: spend its time, then succeed or throw.
  private static func perform(
    _ outcome: OutcomeScript.Outcome, clock: ImmediateClock, timeout: Duration?
  ) async throws {
    let duration = outcome.duration ?? .zero
    if let timeout, duration >= timeout || outcome.errorClass == "timeout" {
      clock.advance(by: timeout)
      // The policy's own `timeout` cut the attempt off, as the driver's timer would.
      throw AttemptTimeoutError(cutOffAt: timeout)
    }
    clock.advance(by: duration)
    switch outcome.kind {
    case .success:
      return
    case .cancellation:
      throw CancellationError()
    case .failure(let name):
      if name == "timeout" { throw AttemptTimeoutError(timeout: timeout ?? duration) }
      throw ScriptedError(errorClass: name, retryAfter: outcome.retryAfter)
    }
  }
}

/// Counts attempts from the operation, which may not capture mutable state.
private final class Counter: Sendable {
  private let value = Locked(0)

  func increment() -> Int {
    value.withLock {
      $0 += 1
      return $0
    }
  }
}

/// The runtime's events with the virtual time of each, turned into a timeline.
private final class EventLog: Sendable {
  private let clock: ImmediateClock
  private let entries = Locked<[(event: RetryEvent, time: Duration)]>([])
  private let cutShort = Locked(false)

  init(clock: ImmediateClock) {
    self.clock = clock
  }

  func record(_ event: RetryEvent) {
    let time = clock.now.offset
    entries.withLock { $0.append((event, time)) }
  }

  func markCutShort() {
    cutShort.withLock { $0 = true }
  }

  func timeline(
    policy: CompiledPolicy, script: OutcomeScript, seed: UInt64, error: (any Error)?,
    elapsed: Duration, attemptLimit: Int
  ) -> SimulationTimeline {
    let events = entries.withLock { $0 }
    var attempts: [SimulationTimeline.Attempt] = []
    var retriesByRule: [Int: Int] = [:]
    var finalElapsed = elapsed
    var hedgeNotApplied: HedgePolicy?
    for (event, time) in events {
      switch event {
      case .attemptStarted(let number):
        attempts.append(
          SimulationTimeline.Attempt(
            number: number, start: time, end: time,
            outcome: script.outcome(forAttempt: number).text, decision: .succeeded))
      case .attemptFailed(_, let error):
        guard let last = attempts.indices.last else { continue }
        attempts[last].end = time
        attempts[last].outcome = Self.describe(error, scripted: attempts[last].outcome)
      case .retryScheduled(_, let rule, let delay):
        guard let last = attempts.indices.last else { continue }
        let retry = (retriesByRule[rule] ?? 0) + 1
        retriesByRule[rule] = retry
        let limit = policy.rules.indices.contains(rule) ? policy.rules[rule].behavior.maxCount : nil
        attempts[last].decision = .retry(rule: rule + 1, retry: retry, limit: limit, delay: delay)
      case .gaveUp(_, let reason, _):
        guard let last = attempts.indices.last else { continue }
        // A retry refused when its attempt would start (a `rate` token past `within`)
        // gives up after its wait: the wait stays in the timeline, as in the elapsed time.
        if case .retry(let rule, let retry, let limit, let delay) = attempts[last].decision {
          attempts[last].decision = .retryRefused(
            rule: rule, retry: retry, limit: limit, delay: delay, reason: reason.description)
        } else {
          attempts[last].decision = .gaveUp(reason: reason.description)
        }
      case .finished(let summary):
        finalElapsed = summary.elapsed
        if let last = attempts.indices.last, error == nil { attempts[last].end = time }
      case .hedgeNotApplied(let hedge):
        hedgeNotApplied = hedge
      case .attemptRefused, .attemptShed, .limitChanged, .circuitOpened, .circuitHalfOpened,
        .circuitClosed:
        continue
      @unknown default:
        continue
      }
    }
    let isCutShort = cutShort.withLock { $0 }
    if isCutShort, attempts.count > attemptLimit {
      attempts.removeLast(attempts.count - attemptLimit)
    }
    return SimulationTimeline(
      policy: policy, script: script, seed: seed, attempts: attempts, succeeded: error == nil,
      error: error.map { Self.describe($0, scripted: nil) }, elapsed: finalElapsed,
      isCutShort: isCutShort, hedgeNotApplied: hedgeNotApplied)
  }

  /// The error as the timeline names it: its scripted class, `timeout`, or `cancellation`.
  private static func describe(_ error: any Error, scripted: String?) -> String {
    if let error = error as? Simulation.ScriptedError {
      return scripted ?? error.errorClass
    }
    if error is AttemptTimeoutError { return "timeout" }
    if error is CancellationError { return "cancel" }
    return String(describing: error)
  }
}

/// What happened in a simulated run.
package struct SimulationTimeline: Sendable {
  /// What the runtime decided after an attempt.
  package enum Decision: Sendable, Equatable {
    /// The attempt succeeded.
    case succeeded
    /// Rule `rule` (counted from 1) retries after `delay`; this is its retry number `retry`
    /// of at most `limit` (nil for forever).
    case retry(rule: Int, retry: Int, limit: Int?, delay: Duration)
    /// The run stopped and threw, for this reason (`retries exhausted`).
    case gaveUp(reason: String)
    /// Rule `rule` scheduled its retry number `retry` after `delay`, but when that retry's
    /// attempt would have started, after the wait, the run stopped for `reason` (`rate
    /// limited`: its token would have come past `within`).
    case retryRefused(rule: Int, retry: Int, limit: Int?, delay: Duration, reason: String)
  }

  /// One attempt.
  package struct Attempt: Sendable, Equatable {
    /// The attempt's number, counted from 1.
    package var number: Int
    /// When it started, from the start of the run.
    package var start: Duration
    /// When it ended, from the start of the run.
    package var end: Duration
    /// Its outcome as the script writes it: `ok`, `serverError`, `cancel`.
    package var outcome: String
    /// What the runtime did next.
    package var decision: Decision
  }

  /// The policy run.
  package var policy: CompiledPolicy
  /// The script of outcomes.
  package var script: OutcomeScript
  /// The seed of the jitter.
  package var seed: UInt64
  /// The attempts, in order.
  package var attempts: [Attempt]
  /// Whether the run returned a value.
  package var succeeded: Bool
  /// The error the run threw, described, if it failed.
  package var error: String?
  /// The time from the start of the first attempt to the end of the run.
  package var elapsed: Duration
  /// Whether the simulation stopped at its attempt limit (``Simulation/attemptLimit`` for the
  /// tool); then ``attempts`` holds exactly that many.
  package var isCutShort: Bool = false
  /// The policy's `hedge`, which the run did not apply: `run` makes its attempts one after
  /// another (`runHedged` races them), as the driver reports first; nil without `hedge`.
  package var hedgeNotApplied: HedgePolicy?
}
