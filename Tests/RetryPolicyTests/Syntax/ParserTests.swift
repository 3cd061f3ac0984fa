import RetryPolicy
import Testing

/// The clauses of the only line of a policy text that parses without diagnostics.
private func clauses(_ source: String) -> [ClauseSyntax] {
  let (body, _, diagnostics) = Parser.parsePolicy(source)
  #expect(diagnostics.isEmpty, "\(diagnostics)")
  return body.lines.first?.clauses ?? []
}

/// `id@line:column` for each diagnostic, the form the tables below use.
private func summary(_ diagnostics: [Diagnostic]) -> [String] {
  diagnostics.map { "\($0.id.rawValue)@\($0.line):\($0.column)" }
}

@Suite("Parser")
struct ParserTests {
  @Test("the worked example parses into its head and four clauses, each with its range")
  func workedExample() throws {
    let source = "retry 5 on serverError backoff 1s x1.5 jitter 10% max 30s"
    let (body, comments, diagnostics) = Parser.parsePolicy(source)
    #expect(diagnostics.isEmpty)
    #expect(comments.isEmpty)
    let line = try #require(body.lines.first)
    #expect(body.lines.count == 1)
    #expect(line.head?.count == .times(5))
    #expect(line.head?.countRange.description == "1:7-1:8")
    #expect(line.clauses.map(\.keyword) == ["on", "backoff", "jitter", "max"])
    #expect(line.clauses.map(\.keywordRange.start.column) == [9, 24, 40, 51])
    #expect(line.clauses.map(\.range.end.column) == [23, 39, 50, 58])
    #expect(line.range.description == "1:1-1:58")
    #expect(line.clauses[1].durations == [.seconds(1)])
    #expect(line.clauses[1].numberValue == 1.5)
    guard case .factor(let factor)? = line.clauses[1].argument(1) else {
      Issue.record("expected a backoff with a factor")
      return
    }
    #expect(factor.text == "1.5")
    #expect(factor.range.description == "1:36-1:39")
  }

  @Test("every kind of clause is recorded in the order written, with its arguments")
  func everyClause() {
    let kinds = clauses(
      "retry forever on a, timeout except b immediately delay 2s backoff 1s backoff 1s x 3 "
        + "backoff 1s +500ms delays 1s, 2s, 3s jitter 10% jitter full jitter equal "
        + "jitter decorrelated max 1h after refreshToken honoring retry-after within 2m "
        + "timeout 10s budget 5%")
    let expected: [(String, [String], [Duration?], Double?)] = [
      ("on", ["a", "timeout"], [], nil),
      ("except", ["b"], [], nil),
      ("immediately", [], [], nil),
      ("delay", [], [.seconds(2)], nil),
      ("backoff", [], [.seconds(1)], nil),
      ("backoff", [], [.seconds(1)], 3),
      ("backoff", [], [.seconds(1), .milliseconds(500)], nil),
      ("delays", [], [.seconds(1), .seconds(2), .seconds(3)], nil),
      ("jitter", [], [], 10),
      ("jitter", ["full"], [], nil),
      ("jitter", ["equal"], [], nil),
      ("jitter", ["decorrelated"], [], nil),
      ("max", [], [.seconds(3600)], nil),
      ("after", ["refreshToken"], [], nil),
      ("honoring retry-after", [], [], nil),
      ("within", [], [.seconds(120)], nil),
      ("timeout", [], [.seconds(10)], nil),
      ("budget", [], [], 5),
    ]
    #expect(kinds.count == expected.count)
    for (clause, (keyword, names, durations, number)) in zip(kinds, expected) {
      #expect(clause.keyword == keyword)
      #expect(clause.nameTexts == names, "\(keyword)")
      #expect(clause.durations == durations, "\(keyword)")
      #expect(clause.numberValue == number, "\(keyword)")
    }
  }

  @Test(
    "durations are exact to the nanosecond",
    arguments: [
      ("1.5s", Duration.nanoseconds(1_500_000_000)), ("250ms", .milliseconds(250)),
      ("1.5ms", .microseconds(1500)), ("2m", .seconds(120)), ("0.1h", .seconds(360)),
      ("01.50s", .milliseconds(1500)), ("0.000000001s", .nanoseconds(1)),
      ("0.0000000015s", .nanoseconds(2)), ("0.123456789h", .nanoseconds(444_444_440_400)),
      ("2562047h", .seconds(2_562_047 * 3600)),
    ])
  func exactDurations(text: String, expected: Duration) {
    #expect(clauses("retry 1 delay \(text)").first?.durations == [expected])
  }

  @Test("a policy line may hold only policy-wide clauses; blank and comment lines are skipped")
  func policyWideLines() {
    let source = "\n# comment\nretry 3 on a\n\n  within 2m timeout 5s  # deadline\r\n"
    let (body, comments, diagnostics) = Parser.parsePolicy(source)
    #expect(diagnostics.isEmpty)
    #expect(body.lines.count == 2)
    #expect(body.lines[1].head == nil)
    #expect(body.lines[1].clauses.map(\.keyword) == ["within", "timeout"])
    #expect(body.lines[1].range.description == "5:3-5:23")
    #expect(comments.map(\.text) == ["# comment", "# deadline"])
  }

  @Test(
    "each syntax error of policy text is reported at the offending token",
    arguments: [
      ("retry 3 delay 5d", "unknown-unit@1:16"),
      ("retry 3 delay 5", "missing-unit@1:15"),
      ("retry 3 bakoff 1s", "unknown-clause@1:9"),
      ("retry 3 delay 1s ,", "unexpected-token@1:18"),
      ("retry 3 retry 4", "unexpected-token@1:9"),
      ("retry backoff 1s", "expected-count@1:7"),
      ("retry 1.5", "expected-count@1:7"),
      ("retry", "expected-count@1:6"),
      ("retry 3 delay", "expected-duration@1:14"),
      ("retry 3 max immediately", "expected-duration@1:13"),
      ("retry 3 on", "expected-name@1:11"),
      ("retry 3 on serverError,", "expected-name@1:24"),
      ("retry 3 on delay 1s", "expected-name@1:12"),
      ("retry 3 after 5", "expected-name@1:15"),
      ("retry 3 jitter 10", "expected-percent@1:18"),
      ("budget", "expected-percent@1:7"),
      ("retry 3 backoff 1s x", "expected-factor@1:21"),
      ("retry 3 backoff 1s x 2s", "expected-factor@1:22"),
      ("retry 3 backoff 1s +", "expected-factor@1:21"),
      ("retry 3 jitter big", "expected-jitter@1:16"),
      ("retry 3 honoring retry_after", "expected-retry-after@1:18"),
      ("retry 3 on foo-bar", "invalid-name@1:12"),
      ("on serverError", "expected-retry@1:1"),
      ("within 1m on serverError", "expected-retry@1:11"),
      ("", "empty-policy@1:1"),
      ("# nothing\n\n", "empty-policy@1:1"),
      ("retry 3 \u{0}", "unexpected-character@1:9"),
      ("retry 3 \u{FFFD}", "unexpected-character@1:9"),
      ("retry 3 delay 1.", "malformed-number@1:15"),
      ("retry 99999999999999999999 delay 1s", "number-too-large@1:7"),
      ("retry 3 delay 9999999999999h", "duration-too-long@1:15"),
      ("retry 3 jitter 1\(String(repeating: "0", count: 400))%", "number-too-large@1:16"),
    ])
  func policyTextErrors(source: String, expected: String) {
    let (_, _, diagnostics) = Parser.parsePolicy(source)
    #expect(summary(diagnostics) == [expected])
  }

  @Test(
    "each syntax error of a file is reported at the offending token",
    arguments: [
      ("policy = retry 3", "expected-policy-name@1:8"),
      ("policy retry = retry 3", "expected-policy-name@1:8"),
      ("policy\n", "expected-policy-name@1:7"),
      ("policy my-policy = retry 3", "invalid-name@1:8"),
      ("policy a retry 3", "expected-policy-body@1:10"),
      ("policy a =\n", "expected-policy-body@1:11"),
      ("retry 3", "expected-policy@1:1"),
      ("polcy a = retry 3", "expected-policy@1:1"),
      ("policy a {\n  retry 3\n", "unterminated-block@3:1"),
      ("policy a { retry 3 } retry 4", "unexpected-token@1:22"),
      ("policy a = retry 3 }", "unexpected-token@1:20"),
      ("policy a {\n  on b\n}", "expected-retry@2:3"),
    ])
  func fileErrors(source: String, expected: String) {
    let (_, diagnostics) = Parser.parseFile(source)
    #expect(summary(diagnostics) == [expected])
  }

  @Test(
    "messages say what is wrong and how to fix it",
    arguments: [
      ("retry 3 delay 5d", "unknown unit 'd'; did you mean '120h'?"),
      ("retry 3 delay 5sec", "unknown unit 'sec'; did you mean 's'?"),
      ("retry 3 delay 5", "expected a unit after '5'; write '5s' or '5ms'"),
      ("retry 3 bakoff 1s", "unknown clause 'bakoff'; did you mean 'backoff'?"),
      ("retry backoff 1s", "expected a retry count or 'forever' after 'retry'"),
      ("retry 3 delay", "expected a duration after 'delay', such as '500ms' or '2s'"),
      ("retry 3 honoring", "expected 'retry-after' after 'honoring'"),
      ("retry 3 backoff 1s x", "expected a number after 'x', such as 'x1.5'"),
      (
        "retry 3 jitter ful",
        "expected a percentage, 'full', 'equal' or 'decorrelated' "
          + "after 'jitter'; did you mean 'full'?"
      ),
      ("retry 3 on", "expected an error class name after 'on', such as 'serverError'"),
    ])
  func messages(source: String, message: String) {
    let (_, _, diagnostics) = Parser.parsePolicy(source)
    #expect(diagnostics.map(\.message) == [message])
  }

  @Test(
    "a unit suggestion never changes the duration's magnitude",
    arguments: [
      ("retry 3 delay 2d", "unknown unit 'd'; did you mean '48h'?"),
      ("retry 3 delay 1.5days", "unknown unit 'days'; did you mean '36h'?"),
      ("retry 3 delay 2w", "unknown unit 'w'; did you mean '336h'?"),
      ("retry 3 delay 0.01d", "unknown unit 'd'; did you mean '864s'?"),
      ("retry 3 delay 2Hours", "unknown unit 'Hours'; did you mean 'h'?"),
      ("retry 3 delay 2secnds", "unknown unit 'secnds'; did you mean 's'?"),
      (
        "retry 3 delay 1us",
        "unknown unit 'us'; microseconds are not supported, the smallest unit is 'ms'"
      ),
      (
        "retry 3 delay 500ns",
        "unknown unit 'ns'; nanoseconds are not supported, the smallest unit is 'ms'"
      ),
      ("retry 3 delay 5x", "unknown unit 'x'; use 'ms', 's', 'm' or 'h'"),
      ("retry 3 delay 5sm", "unknown unit 'sm'; use 'ms', 's', 'm' or 'h'"),
    ])
  func unitSuggestions(source: String, message: String) {
    let (_, _, diagnostics) = Parser.parsePolicy(source)
    #expect(diagnostics.map(\.message) == [message])
  }

  @Test("an unterminated block is reported at the end with a note at its brace")
  func unterminatedBlock() throws {
    let (file, diagnostics) = Parser.parseFile("policy a {\n  retry 3\n  within 1m")
    let diagnostic = try #require(diagnostics.first)
    #expect(diagnostic.id == .unterminatedBlock)
    #expect(diagnostic.range.start.description == "3:12")
    #expect(diagnostic.message == "expected '}' to end policy 'a'; add '}' on a line of its own")
    #expect(diagnostic.notes.map(\.id) == [.blockOpensHere])
    #expect(diagnostic.notes.first?.range.start.description == "1:10")
    #expect(file.policies.first?.body.lines.count == 2)
  }

  @Test("a block missing its brace ends at the next policy, which is still read")
  func blockEndsAtNextPolicy() {
    let (file, diagnostics) = Parser.parseFile("policy a {\n  retry 3\npolicy b = retry 2\n")
    #expect(summary(diagnostics) == ["unterminated-block@3:1"])
    #expect(file.policies.map(\.name.text) == ["a", "b"])
  }

  @Test("three errors on three lines give three diagnostics")
  func threeErrors() {
    let source = "retry 3 delay 5d\nretry 2 bakoff 1s\nwithin 2\n"
    let (body, _, diagnostics) = Parser.parsePolicy(source)
    #expect(
      summary(diagnostics) == ["unknown-unit@1:16", "unknown-clause@2:9", "missing-unit@3:8"])
    #expect(body.lines.count == 2)
    let file =
      "policy a = retry 3 delay 5d\npolicy b {\n  retry 2 bakoff 1s\n}\npolice c = retry 1\n"
    let (syntax, fileDiagnostics) = Parser.parseFile(file)
    #expect(
      summary(fileDiagnostics) == [
        "unknown-unit@1:27", "unknown-clause@3:11", "expected-policy@5:1",
      ])
    #expect(syntax.policies.map(\.name.text) == ["a", "b"])
  }

  @Test("after an error the line resumes at the next clause keyword, one error per clause")
  func recoveryWithinLine() {
    let (body, _, diagnostics) = Parser.parsePolicy("retry 3 delay 5 d x on a, b bakoff max 30s")
    #expect(summary(diagnostics) == ["missing-unit@1:15", "unknown-clause@1:29"])
    #expect(body.lines.first?.clauses.map(\.keyword) == ["on", "max"])
  }

  @Test("every misspelt clause of a line is reported, not only the first")
  func misspeltClausesOnOneLine() {
    let (body, _, diagnostics) = Parser.parsePolicy(
      "retry 5 on serverError bakoff 1s x1.5 jiter 10% max 30s")
    #expect(summary(diagnostics) == ["unknown-clause@1:24", "unknown-clause@1:39"])
    #expect(diagnostics.map(\.message).last == "unknown clause 'jiter'; did you mean 'jitter'?")
    #expect(body.lines.first?.clauses.map(\.keyword) == ["on", "max"])
  }

  @Test("a clause keyword that follows a broken clause is still read")
  func keywordAfterBrokenClause() {
    let (body, _, diagnostics) = Parser.parsePolicy("retry 3 delay backoff 1s")
    #expect(summary(diagnostics) == ["expected-duration@1:15"])
    #expect(body.lines.first?.clauses.map(\.keyword) == ["backoff"])
  }

  @Test("rule clauses without 'retry' are reported once and still recorded")
  func missingRetry() {
    let (body, _, diagnostics) = Parser.parsePolicy("on a backoff 1s max 2s")
    #expect(summary(diagnostics) == ["expected-retry@1:1"])
    #expect(body.lines.first?.head == nil)
    #expect(body.lines.first?.clauses.count == 3)
  }

  @Test("a count or duration too large is recorded as unknown with one diagnostic")
  func tooLarge() {
    let (body, _, diagnostics) = Parser.parsePolicy(
      "retry 9223372036854775808 delay 2562048h")
    #expect(summary(diagnostics) == ["number-too-large@1:7", "duration-too-long@1:33"])
    #expect(body.lines.first?.head?.count == .times(nil))
    #expect(body.lines.first?.clauses.first?.durations == [nil])
    #expect(Parser.parsePolicy("retry 9223372036854775807").2.isEmpty)
  }

  @Test("files hold one-line and block policies, with lenient braces")
  func fileForms() {
    let source = """
      # policies\r
      policy quick = retry 3 immediately\r
      \r
      policy payments {\r
          retry 1 on unauthorized after refreshToken\r
          retry 5 on serverError, timeout backoff 1s x1.5 jitter 10% max 30s\r
          within 2m\r
      }\r
      policy inline { retry 2 delay 1s }
      policy opened { retry 2
        within 1m }
      """
    let (file, diagnostics) = Parser.parseFile(source)
    #expect(diagnostics.isEmpty)
    #expect(file.policies.map(\.name.text) == ["quick", "payments", "inline", "opened"])
    #expect(file.policies.map(\.form) == [.line, .block, .block, .block])
    #expect(file.policies.map(\.body.lines.count) == [1, 3, 1, 2])
    #expect(file.policies[1].range.description == "4:1-8:2")
    #expect(file.policies[1].body.lines[1].clauses[0].keywordRange.description == "6:13-6:15")
    #expect(file.comments.map(\.text) == ["# policies"])
  }

  @Test("unbalanced and deeply nested braces are reported without a cascade")
  func braces() {
    let opening = String(repeating: "{", count: 100_000)
    let (_, nested) = Parser.parseFile("policy a {\(opening)\n}\n")
    #expect(summary(nested) == ["unexpected-token@1:11"])
    let closing = String(repeating: "}", count: 100_000)
    let (_, unbalanced) = Parser.parseFile("\(closing)\npolicy a = retry 1")
    #expect(summary(unbalanced) == ["expected-policy@1:1"])
    let (_, _, text) = Parser.parsePolicy("retry 1 \(closing)")
    #expect(summary(text) == ["unexpected-token@1:9"])
  }

  @Test("a million repeated tokens and a megabyte-long line parse")
  func largeInput() {
    let commas = String(repeating: ",", count: 1_000_000)
    let (_, _, skipped) = Parser.parsePolicy("retry 3 \(commas) max 1s")
    #expect(summary(skipped) == ["unexpected-token@1:9"])
    let clauses = String(repeating: " immediately", count: 100_000)
    let (body, _, diagnostics) = Parser.parsePolicy("retry 3\(clauses)")
    #expect(diagnostics.isEmpty)
    #expect(body.lines.first?.clauses.count == 100_000)
    let name = String(repeating: "b", count: 1_000_000)
    let (_, _, long) = Parser.parsePolicy("retry 3 on \(name) bakoff")
    #expect(summary(long) == ["unknown-clause@1:1000013"])
  }

  @Test("NUL bytes and invalid UTF-8 are diagnosed and the rest is read")
  func badBytes() {
    let bytes: [UInt8] = Array("retry 3 \0 delay 1s\n".utf8) + [0xFF] + Array(" max 2s".utf8)
    let source = String(decoding: bytes, as: UTF8.self)
    let (body, _, diagnostics) = Parser.parsePolicy(source)
    // In a string, the byte is already U+FFFD: an ordinary character, unexpected here.
    #expect(summary(diagnostics) == ["unexpected-character@1:9", "unexpected-character@2:1"])
    #expect(body.lines.first?.clauses.map(\.keyword) == ["delay"])
    // Read as bytes, it is invalid UTF-8.
    let file = Array("policy p {\n".utf8) + bytes + Array("\n}\n".utf8)
    let analysis = analyze(policyFile: file)
    #expect(summary(analysis.diagnostics) == ["unexpected-character@2:9", "invalid-utf8@3:1"])
  }
}

extension SourceRange {
  fileprivate static let empty = SourceRange(start: .start, end: .start)
}

extension ClauseSyntax {
  /// The names of the clause, and the word of a jitter kind.
  fileprivate var nameTexts: [String] {
    arguments.flatMap { argument -> [String] in
      switch argument {
      case .names(let names)?: names.map(\.text)
      case .name(let name)?: [name.text]
      case .jitter(let jitter)?:
        switch jitter.kind {
        case .percent: []
        case .full: ["full"]
        case .equal: ["equal"]
        case .decorrelated: ["decorrelated"]
        }
      default: []
      }
    }
  }

  /// The durations of the clause, in order.
  fileprivate var durations: [Duration?] {
    arguments.flatMap { argument -> [Duration?] in
      switch argument {
      case .duration(let duration)?, .increment(let duration)?: [duration.duration]
      case .durations(let durations)?: durations.map(\.duration)
      default: []
      }
    }
  }

  /// The number of the clause: a factor or a percentage.
  fileprivate var numberValue: Double? {
    for argument in arguments {
      switch argument {
      case .factor(let number)?, .percent(let number)?: return number.value
      case .jitter(let jitter)?:
        if case .percent(let percent) = jitter.kind { return percent.value }
      default: break
      }
    }
    return nil
  }
}
