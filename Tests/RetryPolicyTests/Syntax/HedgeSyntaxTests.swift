import Testing

@testable import RetryPolicy

@Suite("Hedge clause: syntax, checks and compiled form")
struct HedgeSyntaxTests {
  @Test(
    "'hedge N after D' compiles to a HedgePolicy, on a rule's line or its own",
    arguments: [
      ("retry 2 hedge 2 after 100ms", 2, Duration.milliseconds(100)),
      ("retry 1 on unavailable\nhedge 1 after 0s", 1, .zero),
      ("retry 3 immediately hedge 10 after 1.5s within 1m", 10, .milliseconds(1500)),
    ])
  func compiles(text: String, count: Int, delay: Duration) throws {
    let policy = try compile(policy: text)
    #expect(policy.hedge == HedgePolicy(count: count, delay: delay))
  }

  @Test("a policy without 'hedge' has none")
  func absent() throws {
    #expect(try compile(policy: "retry 2").hedge == nil)
  }

  @Test(
    "malformed or conflicting hedges are errors at their place",
    arguments: [
      ("retry 2 hedge", ["1:14 expected-hedge"]),
      ("retry 2 hedge 2", ["1:16 expected-hedge"]),
      ("retry 2 hedge 2 after", ["1:22 expected-duration"]),
      ("retry 2 hedge 1.5 after 1s", ["1:15 expected-hedge"]),
      ("retry 2 hedge 0 after 1s", ["1:15 hedge-count-out-of-range"]),
      ("retry 2 hedge 11 after 1s", ["1:15 hedge-count-out-of-range"]),
      ("retry 2 hedge 1 after 1s hedge 2 after 1s", ["1:26 duplicate-clause"]),
      (
        "retry 2 backoff 1s jitter full max 5s hedge 1 after 50ms",
        ["1:9 hedge-conflict", "1:20 hedge-conflict", "1:32 hedge-conflict"]
      ),
      (
        "retry 1 on a after refresh\nretry 2 honoring retry-after\nhedge 1 after 1s",
        ["1:14 hedge-conflict", "2:9 hedge-conflict"]
      ),
      (
        // More than the four kept inline, over two rules.
        "retry 1 on a delay 1s honoring retry-after\nretry 2 backoff 1s jitter full max 5s after r\n"
          + "hedge 1 after 50ms",
        [
          "1:14 hedge-conflict", "1:23 hedge-conflict", "2:9 hedge-conflict",
          "2:20 hedge-conflict", "2:32 hedge-conflict", "2:39 hedge-conflict",
        ]
      ),
    ])
  func errors(text: String, expected: [String]) {
    #expect(diagnosticsOf(text) == expected)
  }

  @Test("a policy of a file reports only its own conflicts, not those of the policy before it")
  func conflictsPerPolicy() {
    let text = """
      policy a = retry 2 backoff 1s jitter full max 5s after r delay 2s
      policy b = retry 2 delay 1s hedge 1 after 50ms
      """
    let ids = analyze(policyFile: text).diagnostics.map {
      "\($0.line):\($0.column) \($0.id.rawValue)"
    }
    #expect(ids == ["1:58 conflicting-delay", "2:20 hedge-conflict"])
  }

  @Test("the canonical printer and the compiled form's text print 'hedge N after D'")
  func prints() throws {
    let (syntax, diagnostics) = Parser.parseFile("policy p = retry 2   hedge 02 after 0.10s\n")
    #expect(diagnostics.isEmpty)
    #expect(CanonicalPrinter.print(syntax) == "policy p = retry 2 hedge 2 after 0.1s\n")
    let policy = try compile(policy: "retry 2 hedge 2 after 100ms within 1m")
    #expect(policy.description == "retry 2 within 1m hedge 2 after 100ms")
    #expect(try compile(policy: policy.description) == policy)
  }

  @Test("'hedge' is a keyword, no longer a name")
  func keyword() {
    #expect(diagnosticsOf("retry 2 on hedge") == ["1:12 expected-name", "1:17 expected-hedge"])
  }
}
