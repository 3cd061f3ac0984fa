import Foundation
import RetryPolicy
import Testing

@testable import RetryPolicyCLI
@testable import RetryPolicyEngines

@Suite("Explain rendering")
struct ExplainRenderingTests {
  /// `retry 5 on serverError backoff 1s x1.5 jitter 10%`, the contract's worked example.
  static let worked = CompiledPolicy(rules: [
    RetryRule(
      behavior: .exponential(maxCount: 5, initial: .seconds(1), multiplier: 1.5),
      errorClasses: ["serverError"], jitter: .proportional(fraction: 0.1))
  ])

  /// The contract's `payments` policy.
  static let payments = CompiledPolicy(
    name: "payments",
    rules: [
      RetryRule(
        behavior: .immediate(maxCount: 1), errorClasses: ["unauthorized"], hook: "refreshToken"),
      RetryRule(
        behavior: .exponential(maxCount: 5, initial: .seconds(1), multiplier: 1.5),
        errorClasses: ["serverError", "timeout"], jitter: .proportional(fraction: 0.1),
        maxDelay: .seconds(30)),
    ],
    deadline: .seconds(120), attemptTimeout: .seconds(10))

  static func object(_ text: String) throws -> [String: Any] {
    let value = try JSONSerialization.jsonObject(with: Data(text.utf8))
    return try #require(value as? [String: Any])
  }

  @Test("the JSON has the contract's shape and numbers for the worked example")
  func contractJSON() throws {
    let text = ExplainRendering.json(Self.worked)
    let root = try Self.object(text)
    let rules = try #require(root["rules"] as? [[String: Any]])
    #expect(rules.count == 1)
    let rule = rules[0]
    #expect(rule["on"] as? [String] == ["serverError"])
    #expect(rule["except"] as? [String] == [])
    let behavior = try #require(rule["behavior"] as? [String: Any])
    #expect(behavior["kind"] as? String == "exponential")
    #expect(behavior["maxCount"] as? Int == 5)
    #expect(behavior["initial"] as? Double == 1.0)
    #expect(behavior["multiplier"] as? Double == 1.5)
    let jitter = try #require(rule["jitter"] as? [String: Any])
    #expect(jitter["kind"] as? String == "proportional")
    #expect(jitter["fraction"] as? Double == 0.1)
    #expect(rule["max"] is NSNull)
    let schedule = try #require(rule["schedule"] as? [[String: Any]])
    #expect(schedule.map { $0["retry"] as? Int } == [1, 2, 3, 4, 5])
    #expect(schedule.map { $0["delay"] as? Double } == [1.0, 1.5, 2.25, 3.375, 5.0625])
    #expect(schedule[0]["min"] as? Double == 0.9)
    #expect(schedule[0]["max"] as? Double == 1.1)
    #expect(schedule[1]["min"] as? Double == 1.35)
    #expect(schedule[1]["max"] as? Double == 1.65)
    #expect(rule["truncated"] as? Bool == false)
    #expect(root["within"] is NSNull)
    #expect(root["timeout"] is NSNull)
    #expect(root["budget"] is NSNull)
  }

  @Test("keys come in the contract's order and durations are exact decimals")
  func keyOrderAndNumbers() {
    let text = ExplainRendering.json(Self.worked)
    let keys = [
      "\"rules\"", "\"on\"", "\"except\"", "\"behavior\"", "\"jitter\"", "\"max\"",
      "\"schedule\"", "\"truncated\"", "\"within\"", "\"timeout\"", "\"budget\"",
    ]
    let positions = keys.compactMap { text.range(of: $0)?.lowerBound }
    #expect(positions.count == keys.count)
    #expect(positions == positions.sorted())
    #expect(
      text.contains(#"{"kind": "exponential", "maxCount": 5, "initial": 1.0, "multiplier": 1.5}"#))
    #expect(text.contains(#"{"retry": 1, "delay": 1.0, "min": 0.9, "max": 1.1}"#))
    #expect(text.contains(#"{"retry": 5, "delay": 5.0625, "min": 4.55625, "max": 5.56875}"#))
  }

  @Test(
    "each behavior kind has the contract's fields",
    arguments: [
      (RepeatBehavior.immediate(maxCount: 3), #"{"kind": "immediate", "maxCount": 3}"#),
      (
        .delayed(maxCount: 2, delay: .milliseconds(500)),
        #"{"kind": "delayed", "maxCount": 2, "delay": 0.5}"#
      ),
      (
        .linear(maxCount: nil, initial: .seconds(1), increment: .milliseconds(250)),
        #"{"kind": "linear", "maxCount": null, "initial": 1.0, "increment": 0.25}"#
      ),
      (
        .customTimerDelayed(maxCount: 4, delays: [.seconds(1), .seconds(5), .seconds(60)]),
        #"{"kind": "custom", "maxCount": 4, "delays": [1.0, 5.0, 60.0]}"#
      ),
      (
        .exponential(maxCount: 1, initial: .milliseconds(100), multiplier: 2),
        #"{"kind": "exponential", "maxCount": 1, "initial": 0.1, "multiplier": 2}"#
      ),
    ])
  func behaviorJSON(behavior: RepeatBehavior, expected: String) {
    #expect(JSONWriter().write(ExplainRendering.jsonValue(behavior)) == expected)
  }

  @Test(
    "each jitter kind is named as in the contract",
    arguments: [
      (Jitter.proportional(fraction: 0.25), #"{"kind": "proportional", "fraction": 0.25}"#),
      (.full, #"{"kind": "full"}"#), (.equal, #"{"kind": "equal"}"#),
      (.decorrelated, #"{"kind": "decorrelated"}"#),
    ])
  func jitterJSON(jitter: Jitter, expected: String) {
    #expect(JSONWriter().write(ExplainRendering.jsonValue(jitter)) == expected)
  }

  @Test("retry forever lists 100 retries and is truncated; the budget is a ratio")
  func foreverJSON() throws {
    let policy = CompiledPolicy(
      rules: [RetryRule(behavior: .delayed(maxCount: nil, delay: .seconds(2)))],
      deadline: .seconds(60), budgetRatio: 0.1)
    let root = try Self.object(ExplainRendering.json(policy))
    let rule = try #require((root["rules"] as? [[String: Any]])?.first)
    #expect((rule["schedule"] as? [Any])?.count == 100)
    #expect(rule["truncated"] as? Bool == true)
    #expect(rule["worstCaseTotal"] is NSNull)
    #expect(root["within"] as? Double == 60.0)
    #expect(root["budget"] as? Double == 0.1)
  }

  @Test("the policy is written back in the language")
  func policyText() {
    #expect(
      ExplainRendering.policyLines(Self.worked) == [
        "retry 5 on serverError backoff 1s x1.5 jitter 10%"
      ])
    #expect(
      ExplainRendering.policyLines(Self.payments) == [
        "retry 1 on unauthorized immediately after refreshToken",
        "retry 5 on serverError, timeout backoff 1s x1.5 jitter 10% max 30s",
        "within 2m timeout 10s",
      ])
    #expect(
      Self.worked.rules[0].behavior.description
        == "exponential(maxCount: 5, initial: 1s, multiplier: 1.5)")
  }

  @Test("the text form matches its golden files")
  func textGolden() {
    Golden.check(ExplainRendering.text(Self.worked), against: "render-worked-example.txt")
    Golden.check(ExplainRendering.text(Self.payments), against: "render-payments.txt")
    let forever = CompiledPolicy(
      rules: [
        RetryRule(
          behavior: .linear(maxCount: nil, initial: .seconds(1), increment: .seconds(1)),
          jitter: .full, maxDelay: .seconds(10), honorsRetryAfter: true)
      ], deadline: .seconds(60), budgetRatio: 0.2)
    Golden.check(ExplainRendering.text(forever), against: "render-forever.txt")
  }

  @Test("color adds ANSI escapes only when asked")
  func color() {
    #expect(!ExplainRendering.text(Self.worked).contains("\u{1B}"))
    #expect(ExplainRendering.text(Self.worked, usesColor: true).contains("\u{1B}[1m"))
  }

  @Test("the worst-case total adds the maxima and reads as minutes when long")
  func worstCase() {
    let text = ExplainRendering.text(Self.worked)
    #expect(text.contains("worst-case total: 14.50625s\n"))
    #expect(ExplainRendering.readableSeconds(.seconds(3723)) == "3723s (1h 2m 3s)")
    #expect(ExplainRendering.readableSeconds(.milliseconds(74500)) == "74.5s (1m 14.5s)")
  }
}

@Suite("JSON writer")
struct JSONWriterTests {
  @Test("strings are escaped and stay valid JSON")
  func escaping() throws {
    let text = JSONWriter().write(.string("a\"b\\c\nd\u{1}é\u{2028}"))
    #expect(text == #""a\"b\\c\nd\u0001é\u2028""#)
    let parsed = try JSONSerialization.jsonObject(
      with: Data(text.utf8), options: .fragmentsAllowed)
    #expect(parsed as? String == "a\"b\\c\nd\u{1}é\u{2028}")
  }

  @Test(
    "durations are written exactly from their components",
    arguments: [
      (Duration.seconds(1), "1.0"), (.milliseconds(1350), "1.35"), (.nanoseconds(1), "0.000000001"),
      (.seconds(1_000_000_000), "1000000000.0"), (.zero, "0.0"),
    ])
  func seconds(duration: Duration, expected: String) {
    #expect(JSONValue.secondsLiteral(duration) == expected)
  }

  @Test("doubles drop binary noise; non-finite values are null")
  func doubles() {
    #expect(JSONValue.double(0.1) == .number("0.1"))
    #expect(JSONValue.double(0.333) == .number("0.333"))
    #expect(JSONValue.double(2) == .number("2"))
    #expect(JSONValue.double(.infinity) == .null)
    #expect(JSONValue.double(.nan) == .null)
  }

  @Test("pretty output nests with two spaces and keeps short scalar collections inline")
  func pretty() {
    let value = JSONValue.object([
      JSONMember("a", .array([.int(1), .int(2)])),
      JSONMember("b", .object([JSONMember("c", .array([.object([JSONMember("d", .null)])]))])),
      JSONMember("e", .array([])),
    ])
    #expect(
      JSONWriter().write(value) == """
        {
          "a": [1, 2],
          "b": {
            "c": [
              {"d": null}
            ]
          },
          "e": []
        }
        """)
    #expect(
      JSONWriter(isPretty: false).write(value) == #"{"a":[1,2],"b":{"c":[{"d":null}]},"e":[]}"#)
  }
}
