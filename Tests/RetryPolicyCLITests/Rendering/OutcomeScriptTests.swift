import RetryPolicySimulation
import Testing

@testable import RetryPolicyCLI

@Suite("Simulation outcome scripts")
struct OutcomeScriptTests {
  @Test("a list of outcomes with counts, retry-after and durations")
  func parsesEverything() throws {
    let script = try OutcomeScript.parse("serverError*2, timeout@5s,cancel~250ms, ok")
    #expect(script.steps.count == 4)
    #expect(script.steps[0].outcome.kind == .failure(errorClass: "serverError"))
    #expect(script.steps[0].count == 2)
    #expect(script.steps[1].outcome.retryAfter == .seconds(5))
    #expect(script.steps[2].outcome.kind == .cancellation)
    #expect(script.steps[2].outcome.duration == .milliseconds(250))
    #expect(script.steps[3].outcome.kind == .success)
    #expect(script.text == "serverError*2, timeout@5s, cancel~250ms, ok")
  }

  @Test("attempts follow the script and the last outcome repeats")
  func lastRepeats() throws {
    let script = try OutcomeScript.parse("a*2,b")
    let names = (1...5).map { script.outcome(forAttempt: $0).errorClass }
    #expect(names == ["a", "a", "b", "b", "b"])
  }

  @Test(
    "malformed scripts are usage errors",
    arguments: [
      "", "a,,b", "3x", "a*0", "a*x", "a*99999999999", "ok@5s", "a@5", "a~1d", "a@1s@2s",
      "a*2*3", "a!",
    ])
  func rejects(text: String) {
    #expect(throws: OutcomeScriptError.self) { try OutcomeScript.parse(text) }
  }

  @Test(
    "durations are written as in policies",
    arguments: [
      ("250ms", Duration.milliseconds(250)), ("1.5s", .milliseconds(1500)), ("2m", .seconds(120)),
      ("1h", .seconds(3600)),
    ])
  func durations(text: String, duration: Duration) {
    #expect(OutcomeScript.parseDuration(text[...]) == duration)
  }
}
