import Foundation
import RetryPolicy
import RetryPolicyTestSupport
import Testing

@testable import RetryPolicyCLI

/// The documents a newcomer reads (README.md, Grammar/, the DocC articles) against the clause
/// table and the tool (issue 33): the lists and tables they hold are read as data, and every
/// clause of `ClauseTable` is checked in them, so a new clause fails here until it is written
/// down. (The TextMate grammar and Grammar/README's clause table and section 12 have their
/// own tests: `GrammarTests`, `ClauseTableTests`, `ReferenceTablesTests`.)
@Suite("Documents: what they list is what the tool does")
struct DocumentationDriftTests {
  /// The package's root.
  static let root = packageRoot

  static func read(_ path: String) throws -> String {
    try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
  }

  /// README.md, the Markdown of Grammar/ and every DocC article, by path from the root.
  static func documents() throws -> [(path: String, text: String)] {
    var paths = ["README.md"]
    for folder in ["Grammar", "Sources"] {
      let enumerator = FileManager.default.enumerator(
        atPath: root.appendingPathComponent(folder).path)
      while let path = enumerator?.nextObject() as? String {
        if path.hasSuffix(".md"), folder == "Grammar" || path.contains(".docc/") {
          paths.append(folder + "/" + path)
        }
      }
    }
    return try paths.sorted().map { ($0, try read($0)) }
  }

  /// The text's paragraphs (blocks between blank lines), each on one line.
  static func paragraphs(_ text: String) -> [String] {
    text.components(separatedBy: "\n\n").map {
      $0.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        .joined(separator: " ")
    }
  }

  /// The cells of a Markdown table row, trimmed.
  static func cells(_ row: Substring) -> [String] {
    row.split(separator: "|", omittingEmptySubsequences: false).dropFirst().dropLast()
      .map { $0.trimmingCharacters(in: .whitespaces) }
  }

  /// The words in backticks in `text`.
  static func quoted(_ text: String) -> [String] {
    text.split(separator: "`", omittingEmptySubsequences: false).enumerated()
      .filter { $0.offset % 2 == 1 }.map { String($0.element) }
  }

  /// Every match of `pattern` in `text`, each as its capture groups (0 is the whole match).
  static func matches(_ pattern: String, in text: String) throws -> [[String]] {
    let regex = try NSRegularExpression(pattern: pattern)
    return regex.matches(in: text, range: NSRange(text.startIndex..., in: text)).map { match in
      (0..<match.numberOfRanges).map { index in
        Range(match.range(at: index), in: text).map { String(text[$0]) } ?? ""
      }
    }
  }

  /// The English number words the documents use for counts.
  static let numberWords = [
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
    "nineteen", "twenty",
  ]

  // MARK: - Clauses written from the table

  /// A completion snippet with its placeholders (`${1:1s}`) replaced: by `values[n]` where
  /// given, else by the placeholder's default.
  static func fill(_ snippet: String, _ values: [Int: String] = [:]) throws -> String {
    var text = snippet
    for match in try matches(#"\$\{(\d+):([^}]*)\}"#, in: snippet) {
      let value = Int(match[1]).flatMap { values[$0] } ?? match[2]
      if let range = text.range(of: match[0]) { text.replaceSubrange(range, with: value) }
    }
    return text
  }

  /// A one-line policy that holds `clause`, a clause of `spec` as written.
  static func policy(_ spec: ClauseSpec, clause: String) -> String {
    switch spec.scope {
    case .rule: "retry 3 delay 1s " + clause
    case .ruleDelay, .policyWide: "retry 3 " + clause
    }
  }

  // MARK: - Reserved words

  @Test("Grammar/README's reserved keywords are the lexer's, and each is refused as a name")
  func reservedKeywords() throws {
    let text = try Self.read("Grammar/README.md")
    let start = try #require(text.range(of: "**Keywords** are lowercase ASCII and reserved"))
    let block = text[start.upperBound...].split(separator: "\n", omittingEmptySubsequences: false)
      .dropFirst(2).prefix { $0.hasPrefix("    ") }
    let listed = block.flatMap { $0.split(separator: " ").map(String.init) }
    #expect(!listed.isEmpty)
    #expect(Set(listed) == Set(LanguageWords.keywords))
    #expect(listed.count == LanguageWords.keywords.count, "a keyword is listed twice")
    for word in listed {
      let analysis = analyze(policyFile: "policy \(word) = retry 1\n")
      #expect(analysis.hasErrors, "'\(word)' is accepted as a policy name")
    }
  }

  // MARK: - Clause tables

  @Test("the README's table of the language has every clause of the table, policy-wide marked")
  func readmeClauseTable() throws {
    let text = try Self.read("README.md")
    let section = try #require(text.range(of: "## The language"))
    let lines = text[section.upperBound...].split(separator: "\n")
    let header = try #require(lines.firstIndex { $0.hasPrefix("| clause | meaning |") })
    let rows = lines[(header + 2)...].prefix { $0.hasPrefix("|") }.map(Self.cells)
    let written = rows.flatMap { row in Self.quoted(row[0]).map { ($0, row[1]) } }
    for spec in ClauseTable.entries {
      let found = written.filter { $0.0 == spec.text || $0.0.hasPrefix(spec.text + " ") }
      #expect(!found.isEmpty, "'\(spec.text)' is missing from the README's table")
      for (clause, meaning) in found {
        let isMarked = meaning.hasPrefix("policy-wide")
        #expect(isMarked == spec.clause.isPolicyWide, "'\(clause)': \(meaning)")
      }
    }
    for (clause, _) in written {
      let words = [Keyword.retry.text] + ClauseTable.entries.map(\.text)
      #expect(
        words.contains { clause == $0 || clause.hasPrefix($0 + " ") },
        "'\(clause)' in the README's table is no clause")
    }
  }

  @Test("Grammar/README's recommended order of clauses is the table's")
  func recommendedOrder() throws {
    let text = try Self.read("Grammar/README.md")
    let line = try #require(
      text.split(separator: "\n").first { $0.hasPrefix("    retry COUNT ") })
    var expected = ["retry", "COUNT"]
    for spec in ClauseTable.entries {
      if spec.scope == .ruleDelay {
        if expected.last != "DELAY-CLAUSE" { expected.append("DELAY-CLAUSE") }
      } else {
        expected += spec.text.split(separator: " ").map(String.init)
        if spec.arguments.contains(where: { $0.shape != .none }) { expected.append("…") }
      }
    }
    #expect(line.split(separator: " ").map(String.init) == expected)
  }

  // MARK: - explain

  @Test("explain --help names every member explain --json writes, and no other")
  func explainMembers() async throws {
    let help = await ToolRunner.run(["explain", "--help"]).standardOutput
    let start = try #require(help.range(of: "'--json' prints one JSON object:"))
    let end = try #require(
      help.range(of: "Durations are seconds", range: start.upperBound..<help.endIndex))
    let listed = Set(
      try Self.matches(#""([A-Za-z]+)""#, in: String(help[start.upperBound..<end.lowerBound])).map {
        $0[1]
      })
    var required: Set<String> = []
    var written: Set<String> = []
    for spec in ClauseTable.entries {
      let text = Self.policy(spec, clause: try Self.fill(spec.snippet))
      let result = await ToolRunner.run(["explain", "--json", text])
      #expect(result.status == 0, "\(text): \(result.standardError)")
      let json = try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8))
      required.formUnion(Self.members(json, entersObjects: true))
      written.formUnion(Self.members(json, entersObjects: true, isEvery: true))
    }
    #expect(required.subtracting(listed).sorted() == [], "written but not in explain --help")
    #expect(listed.subtracting(written).sorted() == [], "in explain --help but never written")
  }

  /// The member names of a JSON value: of the object itself, of the objects its members
  /// hold when `entersObjects` (a policy-wide clause's, at the top), and of the objects in
  /// arrays of either (rules, schedule rows); of every object when `isEvery`.
  static func members(_ value: Any, entersObjects: Bool, isEvery: Bool = false) -> Set<String> {
    if let array = value as? [Any] {
      return array.reduce(into: []) {
        $0.formUnion(members($1, entersObjects: false, isEvery: isEvery))
      }
    }
    guard let object = value as? [String: Any] else { return [] }
    var names = Set(object.keys)
    for member in object.values where isEvery || entersObjects || member is [Any] {
      names.formUnion(members(member, entersObjects: false, isEvery: isEvery))
    }
    return names
  }

  @Test("the README names every member storm --json writes for a policy, and no other")
  func stormMembers() async throws {
    let readme = Self.paragraphs(try Self.read("README.md"))
    let paragraph = try #require(readme.first { $0.contains("`--json` prints the same numbers (") })
    let start = try #require(paragraph.range(of: "`--json` prints the same numbers ("))
    let end = try #require(paragraph[start.upperBound...].firstIndex(of: ")"))
    let listed = Set(Self.quoted(String(paragraph[start.upperBound..<end])))
    // A policy with each policy-wide clause in turn, so that each member written for some
    // policy shows.
    var written: Set<String> = []
    for spec in ClauseTable.entries where spec.scope == .policyWide {
      let policy = Self.policy(spec, clause: try Self.fill(spec.snippet))
      let result = await ToolRunner.run([
        "storm", policy, "--clients", "10", "--outage", "5s+5s", "--duration", "20s", "--json",
      ])
      // A clause the storm does not simulate (hedge) is refused, saying so.
      if result.standardError.contains("storm does not simulate") { continue }
      #expect(result.status == 0, "\(policy): \(result.standardError)")
      let root = try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8))
      for case let entry as [String: Any] in (root as? [String: Any])?["policies"] as? [Any] ?? [] {
        written.formUnion(entry.keys)
      }
    }
    #expect(!written.isEmpty)
    #expect(written.subtracting(listed).sorted() == [], "written but not in the README")
    #expect(listed.subtracting(written).sorted() == [], "in the README but never written")
  }

  // MARK: - Counts in prose

  @Test("the README counts the sample policy files Samples/ holds")
  func sampleCount() throws {
    let readme = try Self.read("README.md")
    let match = try #require(
      try Self.matches(#"([a-z]+) commented policy files"#, in: readme).first)
    let samples = try FileManager.default.contentsOfDirectory(
      atPath: Self.root.appendingPathComponent("Samples").path
    ).filter { $0.hasSuffix(".retry") }
    #expect(Self.numberWords.firstIndex(of: match[1]) == samples.count, "\(samples.sorted())")
  }

  @Test("ProcessWideState counts the things it then describes")
  func processWideCount() throws {
    let text = try Self.read("Sources/RetryPolicy/Documentation.docc/ProcessWideState.md")
    let match = try #require(try Self.matches(#"([A-Z][a-z]+) things are kept"#, in: text).first)
    let headings = text.split(separator: "\n").filter { $0.hasPrefix("## ") }
    let described = headings.drop { $0 != "## Overview" }.dropFirst()
      .prefix { !$0.hasPrefix("## Other") }
    #expect(Self.numberWords.firstIndex(of: match[1].lowercased()) == described.count)
  }

  // MARK: - Ranges and units

  /// `1s … 24h`, `` `100ms` … `24h` ``, `1 … 1,000,000`: a range's two ends.
  static let rangePattern = #"`?(\d[\d.,]*[A-Za-z]*)`?\s*…\s*`?(\d[\d.,]*[A-Za-z]*)`?"#

  @Test("every range of durations in the documents is in units the language reads")
  func rangesParse() throws {
    for (path, text) in try Self.documents() {
      for match in try Self.matches(Self.rangePattern, in: text) {
        for end in match[1...2] where end.contains(where: \.isLetter) && !end.hasSuffix("xx") {
          let errors = analyze(policy: "retry 1 delay \(end)").diagnostics
            .filter { $0.severity == .error && $0.id != .durationTooLong }
          #expect(errors.isEmpty, "\(path): '\(match[0])': \(errors.map(\.message))")
        }
      }
    }
  }

  @Test("a duration in days appears only where the documents call it an error")
  func noDays() throws {
    for (path, text) in try Self.documents() {
      for paragraph in Self.paragraphs(text) {
        let days = try Self.matches(#"(?<![\w.])\d+(\.\d+)?d\b"#, in: paragraph)
        guard !days.isEmpty else { continue }
        #expect(
          paragraph.contains("error") || paragraph.contains("unknown"),
          "\(path): \(days.map { $0[0] }) in: \(paragraph.prefix(160))")
      }
    }
  }

  /// A setting of a clause the table states a range for: `over 1s … 24h` of `breaker`.
  struct WordRange: CustomStringConvertible {
    var spec: ClauseSpec
    var word: String
    var placeholder: Int
    var lowest: String
    var highest: String
    var description: String { "\(spec.text) … \(word) \(lowest) … \(highest)" }
  }

  /// The ranges the clause table gives the arguments that follow a word of their own
  /// (`over D` of `breaker`), with the snippet's placeholder of each (`over ${2:30s}`).
  static func wordRanges() throws -> [WordRange] {
    var ranges: [WordRange] = []
    for spec in ClauseTable.entries {
      for argument in spec.arguments {
        let lowest: String
        let highest: String
        switch argument.limits.bounds {
        case .durations(let range):
          (lowest, highest) = (range.lowerBound.policyText, range.upperBound.policyText)
        case .wholeNumbers(let range):
          (lowest, highest) = (String(range.lowerBound), String(range.upperBound))
        case .any, .duration, .percentAboveZero, .factor, .decimals:
          continue
        }
        guard let word = argument.word,
          let placeholder = try matches(#"\b\#(word) \$\{(\d+):"#, in: spec.snippet)
            .first.flatMap({ Int($0[1]) })
        else { continue }
        ranges.append(
          WordRange(
            spec: spec, word: word, placeholder: placeholder, lowest: lowest, highest: highest))
      }
    }
    return ranges
  }

  /// `value` times `factor`, in its unit: `1s` × 0.5 is `0.5s`; `100` + 1 for a count.
  static func beyond(_ value: String, scaledBy factor: Double, orPlus step: Int) -> String? {
    let digits = value.prefix { $0.isNumber || $0 == "." }
    let unit = value.dropFirst(digits.count)
    guard let number = Double(digits) else { return nil }
    if unit.isEmpty { return number + Double(step) < 0 ? nil : String(Int(number) + step) }
    let scaled = number * factor
    return (scaled == scaled.rounded() ? String(Int(scaled)) : String(scaled)) + unit
  }

  @Test("the checker enforces the ranges the clause table states for a clause's words")
  func wordRangesAreEnforced() throws {
    let ranges = try Self.wordRanges()
    #expect(!ranges.isEmpty)
    for range in ranges {
      for (value, isValid) in [
        (range.lowest, true), (range.highest, true),
        (Self.beyond(range.lowest, scaledBy: 0.5, orPlus: -1), false),
        (Self.beyond(range.highest, scaledBy: 2, orPlus: 1), false),
      ] {
        guard let value else { continue }
        let text = Self.policy(
          range.spec, clause: try Self.fill(range.spec.snippet, [range.placeholder: value]))
        #expect(analyze(policy: text).hasErrors != isValid, "\(range): \(text)")
      }
    }
  }

  /// `` `1,000,000` `` → `1000000`.
  static func normalized(_ end: String) -> String {
    end.filter { $0 != "`" && $0 != "," && $0 != " " }
  }

  @Test("every range the documents give for a clause's word is the clause table's")
  func documentedWordRanges() throws {
    let documents = try Self.documents()
    for range in try Self.wordRanges() {
      var stated: [(String, String, String)] = []  // (where, lowest, highest)
      for (path, text) in documents {
        for line in text.split(separator: "\n") where line.hasPrefix("|") {
          let cells = Self.cells(line)
          guard let first = cells.first else { continue }
          // | `over D` | … | `1s` … `24h` |
          if first.hasPrefix("`\(range.word) ") || first == "`\(range.word)`",
            let match = try Self.matches(Self.rangePattern, in: String(line)).first
          {
            stated.append((path, match[1], match[2]))
          }
          // | P, `over`, `min`, `for` in `breaker …` | 1 … 100; 1s … 24h; … |
          if cells.count > 1, let inClause = first.range(of: " in `") {
            let words = first[..<inClause.lowerBound].components(separatedBy: ", ")
            let ends = cells[1].components(separatedBy: "; ")
            if words.count == ends.count, let index = words.firstIndex(of: "`\(range.word)`"),
              let match = try Self.matches(Self.rangePattern, in: ends[index]).first
            {
              stated.append((path, match[1], match[2]))
            }
          }
        }
        // … `over` 1s … 24h, …
        for paragraph in Self.paragraphs(text) {
          for match in try Self.matches(
            #"`\#(range.word)(?: [A-Z])?`\s+"# + Self.rangePattern, in: paragraph)
          {
            stated.append((path, match[1], match[2]))
          }
        }
      }
      #expect(!stated.isEmpty, "no document states the range of \(range)")
      for (path, lowest, highest) in stated {
        #expect(
          Self.normalized(lowest) == range.lowest && Self.normalized(highest) == range.highest,
          "\(path) gives \(lowest) … \(highest) for \(range)")
      }
    }
  }
}
