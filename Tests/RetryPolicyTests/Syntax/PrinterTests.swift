import RetryPolicy
import RetryPolicyTesting
import Testing

@Suite("Canonical printer")
struct PrinterTests {
  @Test(
    "policy text prints in canonical form, clauses in the order written",
    arguments: [
      (
        "retry  5\ton a,b   backoff 01.50s x 1.50 jitter 10.0%  max 30s",
        "retry 5 on a, b backoff 1.5s x1.5 jitter 10% max 30s"
      ),
      (
        "retry forever max 1m backoff 2s +0500ms within 2m",
        "retry forever max 1m backoff 2s +500ms within 2m"
      ),
      ("retry 0 immediately", "retry 0 immediately"),
      ("retry 007 delays 1s ,2.0s,  0.250s", "retry 7 delays 1s, 2s, 0.25s"),
      ("retry 3 jitter full", "retry 3 jitter full"),
      ("retry 3 jitter equal", "retry 3 jitter equal"),
      ("retry 3 jitter decorrelated", "retry 3 jitter decorrelated"),
      (
        "retry 1 except  a after  hook honoring   retry-after",
        "retry 1 except a after hook honoring retry-after"
      ),
      ("retry 2 delay 00.0s", "retry 2 delay 0s"),
      ("within 1h timeout 10s budget 05.50%", "within 1h timeout 10s budget 5.5%"),
      ("retry 1 on a\n\n\r\nwithin 1m\n", "retry 1 on a\nwithin 1m"),
      (
        "# first\nretry 1 on a   # trailing   \n# last", "# first\nretry 1 on a  # trailing\n# last"
      ),
    ])
  func policyText(source: String, expected: String) {
    let (body, comments, diagnostics) = Parser.parsePolicy(source)
    #expect(diagnostics.isEmpty)
    #expect(CanonicalPrinter.print(body, comments: comments) == expected)
  }

  @Test("a file prints one-line policies, indented blocks and comments in place")
  func file() {
    let source = """
      # header
      policy quick = retry 3 immediately   # fast

      # payments
      policy payments {   # block
        retry 1 on unauthorized after refreshToken

        # server errors
        retry 5 on serverError backoff 1s
        within 2m # deadline
        # before brace
      }   # end


      policy inline { retry 2 delay 1s }
      policy opened { retry 2
          within 1m }
      # trailing
      """
    let expected = """
      # header
      policy quick = retry 3 immediately  # fast

      # payments
      policy payments {  # block
          retry 1 on unauthorized after refreshToken
          # server errors
          retry 5 on serverError backoff 1s
          within 2m  # deadline
          # before brace
      }  # end

      policy inline {
          retry 2 delay 1s
      }

      policy opened {
          retry 2
          within 1m
      }

      # trailing

      """
    let (syntax, diagnostics) = Parser.parseFile(source)
    #expect(diagnostics.isEmpty)
    let printed = CanonicalPrinter.print(syntax)
    #expect(printed == expected)
    #expect(CanonicalPrinter.print(Parser.parseFile(printed).0) == printed)
  }

  @Test("an empty file prints as empty text, a file of comments as its comments")
  func emptyFile() {
    #expect(CanonicalPrinter.print(Parser.parseFile("\n\n").0) == "")
    #expect(CanonicalPrinter.print(Parser.parseFile("# a\n\n\n# b").0) == "# a\n\n# b\n")
  }

  @Test("paragraphs of comments keep one blank line between them, and before what follows")
  func commentParagraphs() {
    let source = """
      # header
      #   more header


      # about p
      policy p {
          # first rule

          retry 1 on a

          # trailing paragraph

      }

      # about q

      policy q = retry 2
      """
    let expected = """
      # header
      #   more header

      # about p
      policy p {
          # first rule

          retry 1 on a
          # trailing paragraph
      }

      # about q

      policy q = retry 2

      """
    let printed = CanonicalPrinter.print(Parser.parseFile(source).0)
    #expect(printed == expected)
    #expect(CanonicalPrinter.print(Parser.parseFile(printed).0) == printed)
  }

  @Test("numbers lose leading zeros and trailing fraction zeros, units stay as written")
  func numbers() {
    let cases = [
      ("1.50", "1.5"), ("01", "1"), ("2.0", "2"), ("0", "0"), ("000", "0"), ("0.50", "0.5"),
      ("10", "10"), ("100.001", "100.001"),
    ]
    for (text, expected) in cases {
      #expect(CanonicalPrinter.normalizedNumber(text) == expected)
    }
    let (body, _, _) = Parser.parsePolicy("retry 1 delay 1000ms max 60m within 1h")
    #expect(CanonicalPrinter.print(body) == "retry 1 delay 1000ms max 60m within 1h")
  }

  @Test("every kind of clause survives a round trip through the printer")
  func roundTripEveryClause() {
    let source =
      "retry forever on a, timeout except b immediately delay 2s backoff 1s backoff 1s x 3 "
      + "backoff 1s +500ms delays 1s, 2s, 3s jitter 10% jitter full jitter equal "
      + "jitter decorrelated max 1h after refreshToken honoring retry-after within 2m "
      + "timeout 10s budget 5%\nwithin 1m budget 0.5%"
    checkRoundTrip(policyText: source)
  }

  @Test("three thousand generated policies and files survive a round trip")
  func roundTripGenerated() {
    var generator = PolicyGenerator(seed: 0x5EED)
    for _ in 0..<2000 {
      checkRoundTrip(policyText: generator.policyText())
    }
    for _ in 0..<1000 {
      checkRoundTrip(file: generator.file())
    }
  }

  private func checkRoundTrip(
    policyText source: String, sourceLocation: Testing.SourceLocation = #_sourceLocation
  ) {
    let (body, comments, diagnostics) = Parser.parsePolicy(source)
    #expect(diagnostics.isEmpty, "\(source.debugDescription): \(diagnostics)")
    let printed = CanonicalPrinter.print(body, comments: comments)
    let (reparsed, recomments, rediagnostics) = Parser.parsePolicy(printed)
    #expect(rediagnostics.isEmpty, "\(printed.debugDescription): \(rediagnostics)")
    #expect(reparsed.erasingRanges() == body.erasingRanges(), "\(source.debugDescription)")
    #expect(recomments.map(\.text) == comments.map { trimmed($0.text) })
    #expect(CanonicalPrinter.print(reparsed, comments: recomments) == printed)
  }

  private func checkRoundTrip(file source: String) {
    let (syntax, diagnostics) = Parser.parseFile(source)
    #expect(diagnostics.isEmpty, "\(source.debugDescription): \(diagnostics)")
    let printed = CanonicalPrinter.print(syntax)
    let (reparsed, rediagnostics) = Parser.parseFile(printed)
    #expect(rediagnostics.isEmpty, "\(printed.debugDescription): \(rediagnostics)")
    #expect(
      reparsed.policies.map { $0.erasingRanges() } == syntax.policies.map { $0.erasingRanges() },
      "\(source.debugDescription)")
    #expect(reparsed.comments.map(\.text) == syntax.comments.map { trimmed($0.text) })
    #expect(CanonicalPrinter.print(reparsed) == printed)
  }

  private func trimmed(_ text: String) -> String {
    var text = Substring(text)
    while text.last == " " || text.last == "\t" { text.removeLast() }
    return String(text)
  }
}

// MARK: Trees without source ranges

extension SourceRange {
  fileprivate static let none = SourceRange(start: .start, end: .start)
}

extension PolicyDeclarationSyntax {
  fileprivate func erasingRanges() -> PolicyDeclarationSyntax {
    PolicyDeclarationSyntax(
      name: NameSyntax(text: name.text, range: .none), form: form, body: body.erasingRanges(),
      range: .none)
  }
}

extension PolicyBodySyntax {
  /// The tree with every range empty and every number in canonical spelling.
  fileprivate func erasingRanges() -> PolicyBodySyntax {
    PolicyBodySyntax(
      lines: lines.map { line in
        LineSyntax(
          head: line.head.map { RetryHeadSyntax(count: $0.count, countRange: .none, range: .none) },
          clauses: line.clauses.map {
            ClauseSyntax(
              clause: $0.clause, arguments: $0.arguments.map { $0?.erasingRanges() },
              keywordRange: .none, range: .none)
          }, range: .none)
      }, range: .none)
  }
}

extension ArgumentSyntax {
  fileprivate func erasingRanges() -> ArgumentSyntax {
    switch self {
    case .word: .word
    case .names(let names): .names(names.map(\.erasingRange))
    case .name(let name): .name(name.erasingRange)
    case .duration(let duration): .duration(duration.erasingRange)
    case .increment(let duration): .increment(duration.erasingRange)
    case .durations(let durations): .durations(durations.map(\.erasingRange))
    case .count(let number): .count(number.erasingRange)
    case .percent(let number): .percent(number.erasingRange)
    case .factor(let number): .factor(number.erasingRange)
    case .rate(let number, let period): .rate(number.erasingRange, per: period)
    case .jitter(let jitter):
      switch jitter.kind {
      case .percent(let percent):
        .jitter(JitterSyntax(kind: .percent(percent.erasingRange), range: .none))
      case .full, .equal, .decorrelated: .jitter(JitterSyntax(kind: jitter.kind, range: .none))
      }
    }
  }
}

extension NameSyntax {
  fileprivate var erasingRange: NameSyntax { NameSyntax(text: text, range: .none) }
}

extension NumberLiteralSyntax {
  fileprivate var erasingRange: NumberLiteralSyntax {
    NumberLiteralSyntax(
      text: CanonicalPrinter.normalizedNumber(text), value: value, range: .none)
  }
}

extension DurationLiteralSyntax {
  fileprivate var erasingRange: DurationLiteralSyntax {
    DurationLiteralSyntax(
      number: CanonicalPrinter.normalizedNumber(number), unit: unit, duration: duration,
      range: .none)
  }
}

// MARK: Generated policies

/// Writes random valid policy text, with odd but valid spacing, number spelling and comments.
private struct PolicyGenerator {
  private var random: SeededRandomNumberGenerator

  init(seed: UInt64) {
    random = SeededRandomNumberGenerator(seed: seed)
  }

  private mutating func chance(_ percent: Int) -> Bool {
    Int.random(in: 0..<100, using: &random) < percent
  }

  private mutating func pick<T>(_ choices: [T]) -> T {
    choices[Int.random(in: 0..<choices.count, using: &random)]
  }

  private mutating func blank() -> String {
    pick([" ", " ", " ", "  ", "\t", " \t "])
  }

  private mutating func number(fraction: Bool) -> String {
    var text = String(Int.random(in: 0..<1000, using: &random))
    if chance(15) { text = "0" + text }
    if fraction && chance(50) {
      text += "." + String(Int.random(in: 0..<1000, using: &random))
      if chance(20) { text += "0" }
    }
    return text
  }

  private mutating func duration() -> String {
    number(fraction: true) + pick(["ms", "s", "m", "h"])
  }

  private mutating func name() -> String {
    pick(["serverError", "timeout", "a", "URLError", "rate_limited", "xray", "_hidden", "any"])
  }

  private mutating func list(_ element: (inout PolicyGenerator) -> String) -> String {
    var items = [element(&self)]
    for _ in 0..<Int.random(in: 0..<3, using: &random) { items.append(element(&self)) }
    return items.joined(separator: pick([",", ", ", " ,", " , "]))
  }

  private mutating func ruleClause() -> String {
    switch Int.random(in: 0..<12, using: &random) {
    case 0: "on" + blank() + list { $0.name() }
    case 1: "except" + blank() + list { $0.name() }
    case 2: "immediately"
    case 3: "delay" + blank() + duration()
    case 4:
      "backoff" + blank() + duration()
        + pick(["", " x" + number(fraction: true), " x " + number(fraction: true)])
    case 5: "backoff" + blank() + duration() + blank() + "+" + duration()
    case 6: "delays" + blank() + list { $0.duration() }
    case 7: "jitter" + blank() + number(fraction: true) + "%"
    case 8: "jitter" + blank() + pick(["full", "equal", "decorrelated"])
    case 9: "max" + blank() + duration()
    case 10: "after" + blank() + pick(["refreshToken", "reconnect"])
    default: "honoring" + blank() + "retry-after"
    }
  }

  private mutating func policyClause() -> String {
    switch Int.random(in: 0..<3, using: &random) {
    case 0: "within" + blank() + duration()
    case 1: "timeout" + blank() + duration()
    default: "budget" + blank() + number(fraction: true) + "%"
    }
  }

  private mutating func line() -> String {
    var parts: [String] = []
    if chance(80) {
      parts.append(
        "retry" + blank() + (chance(20) ? "forever" : number(fraction: false)))
      for _ in 0..<Int.random(in: 0..<6, using: &random) {
        parts.append(chance(85) ? ruleClause() : policyClause())
      }
    } else {
      for _ in 0..<Int.random(in: 1..<4, using: &random) { parts.append(policyClause()) }
    }
    var text = parts.joined(separator: blank())
    if chance(20) { text = blank() + text }
    if chance(20) { text += blank() + "# note " + number(fraction: false) }
    return text
  }

  private mutating func lineEnd() -> String {
    pick(["\n", "\n", "\r\n", "\n\n", "\n# comment\n", "\n  # indented  \n"])
  }

  mutating func policyText() -> String {
    var text = chance(10) ? "# leading\n" : ""
    for index in 0..<Int.random(in: 1..<4, using: &random) {
      if index > 0 { text += lineEnd() }
      text += line()
    }
    if chance(30) { text += lineEnd() }
    return text
  }

  mutating func file() -> String {
    var text = chance(30) ? "# policies\n" : ""
    for index in 0..<Int.random(in: 0..<4, using: &random) {
      text += lineEnd()
      let name = "p\(index)"
      if chance(40) {
        text += "policy \(name)" + blank() + "=" + blank() + line()
      } else {
        text += "policy \(name)" + blank() + "{" + (chance(20) ? "  # opens" : "") + "\n"
        for _ in 0..<Int.random(in: 0..<4, using: &random) {
          text += line() + lineEnd()
        }
        text += pick(["}", "  }", "}  # closes"])
      }
    }
    if chance(30) { text += "\n# the end" }
    return text
  }
}

@Suite("Token soup")
struct TokenSoupTests {
  static let pieces = [
    "policy", "retry", "forever", "on", "except", "immediately", "delay", "backoff", "delays",
    "jitter", "full", "equal", "decorrelated", "max", "after", "honoring", "retry-after",
    "within", "timeout", "budget", "x", "x2", "name", "a-b", "5", "1.5", "1.", "10s", "5d",
    "250ms", "%", ",", "+", "=", "{", "}", "\n", "\r\n", "\r", "# c\n", "\u{0}", "\u{FFFD}",
    "é", ";", "-", "99999999999999999999", "9999999999999h", " ", "\t",
  ]

  @Test("random token soup never traps, and whatever parses cleanly prints and reparses")
  func soup() {
    var random = SeededRandomNumberGenerator(seed: 42)
    for _ in 0..<3000 {
      var text = ""
      for _ in 0..<Int.random(in: 0..<24, using: &random) {
        text += Self.pieces[Int.random(in: 0..<Self.pieces.count, using: &random)]
        if Bool.random(using: &random) { text += " " }
      }
      let (file, fileDiagnostics) = Parser.parseFile(text)
      if fileDiagnostics.isEmpty {
        let printed = CanonicalPrinter.print(file)
        #expect(Parser.parseFile(printed).1.isEmpty, "\(text.debugDescription)")
        #expect(CanonicalPrinter.print(Parser.parseFile(printed).0) == printed)
      }
      let (body, comments, diagnostics) = Parser.parsePolicy(text)
      if diagnostics.isEmpty {
        let printed = CanonicalPrinter.print(body, comments: comments)
        #expect(Parser.parsePolicy(printed).2.isEmpty, "\(text.debugDescription)")
      } else {
        #expect(diagnostics.allSatisfy { $0.line >= 1 && $0.column >= 1 })
      }
    }
  }
}
