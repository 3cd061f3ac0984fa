import Testing

@testable import RetryPolicy

/// The first message of compiling `text`.
private func messageOf(_ text: String) -> String {
  do {
    _ = try compile(policy: text)
    return ""
  } catch let error as PolicyCompileError {
    return error.diagnostics.first?.message ?? ""
  } catch {
    return "\(error)"
  }
}

@Suite("Breaker clause: syntax, checks, printing and compiled form")
struct BreakerSyntaxTests {
  @Test("the contract's example compiles to the expected CircuitBreakerPolicy")
  func contractExample() throws {
    let policy = try compile(policy: "retry 3 on serverError breaker 50% over 10s min 5 for 2s")
    #expect(
      policy.breaker
        == CircuitBreakerPolicy(
          failurePercent: 50, window: .seconds(10), minimumAttempts: 5,
          openDuration: .seconds(2)))
  }

  @Test(
    "'breaker' compiles with the defaults for what is left out",
    arguments: [
      ("retry 3 breaker 50%", CircuitBreakerPolicy(failurePercent: 50)),
      (
        "retry 3 breaker 25% for 1m",
        CircuitBreakerPolicy(failurePercent: 25, openDuration: .seconds(60))
      ),
      ("retry 3 breaker 100% min 1", CircuitBreakerPolicy(failurePercent: 100, minimumAttempts: 1)),
      (
        "retry 3 on a\nbreaker 1% over 24h min 1000000 for 100ms",
        CircuitBreakerPolicy(
          failurePercent: 1, window: .seconds(86_400), minimumAttempts: 1_000_000,
          openDuration: .milliseconds(100))
      ),
      (
        "retry 3 breaker 50% over 1s", CircuitBreakerPolicy(failurePercent: 50, window: .seconds(1))
      ),
    ])
  func compiles(text: String, expected: CircuitBreakerPolicy) throws {
    #expect(try compile(policy: text).breaker == expected)
  }

  @Test("a policy without 'breaker' has none")
  func absent() throws {
    #expect(try compile(policy: "retry 2").breaker == nil)
  }

  @Test(
    "malformed, out-of-range or repeated breakers are errors at their place",
    arguments: [
      ("retry 2 breaker", ["1:16 expected-percent"]),
      ("retry 2 breaker 50", ["1:19 expected-percent"]),
      ("retry 2 breaker 50% over", ["1:25 expected-duration"]),
      ("retry 2 breaker 50% min", ["1:24 expected-count"]),
      ("retry 2 breaker 50% min 2.5", ["1:25 expected-count"]),
      ("retry 2 breaker 50% for 5", ["1:25 missing-unit"]),
      ("retry 2 breaker 0%", ["1:17 breaker-out-of-range"]),
      ("retry 2 breaker 101%", ["1:17 breaker-out-of-range"]),
      ("retry 2 breaker 12.5%", ["1:17 breaker-out-of-range"]),
      ("retry 2 breaker 50% over 999ms", ["1:26 breaker-out-of-range"]),
      ("retry 2 breaker 50% over 86401s", ["1:26 breaker-out-of-range"]),
      ("retry 2 breaker 50% min 0", ["1:25 breaker-out-of-range"]),
      ("retry 2 breaker 50% min 1000001", ["1:25 breaker-out-of-range"]),
      ("retry 2 breaker 50% for 99ms", ["1:25 breaker-out-of-range"]),
      ("retry 2 breaker 50% for 25h", ["1:25 breaker-out-of-range"]),
      ("retry 2 breaker 50% breaker 60%", ["1:21 duplicate-clause"]),
      ("retry 2 breaker 50%\nbreaker 60%", ["2:1 duplicate-clause"]),
      // The settings come in the order of the grammar, each once.
      ("retry 2 breaker 50% for 5s over 10s", ["1:28 misplaced-word"]),
      ("retry 2 breaker 50% min 5 over 1s", ["1:27 misplaced-word"]),
      ("retry 2 breaker 50% over 1s over 2s", ["1:29 repeated-word"]),
      (
        "retry 2 breaker 50% over 1s for 2s min 5 over 3s",
        ["1:36 misplaced-word", "1:42 repeated-word"]
      ),
    ])
  func errors(text: String, expected: [String]) {
    #expect(diagnosticsOf(text) == expected)
  }

  @Test(
    "an out-of-range setting's message states the range",
    arguments: [
      (
        "retry 2 breaker 0%",
        "breaker 0% is out of range; it must be a whole percentage, 1% to 100%"
      ),
      ("retry 2 breaker 50% over 48h", "breaker 'over' 48h is out of range; it must be 1s to 24h"),
      ("retry 2 breaker 50% min 0", "breaker 'min' 0 is out of range; it must be 1 to 1000000"),
      (
        "retry 2 breaker 50% for 10ms",
        "breaker 'for' 10ms is out of range; it must be 100ms to 24h"
      ),
    ])
  func rangeMessages(text: String, expected: String) {
    #expect(messageOf(text) == expected)
  }

  @Test(
    "the canonical printer normalizes the clause and keeps what was written",
    arguments: [
      ("policy p = retry 2   breaker 050%\n", "policy p = retry 2 breaker 50%\n"),
      (
        "policy p = retry 2 breaker 50% over 30.0s  min 020 for 5s\n",
        "policy p = retry 2 breaker 50% over 30s min 20 for 5s\n"
      ),
      ("policy p = retry 2 breaker 50% for 1.50s\n", "policy p = retry 2 breaker 50% for 1.5s\n"),
      (
        "policy p = retry 2 breaker 50% min 3 within 1m\n",
        "policy p = retry 2 breaker 50% min 3 within 1m\n"
      ),
    ])
  func prints(text: String, expected: String) {
    let (syntax, diagnostics) = Parser.parseFile(text)
    #expect(diagnostics.isEmpty)
    #expect(CanonicalPrinter.print(syntax) == expected)
    #expect(CanonicalPrinter.print(Parser.parseFile(expected).0) == expected)
  }

  @Test("the compiled form prints every setting, and that text compiles back to it")
  func description() throws {
    let policy = try compile(policy: "retry 2 on a breaker 50% for 2s within 1m")
    #expect(policy.description == "retry 2 on a within 1m breaker 50% over 30s min 20 for 2s")
    #expect(try compile(policy: policy.description) == policy)
  }

  @Test("'over', 'min' and 'for' stay names outside the clause; 'breaker' is a keyword")
  func contextualWords() throws {
    let policy = try compile(policy: "retry 2 on over, min, for after min breaker 50% min 2")
    #expect(policy.rules.first?.hook == "min")
    #expect(policy.breaker?.minimumAttempts == 2)
    #expect(diagnosticsOf("retry 2 on breaker").first == "1:12 expected-name")
    let file = analyze(
      policyFile: "policy over = retry 1 breaker 5%\npolicy for = retry 2 on min\n")
    #expect(file.diagnostics.isEmpty)
    #expect(file.policies.count == 2)
  }
}
