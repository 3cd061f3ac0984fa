import Foundation
import RetryPolicy
import RetryPolicyTestSupport
import RetryPolicyTesting
import Testing

/// The run-pipeline article, read from the package's sources.
private func article() throws -> String {
  try String(
    contentsOf: packageRoot.appendingPathComponent(
      "Sources/RetryPolicy/Documentation.docc/TheRunPipeline.md"),
    encoding: .utf8)
}

/// The clause keywords of the numbered list that follows `heading` in `text`.
private func numberedKeywords(after heading: String, in text: String) -> [String] {
  guard let start = text.range(of: heading) else { return [] }
  var keywords: [String] = []
  var inList = false
  for line in text[start.upperBound...].split(separator: "\n", omittingEmptySubsequences: false) {
    guard let dot = line.firstIndex(of: "."), line.first?.isNumber == true else {
      if inList && !line.hasPrefix(" ") { break }
      continue
    }
    inList = true
    let rest = line[line.index(after: dot)...].drop { $0 == " " }
    guard rest.first == "`", let end = rest.dropFirst().firstIndex(of: "`") else { continue }
    keywords.append(String(rest[rest.index(after: rest.startIndex)..<end]))
  }
  return keywords
}

@Suite("Runtime: the stages of a run, in order")
struct RuntimeStageOrderTests {
  @Test("the article lists the stages in the order the driver asks them")
  func articleMatchesCode() throws {
    let text = try article()
    #expect(
      numberedKeywords(after: "Before an attempt starts", in: text)
        == RunStage.beforeAttempt.map(\.keyword.rawValue))
    #expect(
      numberedKeywords(after: "After it fails", in: text)
        == RunStage.afterFailure.map(\.keyword.rawValue))
    #expect(RunStage.beforeAttempt == [.deadline, .breaker, .throttle, .rate, .limit, .budget])
  }

  @Test("'within' is asked before the breaker: a late retry stops for the deadline")
  func deadlineBeforeBreaker() async throws {
    let clock = ManualClock()
    let breaker = CircuitBreaker()
    let recorder = RetryEventRecorder()
    let environment = RetryEnvironment(clock: clock, observer: recorder.observer, breaker: breaker)
    var policy = try compile(policy: "retry 3 on serverError breaker 50% min 100 within 1s")
    policy.rules[0].hook = "slow"
    var hooked = environment
    hooked.hooks["slow"] = { _ in
      clock.advance(by: .seconds(2))
      breaker.isolate()
    }
    await #expect(throws: APIError.serverError(code: 503)) {
      try await policy.run(in: hooked) { () async throws -> Int in
        throw APIError.serverError(code: 503)
      }
    }
    #expect(recorder.summaries.last?.outcome == .failed(.deadlineExceeded))
    #expect(!recorder.events.contains { if case .attemptRefused = $0 { true } else { false } })
  }

  @Test("the breaker is asked before the budget: a refused retry spends no token")
  func breakerBeforeBudget() async throws {
    let clock = ManualClock()
    let breaker = CircuitBreaker()
    let budget = RetryBudget()
    let environment = RetryEnvironment(clock: clock, budget: budget, breaker: breaker)
    var policy = try compile(policy: "retry 3 on serverError breaker 50% min 100 budget 10%")
    policy.rules[0].hook = "isolate"
    var hooked = environment
    hooked.hooks["isolate"] = { _ in breaker.isolate() }
    let before = budget.tokens
    await #expect(throws: APIError.serverError(code: 503)) {
      try await policy.run(in: hooked) { () async throws -> Int in
        throw APIError.serverError(code: 503)
      }
    }
    // The first attempt deposited its share; the refused retry withdrew nothing.
    #expect(budget.tokens >= before)
  }
}
