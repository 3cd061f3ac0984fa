import RetryPolicy
import RetryPolicySimulation
import RetryPolicyTesting
import Testing

@testable import RetryPolicyCLI

/// The error of every attempt of a driver's run here: class `serverError`, with the
/// Retry-After of the script's `serverError@D`.
private struct ServerError: Error, RetryAfterProviding {
  var retryAfter: Duration?
}

/// What a run did, as both the simulation and the driver tell it.
private struct RunStory: Equatable, CustomStringConvertible {
  /// When each attempt started, from the start of the run.
  var starts: [Duration]
  /// Why the run stopped, as the events print it.
  var reason: String
  /// From the start of the first attempt to the end of the run.
  var elapsed: Duration

  var description: String { "starts \(starts), stopped: \(reason), elapsed \(elapsed)" }
}

/// Runs `policy` with the real driver on a manual clock that a helper task moves to each
/// deadline as soon as the run sleeps; every attempt fails at once with `serverError`.
private func driverStory(
  _ policy: CompiledPolicy, retryAfter: Duration?, seed: UInt64
) async -> RunStory {
  let clock = ManualClock()
  let events = Locked<[(RetryEvent, Duration)]>([])
  var environment = RetryEnvironment(
    clock: clock, random: SeededRandomNumberGenerator(seed: seed),
    errorClasses: ["serverError": { $0 is ServerError }],
    observer: { event in events.withLock { $0.append((event, clock.now.offset)) } },
    breaker: policy.breaker == nil ? nil : CircuitBreaker(clock: clock))
  environment.registry = RetryStateRegistry()
  let mover = Task {
    while !Task.isCancelled {
      await clock.waitForSleepers()
      if !Task.isCancelled { _ = clock.advanceToNextDeadline() }
    }
  }
  _ = try? await policy.run(in: environment) { () async throws -> Int in
    throw ServerError(retryAfter: retryAfter)
  }
  mover.cancel()
  await mover.value
  var story = RunStory(starts: [], reason: "", elapsed: .zero)
  for (event, time) in events.withLock({ $0 }) {
    switch event {
    case .attemptStarted: story.starts.append(time)
    case .gaveUp(_, let reason, _): story.reason = reason.description
    case .finished(let summary): story.elapsed = summary.elapsed
    default: break
    }
  }
  return story
}

/// The simulation's story, and the waits its timeline shows, added up.
private func simulatedStory(
  _ policy: CompiledPolicy, outcomes: String, seed: UInt64
) async throws -> (RunStory, shownWaits: Duration) {
  let script = try OutcomeScript.parse(outcomes)
  let timeline = try #require(
    await Simulation(policy: policy, script: script, seed: seed).run())
  var story = RunStory(starts: timeline.attempts.map(\.start), reason: "", elapsed: .zero)
  story.elapsed = timeline.elapsed
  var shown = Duration.zero
  for (index, attempt) in timeline.attempts.enumerated() {
    switch attempt.decision {
    case .succeeded:
      break
    case .retry(_, _, _, let delay):
      shown += delay + (SimulationRendering.admissionWait(after: index, in: timeline) ?? .zero)
    case .gaveUp(let reason):
      story.reason = reason
    case .retryRefused(_, _, _, let delay, let reason):
      shown += delay
      story.reason = reason
    }
  }
  return (story, shown)
}

@Suite("simulate agrees with a virtual-time run of the driver")
struct SimulationAgreementTests {
  @Test(
    "the same attempts, the same stop, the same elapsed time, every wait shown",
    arguments: [
      // The run's own failure opens the circuit: it ends at once, no backoff waited.
      ("retry 5 on serverError backoff 1s breaker 50% min 2 for 5s", "serverError"),
      ("retry 5 on serverError delay 1s within 2.5s", "serverError"),
      ("retry 4 on serverError backoff 1s jitter 10% max 3s budget 10%", "serverError"),
      // Each retry waits 59s more for its token.
      ("retry 3 on serverError delay 1s rate 1/m", "serverError"),
      // The retry's token would come past `within`: refused after the retry's delay.
      ("retry 3 on serverError delay 1s rate 1/m within 10s", "serverError"),
      ("retry 4 on serverError rate 1/s burst 1 within 3s", "serverError"),
      ("retry 3 on serverError delay 1s honoring retry-after max 5s", "serverError@20s"),
      ("retry 3 on serverError delay 1s honoring retry-after within 10s", "serverError@20s"),
    ])
  func agrees(text: String, outcomes: String) async throws {
    let policy = try compile(policy: text)
    let retryAfter: Duration? = outcomes.hasSuffix("@20s") ? .seconds(20) : nil
    for seed: UInt64 in [1, 7] {
      let (simulated, shown) = try await simulatedStory(policy, outcomes: outcomes, seed: seed)
      let driven = await driverStory(policy, retryAfter: retryAfter, seed: seed)
      #expect(simulated == driven, "\(text), seed \(seed)")
      // Attempts take no time here: the waits the timeline shows are the whole elapsed time.
      #expect(shown == simulated.elapsed, "\(text), seed \(seed)")
    }
  }

  @Test("a second simulation in the same process starts afresh (its own rate, budget, limits)")
  func simulationsDoNotShareState() async throws {
    let policy = try compile(policy: "retry 3 on serverError delay 1s rate 1/m budget 10%")
    let first = try await simulatedStory(policy, outcomes: "serverError", seed: 1)
    let second = try await simulatedStory(policy, outcomes: "serverError", seed: 1)
    #expect(first.0 == second.0)
    #expect(first.0.starts == [.zero, .seconds(60), .seconds(120), .seconds(180)])
  }

  @Test("a retry refused after its delay shows the delay and why it stopped")
  func refusedRetryShowsItsWait() async {
    let result = await ToolRunner.run([
      "simulate", "retry 3 delay 1s rate 1/m within 10s", "--seed", "1",
    ])
    #expect(result.status == 1)
    #expect(
      result.standardOutput.contains(
        "      1  0s     error    retry 1 of 3, then gave up: rate limited  1s\n"))
    #expect(result.standardOutput.contains("result: failed after 1 attempt in 1s"))
  }

  @Test("a hedged policy's timeline says that its attempts did not overlap, as 'run' reports")
  func hedgeNotAppliedIsSaid() async throws {
    let text = "retry 2 on serverError hedge 2 after 100ms"
    let result = await ToolRunner.run([
      "simulate", text, "--outcomes", "serverError~1s", "--seed", "1",
    ])
    #expect(
      result.standardOutput.contains(
        "note: 'hedge 2 after 100ms' not applied: the simulation runs the policy as 'run' does"))
    // The driver's `run` makes the same attempts, one after another, and says so first.
    let recorder = RetryEventRecorder()
    _ = try? await compile(policy: text).run(
      in: RetryEnvironment(clock: ManualClock(), observer: recorder.observer)
    ) { () async throws -> Int in throw ServerError() }
    guard case .hedgeNotApplied? = recorder.events.first else {
      Issue.record("the driver did not report hedgeNotApplied first")
      return
    }
    let json = await ToolRunner.run(["simulate", text, "--seed", "1", "--json"])
    #expect(json.standardOutput.contains("\"hedgeApplied\": false"))
    let plain = await ToolRunner.run([
      "simulate", "retry 2 on serverError", "--seed", "1", "--json",
    ])
    #expect(!plain.standardOutput.contains("hedgeApplied"))
  }
}
