import Foundation
import Testing

@testable import RetryPolicy

/// A policy text and the rule it compiles to.
struct CompilerCase: Sendable, CustomTestStringConvertible {
  var text: String
  var rule: RetryRule

  init(_ text: String, _ rule: RetryRule) {
    self.text = text
    self.rule = rule
  }

  var testDescription: String { text }

  /// Every rule clause, and the delay clauses in each of their forms.
  static let all: [CompilerCase] = [
    CompilerCase("retry 3", RetryRule(behavior: .immediate(maxCount: 3))),
    CompilerCase("retry 0 immediately", RetryRule(behavior: .immediate(maxCount: 0))),
    CompilerCase(
      "retry 3 delay 250ms", RetryRule(behavior: .delayed(maxCount: 3, delay: .milliseconds(250)))),
    CompilerCase(
      "retry 3 backoff 1s",
      RetryRule(behavior: .exponential(maxCount: 3, initial: .seconds(1), multiplier: 2))),
    CompilerCase(
      "retry 5 backoff 1s x1.5",
      RetryRule(behavior: .exponential(maxCount: 5, initial: .seconds(1), multiplier: 1.5))),
    CompilerCase(
      "retry 5 backoff 2m x1000",
      RetryRule(behavior: .exponential(maxCount: 5, initial: .seconds(120), multiplier: 1000))),
    CompilerCase(
      "retry 4 backoff 1s +500ms",
      RetryRule(
        behavior: .linear(maxCount: 4, initial: .seconds(1), increment: .milliseconds(500)))),
    CompilerCase(
      "retry 4 backoff 1s +0s",
      RetryRule(behavior: .linear(maxCount: 4, initial: .seconds(1), increment: .zero))),
    CompilerCase(
      "retry 6 delays 0s, 1s, 1h",
      RetryRule(
        behavior: .customTimerDelayed(maxCount: 6, delays: [.zero, .seconds(1), .seconds(3600)]))),
    CompilerCase(
      "retry 2 on serverError, timeout except notFound",
      RetryRule(
        behavior: .immediate(maxCount: 2), errorClasses: ["serverError", "timeout"],
        excludedClasses: ["notFound"])),
    CompilerCase(
      "retry 5 backoff 1s jitter 10%",
      RetryRule(
        behavior: .exponential(maxCount: 5, initial: .seconds(1), multiplier: 2),
        jitter: .proportional(fraction: 0.1))),
    CompilerCase(
      "retry 5 delay 1s jitter 100%",
      RetryRule(
        behavior: .delayed(maxCount: 5, delay: .seconds(1)), jitter: .proportional(fraction: 1))),
    CompilerCase(
      "retry 5 delay 1s jitter full",
      RetryRule(behavior: .delayed(maxCount: 5, delay: .seconds(1)), jitter: .full)),
    CompilerCase(
      "retry 5 delay 1s jitter equal",
      RetryRule(behavior: .delayed(maxCount: 5, delay: .seconds(1)), jitter: .equal)),
    CompilerCase(
      "retry 5 backoff 1s jitter decorrelated max 1m",
      RetryRule(
        behavior: .exponential(maxCount: 5, initial: .seconds(1), multiplier: 2),
        jitter: .decorrelated, maxDelay: .seconds(60))),
    CompilerCase(
      "retry 1 on unauthorized after refreshToken",
      RetryRule(
        behavior: .immediate(maxCount: 1), errorClasses: ["unauthorized"], hook: "refreshToken")),
    CompilerCase(
      "retry 3 delay 1s honoring retry-after max 30s",
      RetryRule(
        behavior: .delayed(maxCount: 3, delay: .seconds(1)), maxDelay: .seconds(30),
        honorsRetryAfter: true)),
    CompilerCase(
      "retry 10000 delay 10000h",
      RetryRule(behavior: .delayed(maxCount: 10000, delay: .seconds(36_000_000)))),
  ]
}

/// Compiles a body built by hand, as the parser would give it.
func compileBuilt(_ text: String) -> CompiledPolicy? {
  var checker = PolicyChecker(vocabulary: .open)
  let body = SyntaxBuilder.body(text)
  return checker.compile(body, name: nil, emptyRange: body.range, hasSyntaxErrors: false)
}

@Suite("Compiler")
struct CompilerTests {
  @Test("each clause compiles to its part of the rule", arguments: CompilerCase.all)
  func clauses(_ example: CompilerCase) {
    let policy = compileBuilt(example.text)
    #expect(policy?.rules == [example.rule])
    #expect(policy?.deadline == nil)
  }

  @Test("each rule prints as its canonical text and compiles back", arguments: CompilerCase.all)
  func roundTrip(_ example: CompilerCase) {
    let printed = example.rule.description
    #expect(compileBuilt(printed)?.rules == [example.rule], "\(printed)")
  }

  @Test("the worked example: six attempts, delays 1, 1.5, 2.25, 3.375 and 5.0625 seconds")
  func workedExample() throws {
    let policy = try #require(compileBuilt("retry 5 on serverError backoff 1s x1.5 jitter 10%"))
    let rule = try #require(policy.rules.first)
    #expect(rule.behavior == .exponential(maxCount: 5, initial: .seconds(1), multiplier: 1.5))
    #expect(rule.behavior.maxCount.map { $0 + 1 } == 6)
    #expect(rule.errorClasses == ["serverError"])
    let schedule = rule.schedule()
    #expect(
      schedule.entries.map(\.delay) == [1, 1.5, 2.25, 3.375, 5.0625].map { Duration.seconds($0) })
    for entry in schedule.entries {
      #expect(entry.minimum == .saturating(seconds: entry.delay.seconds * 0.9))
      #expect(entry.maximum == .saturating(seconds: entry.delay.seconds * 1.1))
    }
    #expect(policy.description == "retry 5 on serverError backoff 1s x1.5 jitter 10%")
  }

  @Test("policy-wide clauses compile on the rule's line or their own")
  func policyWide() throws {
    let oneLine = try #require(compileBuilt("retry 3 delay 1s within 2m timeout 10s budget 10%"))
    #expect(oneLine.deadline == .seconds(120))
    #expect(oneLine.attemptTimeout == .seconds(10))
    #expect(oneLine.budgetRatio == 0.1)
    #expect(oneLine.budget?.ratio == 0.1)
    let lines = try #require(compileBuilt("retry 3 delay 1s\nwithin 2m\ntimeout 10s budget 10%"))
    #expect(lines == oneLine)
    #expect(oneLine.description == "retry 3 delay 1s within 2m timeout 10s budget 10%")
  }

  @Test("'retry forever' has no count")
  func forever() throws {
    let policy = try #require(compileBuilt("retry forever backoff 1s max 1m\nwithin 1h"))
    #expect(policy.rules.first?.behavior.maxCount == nil)
    #expect(
      policy.rules.first?.behavior
        == .exponential(maxCount: nil, initial: .seconds(1), multiplier: 2))
    #expect(policy.description == "retry forever backoff 1s max 1m within 1h")
  }

  @Test("a block's rules keep their order and print one a line")
  func severalRules() throws {
    let text = """
      retry 1 on unauthorized after refreshToken
      retry 5 on serverError, timeout backoff 1s x1.5 jitter 10% max 30s
      within 2m timeout 10s
      """
    let policy = try #require(compileBuilt(text))
    #expect(policy.rules.map(\.errorClasses) == [["unauthorized"], ["serverError", "timeout"]])
    #expect(
      policy.description == """
        retry 1 on unauthorized after refreshToken
        retry 5 on serverError, timeout backoff 1s x1.5 jitter 10% max 30s
        within 2m timeout 10s
        """)
    #expect(compileBuilt(policy.description) == policy)
  }

  @Test("the enums print like Swift values with durations in policy notation")
  func enumDescriptions() {
    #expect(
      RepeatBehavior.exponential(maxCount: 5, initial: .seconds(1), multiplier: 1.5).description
        == "exponential(maxCount: 5, initial: 1s, multiplier: 1.5)")
    #expect(RepeatBehavior.immediate(maxCount: nil).description == "immediate(maxCount: nil)")
    #expect(
      RepeatBehavior.delayed(maxCount: 2, delay: .milliseconds(250)).description
        == "delayed(maxCount: 2, delay: 250ms)")
    #expect(
      RepeatBehavior.linear(maxCount: 2, initial: .seconds(1), increment: .seconds(90)).description
        == "linear(maxCount: 2, initial: 1s, increment: 90s)")
    #expect(
      RepeatBehavior.customTimerDelayed(maxCount: 3, delays: [.seconds(1), .seconds(120)])
        .description == "customTimerDelayed(maxCount: 3, delays: [1s, 2m])")
    #expect(Jitter.proportional(fraction: 0.1).description == "proportional(fraction: 0.1)")
    #expect(Jitter.decorrelated.description == "decorrelated")
  }

  @Test("percentages and factors print so that they compile back to the same number")
  func numberTexts() {
    #expect(CompiledPolicy.percentText(0.07) == "7")
    #expect(CompiledPolicy.percentText(0.075) == "7.5")
    #expect(CompiledPolicy.percentText(0.001 / 100) == "0.001")
    #expect(CompiledPolicy.numberText(2) == "2")
    #expect(CompiledPolicy.numberText(1.5) == "1.5")
    #expect(CompiledPolicy.numberText(0.00001) == "0.00001")
    #expect(CompiledPolicy.numberText(1.25e-7) == "0.000000125")
    #expect(CompiledPolicy.numberText(1.5e20) == "150000000000000000000")
    for percent in [1.0, 7, 12.5, 33.3, 99.99, 0.01, 100] {
      let fraction = percent / 100
      #expect(Double(CompiledPolicy.percentText(fraction)).map { $0 / 100 } == fraction)
    }
  }

  @Test("a file that cannot be read throws the reading error")
  func unreadableFile() {
    let url = URL(fileURLWithPath: "/nonexistent/retry-policy/missing.retry")
    #expect(throws: (any Error).self) { try PolicyFile(contentsOf: url) }
  }
}
