import RetryPolicy
import RetryPolicyTesting
import Testing

@Suite("Runtime: events")
struct RuntimeEventTests {
  @Test("an observer sees each attempt, error and decision, then the summary")
  func successfulRun() async throws {
    let clock = ImmediateClock()
    let recorder = RetryEventRecorder()
    let operation = ScriptedOperation(
      failures: [ConnectionLost(), APIError.serverError(code: 500)], thenReturning: 1,
      clock: clock)
    let policy = policy(RetryRule(behavior: .delayed(maxCount: 3, delay: .seconds(2))))
    _ = try await policy.run(in: RetryEnvironment(clock: clock, observer: recorder.observer)) {
      try await operation()
    }
    #expect(
      recorder.events.map(line) == [
        "start 1", "fail 1 ConnectionLost()", "retry 1 rule 0 after 2.0",
        "start 2", "fail 2 serverError(code: 500)", "retry 2 rule 0 after 2.0",
        "start 3", "finish 3 waited 4.0 succeeded",
      ])
    #expect(recorder.summaries.first?.elapsed == .seconds(4))
  }

  @Test(
    "the summary tells why a run gave up",
    arguments: [
      (RetryRule(behavior: .immediate(maxCount: 1)), RetryStopReason.retriesExhausted, 2),
      (
        RetryRule(behavior: .immediate(maxCount: 1), errorClasses: ["notFound"]), .errorNotMatched,
        1
      ),
    ])
  func gaveUp(rule: RetryRule, reason: RetryStopReason, attempts: Int) async throws {
    let recorder = RetryEventRecorder()
    _ = try? await policy(rule).run(in: RetryEnvironment(observer: recorder.observer)) {
      throw ConnectionLost()
    }
    let last = recorder.events.suffix(2).map(line)
    #expect(
      last == [
        "give up \(attempts) \(reason) ConnectionLost()",
        "finish \(attempts) waited 0.0 failed(\(reason))",
      ])
  }

  @Test("events can be consumed as an AsyncStream")
  func asyncStream() async throws {
    let (stream, continuation) = AsyncStream.makeStream(of: RetryEvent.self)
    let environment = RetryEnvironment(observer: { continuation.yield($0) })
    _ = try? await policy(RetryRule(behavior: .immediate(maxCount: 1))).run(in: environment) {
      throw ConnectionLost()
    }
    continuation.finish()
    var lines: [String] = []
    for await event in stream { lines.append(line(event)) }
    #expect(lines.first == "start 1")
    #expect(lines.last == "finish 2 waited 0.0 failed(retries exhausted)")
  }
}
