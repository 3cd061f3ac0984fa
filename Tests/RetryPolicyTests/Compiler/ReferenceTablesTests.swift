import Foundation
import Testing

@testable import RetryPolicy

/// Grammar/README.md's section 12, read as a test reads it: its tables of limits and of
/// diagnostics must match the checker's limits and `DiagnosticID.allCases`, so that neither
/// can change without the other.
@Suite("The reference's tables")
struct ReferenceTablesTests {
  /// Section 12 of Grammar/README.md, from its heading to the next section.
  static func limitsAndChecksSection() throws -> String {
    let url = CompileTextTests.packageRoot.appendingPathComponent("Grammar/README.md")
    let text = try String(contentsOf: url, encoding: .utf8)
    let start = try #require(text.range(of: "## 12. Limits and checks"))
    let rest = text[start.upperBound...]
    let end = rest.range(of: "\n## ")?.lowerBound ?? rest.endIndex
    return String(rest[..<end])
  }

  /// The rows of the table under `heading` (`### Limits`), each as its cells.
  static func table(under heading: String, in section: String) throws -> [[String]] {
    let start = try #require(section.range(of: heading + "\n"))
    var rows: [[String]] = []
    var hasStarted = false
    for line in section[start.upperBound...].split(
      separator: "\n", omittingEmptySubsequences: false)
    {
      if line.hasPrefix("|") {
        hasStarted = true
        let cells = line.split(separator: "|", omittingEmptySubsequences: false).dropFirst()
          .dropLast().map { $0.trimmingCharacters(in: .whitespaces) }
        if cells.allSatisfy({ $0.allSatisfy { $0 == "-" } }) { continue }
        rows.append(cells)
      } else if hasStarted {
        break
      }
    }
    return Array(rows.dropFirst())  // the header
  }

  /// The words in backticks in `text`.
  static func quoted(_ text: String) -> [String] {
    text.split(separator: "`", omittingEmptySubsequences: false).enumerated()
      .filter { $0.offset % 2 == 1 }.map { String($0.element) }
  }

  @Test("every diagnostic id is in the catalogue tables, and every id there exists")
  func catalogueMatchesTheIdentifiers() throws {
    let section = try Self.limitsAndChecksSection()
    var documented: [String] = []
    for heading in ["### Syntax errors", "### Semantic errors", "### Warnings"] {
      let rows = try Self.table(under: heading, in: section)
      #expect(!rows.isEmpty, "no table under \(heading)")
      documented += rows.compactMap { row in row.first.flatMap { Self.quoted($0).first } }
    }
    let notesLine = try #require(
      section.split(separator: "\n").first { $0.hasPrefix("Notes (") })
    documented += Self.quoted(String(notesLine))
    let identifiers = DiagnosticID.allCases.map(\.rawValue)
    #expect(Set(identifiers).subtracting(documented).sorted() == [])
    #expect(Set(documented).subtracting(identifiers).sorted() == [])
    #expect(documented.count == Set(documented).count, "an id is documented twice")
  }

  @Test("the limits table states the limits the checker enforces")
  func limitsTableMatchesTheChecker() throws {
    let rows = try Self.table(under: "### Limits", in: Self.limitsAndChecksSection())
    var allowed: [String: String] = [:]
    for row in rows where row.count == 3 { allowed[row[0]] = row[1] }
    let percent = "0 < P ≤ \(PolicyLimits.largestPercent)"
    let expected = [
      "retry count N": "0 … \(PolicyLimits.largestCount)",
      "any duration":
        "at most \(PolicyLimits.longestDurationHours)h "
        + "(\(grouped(PolicyLimits.longestDuration(in: .seconds))) s)",
      "factor F in `xF`": "\(PolicyLimits.smallestFactor) ≤ F ≤ \(PolicyLimits.largestFactor)",
      "jitter P in `jitter P%`": percent,
      "budget P in `budget P%`": percent,
    ]
    for (what, limit) in expected {
      #expect(allowed[what] == limit, "the row '\(what)'")
    }
    #expect(PolicyLimits.longestDuration == .seconds(PolicyLimits.longestDuration(in: .seconds)))
    // Every id of the table exists, and every limit's id is in the table.
    let identifiers = Set(DiagnosticID.allCases.map(\.rawValue))
    let named = Set(rows.flatMap { Self.quoted($0.last ?? "") }.filter { !$0.contains(" ") })
    #expect(named.subtracting(identifiers).sorted() == [])
    let limitIdentifiers: [DiagnosticID] = [
      .countTooLarge, .numberTooLarge, .durationTooLong, .zeroDuration, .zeroDelay,
      .factorBelowOne, .factorTooLarge, .factorOfOne, .jitterOutOfRange, .budgetOutOfRange,
    ]
    #expect(Set(limitIdentifiers.map(\.rawValue)).subtracting(named).sorted() == [])
  }

  /// `36 000 000`: digits in groups of three, as the reference writes large numbers.
  private func grouped(_ value: Int) -> String {
    var digits = Array(String(value))
    var groups: [String] = []
    while !digits.isEmpty {
      groups.insert(String(digits.suffix(3)), at: 0)
      digits.removeLast(min(3, digits.count))
    }
    return groups.joined(separator: " ")
  }
}

/// Limits are compared with the number as written, not after rounding it to a `Double`.
@Suite("Exact limits")
struct ExactLimitsTests {
  @Test(
    "a number just past a limit is an error though it rounds onto the limit",
    arguments: [
      ("retry 3 backoff 1s x0.99999999999999999999", DiagnosticID.factorBelowOne),
      ("retry 3 backoff 1s x1000.0000000000000001", .factorTooLarge),
      ("retry 3 backoff 1s x1001", .factorTooLarge),
      ("retry 3 delay 1s jitter 100.0000000000000001%", .jitterOutOfRange),
      ("retry 3 delay 1s jitter 0.0%", .jitterOutOfRange),
      ("retry 3 budget 100.0000000000000001%", .budgetOutOfRange),
      ("retry 3 delay 10000.0000000000001h", .durationTooLong),
      ("retry 3 delay 36000000.0000000001s", .durationTooLong),
      ("retry 3 delay 600000.000000000000000001m", .durationTooLong),
    ])
  func justPastTheLimit(source: String, id: DiagnosticID) {
    let analysis = analyze(policy: source)
    #expect(analysis.diagnostics.map(\.id) == [id])
  }

  @Test(
    "a number on a limit, however written, is accepted",
    arguments: [
      "retry 3 backoff 1s x1000", "retry 3 backoff 1s x1000.000000000000000000",
      "retry 3 backoff 1s x001.5", "retry 3 delay 1s jitter 100.0000%",
      "retry 3 delay 1s jitter 0.0000000000000000000001%", "retry 3 budget 100%",
      "retry 3 delay 10000h", "retry 3 delay 36000000000ms",
    ])
  func onTheLimit(source: String) {
    #expect(analyze(policy: source).diagnostics.isEmpty)
  }

  @Test("a factor of one, however written, is the warning and not an error")
  func factorOfOne() {
    #expect(analyze(policy: "retry 3 backoff 1s x1.000").diagnostics.map(\.id) == [.factorOfOne])
    #expect(analyze(policy: "retry 3 backoff 1s x1.0000000000000000001").diagnostics.isEmpty)
  }

  @Test(
    "a number as written compares exactly with a whole number",
    arguments: [
      ("0.99999999999999999999", 1, Literals.Order.below), ("1", 1, .equal),
      ("1.000", 1, .equal), ("001", 1, .equal), ("1.0001", 1, .above), ("0", 0, .equal),
      ("0.0", 0, .equal), ("0.01", 0, .above), ("99", 100, .below), ("100", 100, .equal),
      ("1000", 100, .above), ("12345678901234567890123", 100, .above),
    ])
  func order(text: String, bound: Int, order: Literals.Order) {
    #expect(Literals.order(of: text, comparedWith: bound) == order)
  }
}
