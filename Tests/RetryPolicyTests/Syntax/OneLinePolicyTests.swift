import RetryPolicyTesting
import Testing

@testable import RetryPolicy

/// One-line policies through the single front end: what `compile(policy:)` returns is what
/// `analyze(policy:)` finds, on common lines, on mistakes and on random lines.
@Suite("One-line policies")
struct OneLinePolicyTests {
  /// Plainly valid one-liners: each compiles without a diagnostic, warnings included.
  static let validTexts: [String] = [
    "retry 5 on serverError backoff 1s x1.5 jitter 10% max 30s",
    "retry 3", "retry 0 immediately", "  retry 3\tdelay 250ms  ", "retry 3 backoff 1s",
    "retry 5 backoff 2m x1000", "retry 4 backoff 1s +500ms", "retry 4 backoff 1s+0ms",
    "retry 3 delays 1s, 2s,5s", "retry 3 delays 0s jitter full", "retry 3 on a,b except c",
    "retry 3 on timeout after refreshToken honoring retry-after delay 1s jitter equal",
    "retry forever backoff 1s jitter decorrelated within 2m timeout 10s budget 12.5%",
    "retry 2 backoff 1s x 1.25 jitter 100 % max 1s within 1h", "retry 1 on any",
    "retry 3 on x509Error backoff 1s x1.5", "retry 3\n", "retry 3 # comment", "retry 3\r\n",
  ]

  /// Lines with errors or warnings, and lines that are not one plain line.
  static let otherTexts: [String] = [
    "", "   ", "retry", "retry 3.5", "retry 10001", "retry 99999999999999999999", "retry forever",
    "retry 3 delay 0s", "retry 3 backoff 0s", "retry 3 backoff 1s x1", "retry 3 backoff 1s x0.5",
    "retry 3 backoff 1s x1001", "retry 3 backoff 1s x1.5s", "retry 3 jitter 10%",
    "retry 3 max 1s", "retry 3 delays 0s max 1s", "retry 3 delay 2s max 1s",
    "retry 3 delay 1s jitter 0%", "retry 3 delay 1s jitter 101%", "retry 3 delay 1s jitter 10",
    "retry 3 on a except a", "retry 3 on a on b", "retry 3 delay 1s backoff 1s",
    "retry 3 after timeout", "retry 3 on x1", "retry 3 on policy", "retry 3 within 1s timeout 1s",
    "retry 3 budget 0%", "retry 3 delay 10001h", "retry 3 delay 1sec", "retry 3 delay 1",
    "retry 3 delay 1.s", "retry 3 honoring retry-afterx", "retry 3 honoring retry",
    "retry 3 on café", "retry 3 on a-b", "within 1m", "policy p = retry 3", "retry 3 retry 4",
    "retry 3 delay 1s,", "retry 3 on a,", "retry 3 delays 1s, 2s max 1500ms",
    "retry 3 backoff 1s x1.5 +1s",
  ]

  @Test("common one-liners compile without a diagnostic, warnings included")
  func validLines() throws {
    for text in Self.validTexts {
      let analysis = analyze(policy: text)
      #expect(analysis.diagnostics.isEmpty, "\(text)")
      #expect(try [compile(policy: text)] == analysis.policies, "\(text)")
    }
  }

  @Test("compile(policy:) returns what analyze(policy:) compiles, or throws its diagnostics")
  func mistakes() {
    for text in Self.validTexts + Self.otherTexts { expectAgreement(text) }
  }

  @Test("on lines made of random clauses and stray pieces, compile and analyze agree")
  func randomLines() {
    let pieces = [
      "retry 5", "retry 0", "retry forever", "retry 10001", "on serverError", "on a, b",
      "on timeout", "except a", "except serverError", "immediately", "delay 0s", "delay 1s",
      "backoff 1s", "backoff 1s x1.5", "backoff 1s x 1", "backoff 1s +0ms", "backoff 0s",
      "delays 0s, 0s", "delays 1s,2s", "jitter 10%", "jitter 0%", "jitter 100 %", "jitter full",
      "max 30s", "max 500ms", "max 0s", "after refresh", "after timeout", "honoring retry-after",
      "within 2m", "within 1s", "timeout 10s", "budget 10%", "budget 101%", "x1.5", "1s", ",",
      "%", "retry", "# c", "\n", "10001h", "1.5.5s", "é", "-", "x",
    ]
    var generator = SeededRandomNumberGenerator(seed: 0x5EED)
    var compiled = 0
    for _ in 0..<20000 {
      var text = ""
      for position in 0..<Int(generator.next() % 7 + 1) {
        if position > 0 { text += ["", " ", "  ", "\t"][Int(generator.next() % 4)] }
        // Half the lines start with a rule, so that many are valid.
        let piece =
          position == 0 && generator.next() % 2 == 0
          ? "retry 3" : pieces[Int(generator.next() % UInt64(pieces.count))]
        text += piece
      }
      if expectAgreement(text) { compiled += 1 }
    }
    // Enough of the lines are valid for the comparison to mean something.
    #expect(compiled > 200)
  }

  /// Whether `compile(policy:)` compiled `text`; expects it to agree with `analyze(policy:)`.
  @discardableResult
  private func expectAgreement(_ text: String) -> Bool {
    let analysis = analyze(policy: text)
    do {
      let policy = try compile(policy: text)
      #expect(!analysis.hasErrors, "\(text)")
      #expect(analysis.policies == [policy], "\(text)")
      return true
    } catch let error as PolicyCompileError {
      #expect(analysis.hasErrors, "\(text)")
      #expect(error.diagnostics == analysis.diagnostics, "\(text)")
    } catch {
      Issue.record("compile(policy:) threw \(error) for \(text)")
    }
    return false
  }
}
