import Foundation
import RetryPolicyTestSupport
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

@Suite("Compile API")
struct CompileTextTests {
  @Test("each clause compiles from text to its part of the rule", arguments: CompilerCase.all)
  func clauses(_ example: CompilerCase) throws {
    let policy = try compile(policy: example.text)
    #expect(policy.rules == [example.rule])
    #expect(policy.name == nil)
  }

  @Test("a compiled policy prints as text that compiles back to it", arguments: CompilerCase.all)
  func roundTrip(_ example: CompilerCase) throws {
    let policy = try compile(policy: example.text + " within 1h timeout 1m budget 12.5%")
    #expect(try compile(policy: policy.description) == policy)
  }

  @Test("the worked example compiles from text")
  func workedExample() throws {
    let policy = try compile(policy: "retry 5 on serverError backoff 1s x1.5 jitter 10%")
    let rule = try #require(policy.rules.first)
    #expect(rule.behavior == .exponential(maxCount: 5, initial: .seconds(1), multiplier: 1.5))
    #expect(rule.jitter == .proportional(fraction: 0.1))
    #expect(
      rule.schedule().entries.map(\.delay)
        == [1, 1.5, 2.25, 3.375, 5.0625].map { Duration.seconds($0) })
    #expect(policy.description == "retry 5 on serverError backoff 1s x1.5 jitter 10%")
  }

  @Test("comments, blank lines, CRLF and spacing do not change the compiled policy")
  func layout() throws {
    let plain = try compile(policy: "retry 5 on serverError, timeout backoff 1s x1.5 within 2m")
    let laidOut = try compile(
      policy:
        "# payments\r\n\r\nretry  5 on serverError,timeout backoff 1s x 1.5  # five\r\nwithin 2m\r\n"
    )
    #expect(laidOut == plain)
  }

  @Test("an error throws every diagnostic of the text, warnings and syntax errors too")
  func errorCarriesEverything() {
    #expect {
      try compile(policy: "retry 3 delay 0s\nretry 20000 bakoff 1s\nretry 2")
    } throws: { error in
      guard let error = error as? PolicyCompileError else { return false }
      return error.sourceName == "<policy>"
        && error.diagnostics.map(\.id) == [
          .zeroDelay, .unreachableRule, .countTooLarge, .unknownClause, .unreachableRule,
        ]
        && error.errors.count == 2
    }
  }

  @Test("warnings do not stop a policy from compiling")
  func warningsCompile() throws {
    let policy = try compile(policy: "retry 3 delay 0s max 1s\nretry 1")
    #expect(policy.rules.count == 2)
    let analysis = analyze(policy: "retry 3 delay 0s max 1s\nretry 1")
    #expect(analysis.diagnostics.map(\.id) == [.zeroDelay, .capWithoutDelay, .unreachableRule])
    #expect(analysis.policies == [policy])
  }

  @Test("empty text has one 'empty-policy' error")
  func emptyText() {
    for text in ["", "\n\n", "# nothing\n"] {
      #expect(analyze(policy: text).diagnostics.map(\.id) == [.emptyPolicy], "\(text)")
    }
    #expect(analyze(policy: "within 1m").diagnostics.map(\.id) == [.emptyPolicy])
  }

  @Test("a vocabulary makes unknown names errors with a suggestion")
  func vocabulary() throws {
    let vocabulary = Vocabulary(
      errorClasses: ["serverError", "unauthorized"], hooks: ["refreshToken"])
    #expect {
      try compile(policy: "retry 1 on unauthorised after refreshTokn", vocabulary: vocabulary)
    } throws: { error in
      (error as? PolicyCompileError)?.description == """
        <policy>:1:12: error: unknown error class 'unauthorised'; did you mean 'unauthorized'?
        <policy>:1:31: error: unknown hook 'refreshTokn'; did you mean 'refreshToken'?
        """
    }
    let policy = try compile(
      policy:
        "retry 1 on unauthorized, timeout after refreshToken\nretry 2 on any except serverError",
      vocabulary: vocabulary)
    #expect(policy.rules.map(\.errorClasses) == [["unauthorized", "timeout"], ["any"]])
  }

  @Test("a file compiles each policy by name")
  func file() throws {
    let source = """
      # policies for the payments client
      policy quick = retry 3 immediately

      policy payments {
          retry 1 on unauthorized after refreshToken
          retry 5 on serverError, timeout backoff 1s x1.5 jitter 10% max 30s
          within 2m
          timeout 10s
      }
      """
    let file = try compile(policyFile: source)
    #expect(file.policies.map(\.name) == ["quick", "payments"])
    #expect(file["quick"]?.rules == [RetryRule(behavior: .immediate(maxCount: 3))])
    let payments = try #require(file["payments"])
    #expect(payments.rules.count == 2)
    #expect(payments.deadline == .seconds(120))
    #expect(payments.attemptTimeout == .seconds(10))
    #expect(file["missing"] == nil)
  }

  @Test("a file's errors name the file; the good policies still analyze")
  func fileErrors() {
    let source = """
      policy quick = retry 3 immediately
      policy quick = retry 1 delay 1s
      policy empty {
      }
      policy slow = retry forever backoff 1s
      policy fine = retry 2 delay 1s
      """
    let analysis = analyze(policyFile: source)
    #expect(
      analysis.diagnostics.map(ExpectedDiagnostic.init) == [
        .init(.duplicatePolicy, 2, 8), .init(.emptyPolicy, 3, 8),
        .init(.foreverWithoutWithin, 5, 21),
      ])
    #expect(
      analysis.diagnostics.first?.notes.map(ExpectedDiagnostic.init) == [
        .init(.firstGivenHere, 1, 8)
      ])
    #expect(analysis.policies.map(\.name) == ["quick", "fine"])
    #expect {
      try compile(policyFile: source, sourceName: "payments.retry")
    } throws: { error in
      (error as? PolicyCompileError)?.description.hasPrefix("payments.retry:2:8: error:") == true
    }
  }

  @Test("a policy file is read from disk with its path as the source name")
  func fileFromDisk() throws {
    let directory = FileManager.default.temporaryDirectory
    let url = directory.appendingPathComponent(
      "compiler-tests-\(UInt64.random(in: 0...UInt64.max)).retry")
    try Data("policy p = retry 2 delay 1s\npolicy q = retry 1 jitter 5%\n".utf8).write(to: url)
    defer { try? FileManager.default.removeItem(at: url) }
    #expect {
      try PolicyFile(contentsOf: url)
    } throws: { error in
      guard let error = error as? PolicyCompileError else { return false }
      return error.sourceName == url.path && error.diagnostics.map(\.id) == [.jitterWithoutDelay]
    }
    try Data("policy p = retry 2 delay 1s\n".utf8).write(to: url)
    #expect(
      try PolicyFile(contentsOf: url)["p"]?.rules.first?.behavior
        == .delayed(maxCount: 2, delay: .seconds(1)))
  }

  /// The package's root, found from this file's path.
  static let packageRoot = RetryPolicyTestSupport.packageRoot

  @Test("every sample policy file compiles without an error")
  func samples() throws {
    let directory = Self.packageRoot.appendingPathComponent("Samples")
    let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
      .filter { $0.hasSuffix(".retry") }.sorted()
    #expect(!names.isEmpty)
    for name in names {
      let source = try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
      let analysis = analyze(policyFile: source)
      #expect(!analysis.hasErrors, "\(name): \(analysis.diagnostics)")
      #expect(!analysis.policies.isEmpty, "\(name)")
    }
  }

  /// The ids the checker reports (the parser's are its own tests' business).
  static let semanticIDs: Set<DiagnosticID> = [
    .duplicateClause, .conflictingDelay, .foreverWithoutWithin, .countTooLarge, .factorBelowOne,
    .factorTooLarge, .jitterOutOfRange, .jitterWithoutDelay, .zeroDuration, .durationTooLong,
    .budgetOutOfRange, .duplicatePolicy, .unknownErrorClass, .unknownHook, .classInOnAndExcept,
    .capBelowFirstDelay, .unreachableRule, .factorOfOne, .zeroDelay, .capWithoutDelay,
    .timeoutNotBelowDeadline,
  ]

  @Test("each mistake sample reports the semantic ids its header lists, on their lines")
  func mistakeSamples() throws {
    let directory = Self.packageRoot.appendingPathComponent("Samples/mistakes")
    let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
      .filter { $0.hasSuffix(".retry.bad") }.sorted()
    for name in names {
      let source = try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
      let found = analyze(policyFile: source).diagnostics
      // Header lines read `#   line 12: error factor-below-one: …`.
      for header in source.split(separator: "\n") where header.hasPrefix("#   line ") {
        let words = header.split(separator: " ")
        guard words.count > 4, let line = Int(words[2].dropLast()) else { continue }
        let ids = words[4].split(separator: ":").first.map(String.init) ?? ""
        guard let id = DiagnosticID(rawValue: ids), Self.semanticIDs.contains(id) else { continue }
        #expect(
          found.contains { $0.line == line && $0.id.rawValue == ids },
          "\(name): line \(line) \(ids); found \(found)")
      }
    }
  }
}
