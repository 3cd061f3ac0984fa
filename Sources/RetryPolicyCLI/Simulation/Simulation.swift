import RetryPolicy
import RetryPolicyTesting

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
struct Simulation: Sendable {
  /// The policy to run.
  var policy: CompiledPolicy
  /// What each attempt does.
  var script: OutcomeScript
  /// The seed of the jitter's random numbers.
  var seed: UInt64

  /// The most attempts a simulation makes before it stops on its own.
  ///
  /// A policy such as `retry forever immediately within 1m` never moves virtual time
  /// forward. This is the attempts of the largest count the language allows (`retry 10000`).
  static let attemptLimit = 10_001

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
  func run() async -> SimulationTimeline? {
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
    let environment = RetryEnvironment(
      clock: clock, random: SeededRandomNumberGenerator(seed: seed), errorClasses: classes,
      hooks: hooks, observer: { log.record($0) })
    // The operation plays the timeout (see above), so the runtime must not race it.
    var running = policy
    running.attemptTimeout = nil
    let script = self.script
    let timeout = policy.attemptTimeout
    let attempts = Counter()
    var finalError: (any Error)?
    do {
      try await running.run(in: environment) {
        let attempt = attempts.increment()
        guard attempt <= Self.attemptLimit else {
          log.markCutShort()
          throw CancellationError()
        }
        try await Self.perform(script.outcome(forAttempt: attempt), clock: clock, timeout: timeout)
      }
    } catch {
      finalError = error
    }
    return log.timeline(
      policy: policy, script: script, seed: seed, error: finalError, elapsed: clock.now.offset)
  }

  /// Does what one scripted attempt does: spend its time, then succeed or throw.
  private static func perform(
    _ outcome: OutcomeScript.Outcome, clock: ImmediateClock, timeout: Duration?
  ) async throws {
    let duration = outcome.duration ?? .zero
    if let timeout, duration >= timeout || outcome.errorClass == "timeout" {
      clock.advance(by: timeout)
      throw AttemptTimeoutError(timeout: timeout)
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
    elapsed: Duration
  ) -> SimulationTimeline {
    let events = entries.withLock { $0 }
    var attempts: [SimulationTimeline.Attempt] = []
    var retriesByRule: [Int: Int] = [:]
    var finalElapsed = elapsed
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
        attempts[last].decision = .gaveUp(reason: reason.description)
      case .finished(let summary):
        finalElapsed = summary.elapsed
        if let last = attempts.indices.last, error == nil { attempts[last].end = time }
      case .attemptRefused, .circuitOpened, .circuitHalfOpened, .circuitClosed:
        continue
      @unknown default:
        continue
      }
    }
    let isCutShort = cutShort.withLock { $0 }
    if isCutShort, attempts.count > Simulation.attemptLimit {
      attempts.removeLast(attempts.count - Simulation.attemptLimit)
    }
    return SimulationTimeline(
      policy: policy, script: script, seed: seed, attempts: attempts, succeeded: error == nil,
      error: error.map { Self.describe($0, scripted: nil) }, elapsed: finalElapsed,
      isCutShort: isCutShort)
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
struct SimulationTimeline: Sendable {
  /// What the runtime decided after an attempt.
  enum Decision: Sendable, Equatable {
    /// The attempt succeeded.
    case succeeded
    /// Rule `rule` (counted from 1) retries after `delay`; this is its retry number `retry`
    /// of at most `limit` (nil for forever).
    case retry(rule: Int, retry: Int, limit: Int?, delay: Duration)
    /// The run stopped and threw, for this reason (`retries exhausted`).
    case gaveUp(reason: String)
  }

  /// One attempt.
  struct Attempt: Sendable, Equatable {
    /// The attempt's number, counted from 1.
    var number: Int
    /// When it started, from the start of the run.
    var start: Duration
    /// When it ended, from the start of the run.
    var end: Duration
    /// Its outcome as the script writes it: `ok`, `serverError`, `cancel`.
    var outcome: String
    /// What the runtime did next.
    var decision: Decision
  }

  /// The policy run.
  var policy: CompiledPolicy
  /// The script of outcomes.
  var script: OutcomeScript
  /// The seed of the jitter.
  var seed: UInt64
  /// The attempts, in order.
  var attempts: [Attempt]
  /// Whether the run returned a value.
  var succeeded: Bool
  /// The error the run threw, described, if it failed.
  var error: String?
  /// The time from the start of the first attempt to the end of the run.
  var elapsed: Duration
  /// Whether the simulation stopped at ``Simulation/attemptLimit`` attempts.
  var isCutShort: Bool = false
}

/// Text and JSON of a simulated run.
enum SimulationRendering {
  /// The timeline as a table, then the result.
  ///
  /// For example:
  ///
  ///     policy: retry 3 on serverError backoff 1s x2
  ///     outcomes: serverError*2, ok (seed 7)
  ///
  ///     attempt  start  outcome      decision               wait
  ///           1  0s     serverError  retry 1 of 3 (rule 1)  1s
  ///           2  1s     serverError  retry 2 of 3 (rule 1)  2s
  ///           3  3s     ok           succeeded
  ///
  ///     result: succeeded on attempt 3 after 3s
  static func text(_ timeline: SimulationTimeline, usesColor: Bool = false) -> String {
    let style = TextStyle(usesColor: usesColor)
    var output = ""
    let lines = ExplainRendering.policyLines(timeline.policy)
    let title = timeline.policy.name.map { "policy \($0):" } ?? "policy:"
    if lines.count == 1 {
      output += style.bold(title) + " " + lines[0] + "\n"
    } else {
      output += style.bold(title) + "\n" + lines.map { "  " + $0 + "\n" }.joined()
    }
    output += style.bold("outcomes:") + " \(timeline.script.text) (seed \(timeline.seed))\n\n"
    var rows: [[String]] = [["attempt", "start", "outcome", "decision", "wait"]]
    for attempt in timeline.attempts {
      var decision: String
      var wait = ""
      switch attempt.decision {
      case .succeeded:
        decision = "succeeded"
      case .retry(let rule, let retry, let limit, let delay):
        decision = "retry \(retry) of \(limit.map(String.init) ?? "∞")"
        if timeline.policy.rules.count > 1 { decision += " (rule \(rule))" }
        wait = millisecondsText(delay)
      case .gaveUp(let reason):
        decision = "gave up: " + reason
      }
      rows.append([
        String(attempt.number), millisecondsText(attempt.start), attempt.outcome,
        decision, wait,
      ])
    }
    let widths = (0..<5).map { column in rows.map { $0[column].count }.max() ?? 0 }
    for (index, cells) in rows.enumerated() {
      var line = String(repeating: " ", count: widths[0] - cells[0].count) + cells[0]
      for column in 1..<cells.count {
        let isLast = column == cells.count - 1
        let padding = String(repeating: " ", count: widths[column] - cells[column].count)
        line += "  " + cells[column] + (isLast ? "" : padding)
      }
      while line.hasSuffix(" ") { line.removeLast() }
      output += (index == 0 ? style.bold(line) : line) + "\n"
    }
    if timeline.isCutShort {
      output += "… (stopped after \(Simulation.attemptLimit) attempts)\n"
    }
    output += "\n" + style.bold("result:") + " " + resultText(timeline) + "\n"
    return output
  }

  /// A duration in seconds rounded to the millisecond, for the text timeline: jittered
  /// delays have nanoseconds nobody needs to read (the JSON keeps them).
  static func millisecondsText(_ duration: Duration, isReadable: Bool = false) -> String {
    let (seconds, attoseconds) = duration.components
    let milliseconds = (attoseconds + 500_000_000_000_000) / 1_000_000_000_000_000
    let rounded = Duration(
      secondsComponent: seconds, attosecondsComponent: milliseconds * 1_000_000_000_000_000)
    return isReadable
      ? ExplainRendering.readableSeconds(rounded) : ExplainRendering.secondsText(rounded)
  }

  /// `succeeded on attempt 3 after 3s` or `failed after 4 attempts in 7s: serverError`.
  static func resultText(_ timeline: SimulationTimeline) -> String {
    let count = timeline.attempts.count
    let elapsed = millisecondsText(timeline.elapsed, isReadable: true)
    if timeline.succeeded {
      return "succeeded on attempt \(count) after \(elapsed)"
    }
    if timeline.isCutShort {
      return "still retrying after \(count) attempts in \(elapsed); the simulation stopped there"
    }
    let attempts = count == 1 ? "1 attempt" : "\(count) attempts"
    return "failed after \(attempts) in \(elapsed), throwing \(timeline.error ?? "an error")"
  }

  /// The timeline as JSON: `{"policy", "outcomes", "seed", "attempts": [{"attempt",
  /// "start", "end", "outcome", "decision", "rule", "retry", "wait", "reason"}],
  /// "result": {"succeeded", "attempts", "elapsed", "error"}}`.
  static func jsonValue(_ timeline: SimulationTimeline) -> JSONValue {
    let attempts: [JSONValue] = timeline.attempts.map { attempt in
      var members = [
        JSONMember("attempt", .int(attempt.number)),
        JSONMember("start", .seconds(attempt.start)),
        JSONMember("end", .seconds(attempt.end)),
        JSONMember("outcome", .string(attempt.outcome)),
      ]
      switch attempt.decision {
      case .succeeded:
        members.append(JSONMember("decision", .string("succeeded")))
      case .retry(let rule, let retry, _, let delay):
        members.append(JSONMember("decision", .string("retry")))
        members.append(JSONMember("rule", .int(rule)))
        members.append(JSONMember("retry", .int(retry)))
        members.append(JSONMember("wait", .seconds(delay)))
      case .gaveUp(let reason):
        members.append(JSONMember("decision", .string("gaveUp")))
        members.append(JSONMember("reason", .string(reason)))
      }
      return .object(members)
    }
    return .object([
      JSONMember(
        "policy", .string(ExplainRendering.policyLines(timeline.policy).joined(separator: "\n"))),
      JSONMember("outcomes", .string(timeline.script.text)),
      JSONMember("seed", .number(String(timeline.seed))),
      JSONMember("attempts", .array(attempts)),
      JSONMember(
        "result",
        .object([
          JSONMember("succeeded", .bool(timeline.succeeded)),
          JSONMember("attempts", .int(timeline.attempts.count)),
          JSONMember("elapsed", .seconds(timeline.elapsed)),
          JSONMember("error", .string(timeline.error)),
          JSONMember("cutShort", .bool(timeline.isCutShort)),
        ])),
    ])
  }
}
