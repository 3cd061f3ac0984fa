import Testing

@testable import RetryPolicy

/// One expected diagnostic: its id and where it points.
struct ExpectedDiagnostic: Sendable, Equatable, CustomStringConvertible {
  var id: DiagnosticID
  var line: Int
  var column: Int

  init(_ id: DiagnosticID, _ line: Int, _ column: Int) {
    self.id = id
    self.line = line
    self.column = column
  }

  init(_ diagnostic: Diagnostic) {
    self.init(diagnostic.id, diagnostic.line, diagnostic.column)
  }

  var description: String { "\(id.rawValue)@\(line):\(column)" }
}

/// A policy text and the diagnostics the checker gives it.
struct CheckerCase: Sendable, CustomTestStringConvertible {
  var text: String
  var expected: [ExpectedDiagnostic]

  init(_ text: String, _ expected: ExpectedDiagnostic...) {
    self.text = text
    self.expected = expected
  }

  var testDescription: String { text.isEmpty ? "(empty)" : text }

  /// One case for each semantic message id of the catalogue, and a few more.
  static let all: [CheckerCase] = [
    // duplicate-clause
    CheckerCase("retry 5 on a backoff 1s on b", .init(.duplicateClause, 1, 25)),
    CheckerCase("retry 5 backoff 1s backoff 2s", .init(.duplicateClause, 1, 20)),
    CheckerCase("retry 5 within 1m within 2m", .init(.duplicateClause, 1, 19)),
    CheckerCase("retry 5\nwithin 1m\nwithin 2m", .init(.duplicateClause, 3, 1)),
    CheckerCase("retry 5 budget 5%\nbudget 10%", .init(.duplicateClause, 2, 1)),
    // conflicting-delay
    CheckerCase("retry 5 delay 1s backoff 2s", .init(.conflictingDelay, 1, 18)),
    CheckerCase("retry 5 immediately delays 1s", .init(.conflictingDelay, 1, 21)),
    // count-too-large, forever-without-within
    CheckerCase("retry 20000", .init(.countTooLarge, 1, 7)),
    CheckerCase("retry forever backoff 1s", .init(.foreverWithoutWithin, 1, 7)),
    // factors
    CheckerCase("retry 5 backoff 1s x0.5", .init(.factorBelowOne, 1, 21)),
    CheckerCase("retry 5 backoff 1s x5000", .init(.factorTooLarge, 1, 21)),
    CheckerCase("retry 5 backoff 1s x1", .init(.factorOfOne, 1, 21)),
    // jitter
    CheckerCase("retry 5 backoff 1s jitter 0%", .init(.jitterOutOfRange, 1, 27)),
    CheckerCase("retry 5 backoff 1s jitter 150%", .init(.jitterOutOfRange, 1, 27)),
    CheckerCase("retry 5 jitter 10%", .init(.jitterWithoutDelay, 1, 9)),
    CheckerCase("retry 5 immediately jitter full", .init(.jitterWithoutDelay, 1, 21)),
    // durations
    CheckerCase("retry 5 backoff 0s", .init(.zeroDuration, 1, 17)),
    CheckerCase("retry 5 delay 1s max 0s", .init(.zeroDuration, 1, 22)),
    CheckerCase("retry 5 within 0s", .init(.zeroDuration, 1, 16)),
    CheckerCase("retry 5\ntimeout 0s", .init(.zeroDuration, 2, 9)),
    CheckerCase("retry 5 delay 20000h", .init(.durationTooLong, 1, 15)),
    CheckerCase("retry 5 backoff 1s +20000h", .init(.durationTooLong, 1, 21)),
    CheckerCase("retry 5 delays 1s, 20000h", .init(.durationTooLong, 1, 20)),
    CheckerCase("retry 5 delay 0s", .init(.zeroDelay, 1, 9)),
    // budget
    CheckerCase("retry 5 budget 0%", .init(.budgetOutOfRange, 1, 16)),
    CheckerCase("retry 5 budget 101%", .init(.budgetOutOfRange, 1, 16)),
    CheckerCase("retry 5 breaker 0%", .init(.breakerOutOfRange, 1, 17)),
    CheckerCase("retry 5 breaker 101%", .init(.breakerOutOfRange, 1, 17)),
    CheckerCase("retry 5 breaker 50.5%", .init(.breakerOutOfRange, 1, 17)),
    CheckerCase("retry 5 breaker 50% over 500ms", .init(.breakerOutOfRange, 1, 26)),
    CheckerCase("retry 5 breaker 50% over 25h", .init(.breakerOutOfRange, 1, 26)),
    CheckerCase("retry 5 breaker 50% min 0", .init(.breakerOutOfRange, 1, 25)),
    CheckerCase("retry 5 breaker 50% min 1000001", .init(.breakerOutOfRange, 1, 25)),
    CheckerCase("retry 5 breaker 50% for 99ms", .init(.breakerOutOfRange, 1, 25)),
    CheckerCase("retry 5 breaker 50% for 1441m", .init(.breakerOutOfRange, 1, 25)),
    CheckerCase("retry 5 breaker 100% over 1s min 1 for 100ms"),
    CheckerCase("retry 5 breaker 1% over 24h min 1000000 for 24h"),
    CheckerCase("retry 5 breaker 50% breaker 60%", .init(.duplicateClause, 1, 21)),
    // classes
    CheckerCase("retry 5 on a except b, a", .init(.classInOnAndExcept, 1, 24)),
    // no rule
    CheckerCase("", .init(.emptyPolicy, 1, 1)),
    CheckerCase("within 5m", .init(.emptyPolicy, 1, 1)),
    // caps
    CheckerCase("retry 5 backoff 1s max 500ms", .init(.capBelowFirstDelay, 1, 20)),
    CheckerCase("retry 5 max 1s", .init(.capWithoutDelay, 1, 9)),
    CheckerCase("retry 5 delay 0s max 1s", .init(.zeroDelay, 1, 9), .init(.capWithoutDelay, 1, 18)),
    // unreachable rules
    CheckerCase("retry 5 on a\nretry 3 on a", .init(.unreachableRule, 2, 1)),
    CheckerCase("retry 5 on 5xx\nretry 3 on 503, 502", .init(.unreachableRule, 2, 1)),
    CheckerCase("retry 5 on transient\nretry 3 on 503, timedOut", .init(.unreachableRule, 2, 1)),
    CheckerCase("retry 5 on any\nretry 3", .init(.unreachableRule, 2, 1)),
    CheckerCase(
      "retry 5\nretry 3 on a\nretry 1", .init(.unreachableRule, 3, 1)),
    // timeout against within
    CheckerCase("retry 5 delay 1s timeout 1m within 1m", .init(.timeoutNotBelowDeadline, 1, 18)),
    // several at once, sorted by position
    CheckerCase(
      "retry 20000 backoff 0s jitter 200%\nbudget 0%\nretry 1",
      .init(.countTooLarge, 1, 7), .init(.zeroDuration, 1, 21), .init(.jitterOutOfRange, 1, 31),
      .init(.budgetOutOfRange, 2, 8), .init(.unreachableRule, 3, 1)),
    // fine
    CheckerCase("retry 5 on a\nretry 3 on b"),
    CheckerCase("retry 5 except a\nretry 3"),
    // a rule naming an error takes it before a rule without `on`, wherever that stands
    CheckerCase("retry 5\nretry 3 on a"),
    CheckerCase("retry 5 on 5xx except 503\nretry 3 on 503"),
    CheckerCase("retry 5 on 503\nretry 3 on 5xx"),
    CheckerCase("retry forever backoff 1s\nwithin 5m"),
    CheckerCase("retry 0"),
    CheckerCase("retry 10000 delays 0s, 1s jitter 100% max 10000h"),
    CheckerCase("retry 5 delay 1s timeout 59s within 1m budget 100%"),
  ]
}

/// Checks a body built by hand, as the parser would give it.
func check(_ text: String, vocabulary: Vocabulary = .open) -> (CompiledPolicy?, [Diagnostic]) {
  var checker = PolicyChecker(vocabulary: vocabulary)
  let body = SyntaxBuilder.body(text)
  let policy = checker.compile(body, name: nil, emptyRange: body.range, hasSyntaxErrors: false)
  return (policy, checker.diagnostics.sortedByPosition)
}

@Suite("Checker")
struct CheckerTests {
  @Test("each semantic message is reported at its place", arguments: CheckerCase.all)
  func messages(_ example: CheckerCase) {
    let (policy, diagnostics) = check(example.text)
    #expect(diagnostics.map(ExpectedDiagnostic.init) == example.expected)
    let hasErrors = diagnostics.contains { $0.severity == .error }
    #expect((policy == nil) == hasErrors)
  }

  @Test("every semantic id of the catalogue has a case")
  func everyIDIsCovered() {
    let covered = Set(CheckerCase.all.flatMap { $0.expected.map(\.id) })
    let semantic: [DiagnosticID] = [
      .duplicateClause, .conflictingDelay, .foreverWithoutWithin, .countTooLarge, .factorBelowOne,
      .factorTooLarge, .jitterOutOfRange, .jitterWithoutDelay, .zeroDuration, .durationTooLong,
      .budgetOutOfRange, .breakerOutOfRange, .classInOnAndExcept, .emptyPolicy, .capBelowFirstDelay,
      .unreachableRule, .factorOfOne, .zeroDelay, .capWithoutDelay, .timeoutNotBelowDeadline,
    ]
    for id in semantic { #expect(covered.contains(id), "no case for \(id.rawValue)") }
  }

  @Test("the count message names the count and the way out")
  func countMessage() {
    let (_, diagnostics) = check("retry 20000")
    #expect(
      diagnostics.first?.message
        == "retry count 20000 is too large; the most is 10000; use 'retry forever' with 'within'")
  }

  @Test("messages read as the catalogue writes them")
  func messageTexts() {
    let cases: [(String, String)] = [
      (
        "retry forever",
        "'retry forever' needs an overall deadline; add a deadline such as 'within 5m'"
      ),
      ("retry 5 backoff 1s x1", "a factor of 1 keeps the delay constant; write 'delay 1s'"),
      ("retry 5 delay 0s", "'delay 0s' waits no time; write 'immediately'"),
      ("retry 5 delay 20000h", "duration '20000h' is too long; the most is '10000h'"),
      ("retry 5\nretry 1", "this rule is never used: the rule on line 1 takes every error"),
      (
        "retry 5 backoff 1s max 500ms",
        "'max 500ms' is below the first delay 1s; every delay will be 500ms"
      ),
      (
        "retry 5 delay 1s backoff 2s",
        "'backoff' conflicts with 'delay'; a rule takes only one of 'immediately', 'delay', 'backoff' and 'delays'"
      ),
    ]
    for (text, message) in cases {
      #expect(check(text).1.first?.message == message, "\(text)")
    }
  }

  @Test("a duplicate clause carries a note at the first one")
  func duplicateNote() {
    let (_, diagnostics) = check("retry 5 jitter full backoff 1s jitter 10%")
    let duplicate = diagnostics.first { $0.id == .duplicateClause }
    #expect(duplicate?.column == 32)
    #expect(duplicate?.notes.map(ExpectedDiagnostic.init) == [.init(.firstGivenHere, 1, 9)])
    #expect(duplicate?.notes.first?.severity == .note)
    #expect(duplicate?.message == "'jitter' is given more than once; a rule takes it once")
  }

  @Test("a conflicting delay clause names both and notes the first")
  func conflictNote() {
    let (_, diagnostics) = check("retry 5 delays 1s, 2s\nwithin 1m")
    #expect(diagnostics.isEmpty)
    let (_, conflict) = check("retry 5 backoff 1s delay 2s")
    #expect(conflict.first?.notes.map(ExpectedDiagnostic.init) == [.init(.firstGivenHere, 1, 9)])
  }

  @Test("a class in both 'on' and 'except' notes where 'on' names it")
  func classNote() {
    let (_, diagnostics) = check("retry 5 on a, b except b")
    #expect(diagnostics.map(ExpectedDiagnostic.init) == [.init(.classInOnAndExcept, 1, 24)])
    #expect(
      diagnostics.first?.notes.map(ExpectedDiagnostic.init) == [.init(.firstGivenHere, 1, 15)])
  }

  @Test("names outside the vocabulary are errors with a suggestion")
  func vocabulary() {
    let vocabulary = Vocabulary(
      errorClasses: ["serverError", "unauthorized"], hooks: ["refreshToken", "reconnect"])
    let (policy, diagnostics) = check(
      "retry 1 on unauthorised after refreshTokn", vocabulary: vocabulary)
    #expect(policy == nil)
    #expect(
      diagnostics.map(ExpectedDiagnostic.init) == [
        .init(.unknownErrorClass, 1, 12), .init(.unknownHook, 1, 31),
      ])
    #expect(
      diagnostics.first?.message
        == "unknown error class 'unauthorised'; did you mean 'unauthorized'?")
    #expect(diagnostics.last?.message == "unknown hook 'refreshTokn'; did you mean 'refreshToken'?")
    let (other, none) = check("retry 1 on serverError, timeout except any", vocabulary: vocabulary)
    #expect(none.map(\.id) == [])
    #expect(other != nil)
    let (_, far) = check("retry 1 on teapot", vocabulary: vocabulary)
    #expect(far.first?.message == "unknown error class 'teapot'")
    let (_, builtIn) = check("retry 1 on timout", vocabulary: vocabulary)
    #expect(builtIn.first?.message == "unknown error class 'timout'; did you mean 'timeout'?")
  }

  @Test("an open vocabulary accepts any name")
  func openVocabulary() {
    let (policy, diagnostics) = check("retry 1 on anything except whatever after hook")
    #expect(diagnostics.isEmpty)
    #expect(policy?.rules.first?.hook == "hook")
  }

  @Test("values the parser could not read fail silently")
  func unreadableValues() {
    for text in [
      "retry ?", "retry 5 delay ?s", "retry 5 backoff 1s x?", "retry 5 backoff 1s jitter ?%",
      "retry 5 budget ?%", "retry 5 within ?s",
    ] {
      let (policy, diagnostics) = check(text)
      #expect(policy == nil, "\(text)")
      #expect(diagnostics.isEmpty, "\(text)")
    }
  }

  @Test("with syntax errors the checks run but nothing compiles and no rule is not reported")
  func syntaxErrors() {
    var checker = PolicyChecker(vocabulary: .open)
    let body = SyntaxBuilder.body("retry 5 jitter 10%")
    #expect(checker.compile(body, name: nil, emptyRange: body.range, hasSyntaxErrors: true) == nil)
    #expect(checker.diagnostics.map(\.id) == [.jitterWithoutDelay])
    var empty = PolicyChecker(vocabulary: .open)
    let nothing = SyntaxBuilder.body("")
    _ = empty.compile(nothing, name: nil, emptyRange: nothing.range, hasSyntaxErrors: true)
    #expect(empty.diagnostics.isEmpty)
  }

  @Test("rule clauses on a line without 'retry' keep the policy from compiling")
  func clausesWithoutRetry() {
    let (policy, _) = check("retry 5\nbackoff 1s")
    #expect(policy == nil)
  }

  @Test("two policies of one name: an error at the second with a note at the first")
  func duplicatePolicy() {
    let file = SyntaxBuilder.file([
      ("payments", "retry 5"), ("quick", "retry 1"), ("payments", "retry 2"),
    ])
    var diagnostics: [Diagnostic] = []
    let isDuplicate = PolicyChecker.checkNames(of: file.policies, into: &diagnostics)
    #expect(isDuplicate == [false, false, true])
    #expect(diagnostics.map(ExpectedDiagnostic.init) == [.init(.duplicatePolicy, 7, 8)])
    #expect(diagnostics.first?.notes.map(ExpectedDiagnostic.init) == [.init(.firstGivenHere, 1, 8)])
    #expect(
      diagnostics.first?.message == "policy 'payments' is declared more than once; names are unique"
    )
  }

  @Test("an empty block names its policy")
  func emptyBlock() {
    var checker = PolicyChecker(vocabulary: .open)
    let file = SyntaxBuilder.file([("payments", "within 1m")])
    let declaration = file.policies[0]
    let policy = checker.compile(
      declaration.body, name: "payments", emptyRange: declaration.name.range,
      hasSyntaxErrors: false)
    #expect(policy == nil)
    #expect(checker.diagnostics.map(ExpectedDiagnostic.init) == [.init(.emptyPolicy, 1, 8)])
    #expect(
      checker.diagnostics.first?.message
        == "policy 'payments' has no rule; add one such as 'retry 3 backoff 1s'")
  }

  @Test("diagnostics at one place keep the order they were found in")
  func stableSort() {
    let range = SourceRange(start: .start, end: .start)
    let later = SourceRange(
      start: SourceLocation(line: 1, column: 3, offset: 2),
      end: SourceLocation(line: 1, column: 3, offset: 2))
    let diagnostics = [
      Diagnostic(.capWithoutDelay, at: later), Diagnostic(.zeroDelay("0s"), at: range),
      Diagnostic(.jitterWithoutDelay, at: range),
    ]
    #expect(
      Diagnostic.sortedByPosition(diagnostics).map(\.id) == [
        .zeroDelay, .jitterWithoutDelay, .capWithoutDelay,
      ])
  }
}

@Suite("Checker on parsed text")
struct CheckerTextTests {
  @Test("each semantic message is reported at its place in parsed text", arguments: CheckerCase.all)
  func messages(_ example: CheckerCase) {
    let analysis = analyze(policy: example.text)
    #expect(analysis.diagnostics.map(ExpectedDiagnostic.init) == example.expected)
    #expect(analysis.policies.isEmpty == analysis.hasErrors)
  }
}
