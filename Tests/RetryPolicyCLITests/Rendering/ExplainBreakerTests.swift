import Foundation
import RetryPolicy
import Testing

@testable import RetryPolicyCLI

@Suite("Explain rendering: breaker")
struct ExplainBreakerTests {
  static let guarded = CompiledPolicy(
    rules: [RetryRule(behavior: .immediate(maxCount: 3), errorClasses: ["serverError"])],
    breaker: CircuitBreakerPolicy(
      failurePercent: 50, window: .seconds(30), minimumAttempts: 20,
      openDuration: .milliseconds(5500)))

  @Test("explain --json has the contract's 'breaker' member, in seconds")
  func breakerMember() throws {
    let root = try ExplainRenderingTests.object(ExplainRendering.json(Self.guarded))
    let breaker = try #require(root["breaker"] as? [String: Any])
    #expect(breaker["ratio"] as? Double == 0.5)
    #expect(breaker["window"] as? Double == 30)
    #expect(breaker["minimum"] as? Int == 20)
    #expect(breaker["open"] as? Double == 5.5)
    #expect(breaker.count == 4)
  }

  @Test("a policy without 'breaker' has \"breaker\": null")
  func nullMember() throws {
    let root = try ExplainRenderingTests.object(
      ExplainRendering.json(ExplainRenderingTests.worked))
    #expect(root["breaker"] is NSNull)
  }

  @Test("explain's text says when the circuit opens and for how long")
  func breakerRow() {
    let text = ExplainRendering.text(Self.guarded)
    let row = text.split(separator: "\n").first { $0.hasPrefix("breaker") }.map(String.init)
    #expect(
      row?.contains("opens when at least 50% of at least 20 attempts in the last 30s failed")
        == true)
    #expect(text.contains("stays open 5.5s, then one attempt probes"))
  }
}
