import Testing

@testable import RetryPolicy

/// The one pipeline: `compile` is `analyze`, then a throw on errors; warnings reach the caller.
@Suite("Analyze and compile pipeline")
struct PipelineTests {
  @Test("a policy file's warnings come back with its compiled policies")
  func fileWarnings() throws {
    let source = "policy ping = retry 3 delay 0s\npolicy fine = retry 2 delay 1s\n"
    let file = try compile(policyFile: source)
    #expect(file.policies.map(\.name) == ["ping", "fine"])
    #expect(file.warnings.map(ExpectedDiagnostic.init) == [.init(.zeroDelay, 1, 23)])
    #expect(file.warnings == analyze(policyFile: source).warnings)
  }

  @Test("analyze gives warnings beside errors, and compile's error carries both")
  func warningsBesideErrors() {
    let source = "retry 3 on a delay 0s\nretry 2 bakoff 1s"
    let analysis = analyze(policy: source)
    #expect(analysis.hasErrors)
    #expect(analysis.warnings.map(\.id) == [.zeroDelay])
    #expect(analysis.policies.isEmpty)
    #expect {
      try compile(policy: source)
    } throws: { error in
      (error as? PolicyCompileError)?.diagnostics == analysis.diagnostics
    }
  }

  @Test("diagnostics count columns in scalars after CR LF, multi-byte comments and names")
  func diagnosticPlacesFromOffsets() {
    let source = "retry 3 on a # → é\r\n  retry 2 delay 1d on x-é\r\npolicy"
    let analysis = analyze(policy: source)
    #expect(
      analysis.diagnostics.map { "\($0.id.rawValue) \($0.range)" } == [
        "unknown-unit 2:18-2:19", "invalid-name 2:23-2:26", "unexpected-token 3:1-3:7",
      ])
    #expect(analysis.diagnostics.map(\.line) == [2, 2, 3])
    #expect(analysis.diagnostics.map(\.column) == [18, 23, 1])
  }

  @Test("a warning-free policy has no warnings, and compiles to what analyze compiles")
  func cleanPolicy() throws {
    let text = "retry 5 on serverError backoff 1s x1.5 jitter 10% max 30s"
    let analysis = analyze(policy: text)
    #expect(analysis.diagnostics.isEmpty)
    #expect(analysis.warnings.isEmpty)
    #expect(try [compile(policy: text)] == analysis.policies)
  }

  @Test("the documentation's examples say what analyze finds")
  func documentedExamples() {
    #expect(
      analyze(policy: "retry 3 delay 0s").warnings.map(\.description) == [
        "1:9: warning: 'delay 0s' waits no time; write 'immediately'"
      ])
    #expect(
      analyze(policy: "retry 3 backoff 1s x1").warnings.first?.message
        == "a factor of 1 keeps the delay constant; write 'delay 1s'")
  }

  @Test("the analysis keeps the tree, its comments, and each policy's source ranges")
  func treeAndSources() throws {
    let source = """
      # comment
      policy a = retry 3 delay 0s
      policy a = retry 1
      policy b {
        retry 2 bakoff 1s
      }
      policy c {
        retry 1 on serverError backoff 1s within 1m
        retry 2 on 503, timeout delay 1s jitter full
        timeout 5s
      }
      """
    let analysis = analyze(policyFile: source)
    #expect(analysis.syntax.policies.map(\.name.text) == ["a", "a", "b", "c"])
    #expect(analysis.syntax.comments.map(\.text) == ["# comment"])
    #expect(analysis.policies.map(\.name) == ["a", "c"])
    let c = try #require(analysis.checked.last)
    #expect(c.range.start.line == 7 && c.range.end.line == 11)
    #expect(c.rules.map(\.headRange.start.line) == [8, 9])
    #expect(c.rules[0].clauses.map(\.clause) == [.on, .backoff])
    #expect(c.rules[1].clauses.map(\.clause) == [.on, .delay, .jitter])
    #expect(c.rules[1].errorClasses.map(\.text) == ["503", "timeout"])
    #expect(c.rules[1].clause(.jitter)?.keywordRange.start.column == 36)
    #expect(c.policyWideClauses.map(\.clause) == [.within, .timeout])
    #expect(c.policyWide(.within)?.keywordRange.start.line == 8)
    #expect(c.policyWide(.timeout)?.range.start.line == 10)
  }

  @Test("a suggestion is a fix-it: an edit of a range, which the message renders")
  func fixIts() throws {
    let clause = try #require(analyze(policy: "retry 3 bakoff 1s").diagnostics.first)
    #expect(clause.summary == "unknown clause 'bakoff'")
    #expect(clause.message == "unknown clause 'bakoff'; did you mean 'backoff'?")
    let fix = try #require(clause.fixIts.first)
    #expect(fix.replacement == "backoff")
    #expect(fix.range.start.offset == 8 && fix.range.end.offset == 14)
    // The same duration in a unit of the language replaces the number too.
    let unit = try #require(analyze(policy: "retry 3 delay 2d").diagnostics.first)
    #expect(unit.range.start.offset == 15)
    #expect(unit.fixIts.map(\.replacement) == ["48h"])
    #expect(unit.fixIts.first?.range.start.offset == 14)
    // A message without a suggestion has no fix-it.
    #expect(analyze(policy: "retry 3 delay 2us").diagnostics.first?.fixIts == [])
  }

  @Test("a syntax error belongs to the declaration being read, not to the next one")
  func syntaxErrorsByDeclaration() {
    let source = "policy a {\n  retry 3\npolicy b = retry 2 delay 1s\n"
    let analysis = analyze(policyFile: source)
    #expect(analysis.diagnostics.map(\.id) == [.unterminatedBlock])
    #expect(analysis.policies.map(\.name) == ["b"])
  }

  @Test("a declaration with a syntax error and no rule reports only the syntax error")
  func noRuleAfterSyntaxError() {
    let analysis = analyze(policyFile: "policy a {\n  within 1m bakoff\n}\npolicy b = retry 1\n")
    #expect(analysis.diagnostics.map(\.id) == [.unknownClause])
    #expect(analysis.policies.map(\.name) == ["b"])
  }
}
