import Testing

@testable import RetryPolicy

/// One input per message of the catalogue, and where its diagnostic (or note) must point.
private struct CatalogueCase: CustomTestStringConvertible, Sendable {
  var id: DiagnosticID
  var source: String
  var location: String
  var vocabulary: Vocabulary = .open
  /// The input as bytes, when a string cannot hold it (bytes that are not UTF-8).
  var bytes: [UInt8]? = nil

  var testDescription: String { id.rawValue }
}

private let catalogue: [CatalogueCase] = [
  // Lexical and syntax errors.
  .init(id: .unexpectedCharacter, source: "policy p = retry 3 @", location: "1:20"),
  .init(
    id: .invalidUTF8, source: "", location: "1:20",
    bytes: Array("policy p = retry 3 ".utf8) + [0xC0, 0xAF]),
  .init(id: .malformedNumber, source: "policy p = retry 3 delay 1.s", location: "1:26"),
  .init(id: .numberTooLarge, source: "policy p = retry 99999999999999999999999", location: "1:18"),
  .init(id: .unknownUnit, source: "policy p = retry 3 delay 2d", location: "1:27"),
  .init(id: .missingUnit, source: "policy p = retry 3 delay 2", location: "1:26"),
  .init(id: .unknownClause, source: "policy p = retry 3 bakoff 1s", location: "1:20"),
  .init(id: .unexpectedToken, source: "policy p = retry 3 delay 1s, 2s", location: "1:28"),
  .init(id: .expectedCount, source: "policy p = retry delay 1s", location: "1:18"),
  .init(id: .expectedDuration, source: "policy p = retry 3 delay", location: "1:25"),
  .init(id: .expectedName, source: "policy p = retry 3 on", location: "1:22"),
  .init(id: .expectedPercent, source: "policy p = retry 3 delay 1s jitter 10", location: "1:38"),
  .init(id: .expectedFactor, source: "policy p = retry 3 backoff 1s x", location: "1:32"),
  .init(id: .expectedJitter, source: "policy p = retry 3 delay 1s jitter", location: "1:35"),
  .init(id: .expectedRetryAfter, source: "policy p = retry 3 honoring", location: "1:28"),
  .init(id: .expectedHedge, source: "policy p = retry 3 hedge 2 within 1s", location: "1:28"),
  .init(
    id: .misplacedWord, source: "policy p = retry 3 breaker 50% for 5s over 10s",
    location: "1:39"),
  .init(
    id: .repeatedWord, source: "policy p = retry 3 breaker 50% over 1s over 2s",
    location: "1:40"),
  .init(id: .expectedPolicyName, source: "policy = retry 3", location: "1:8"),
  .init(id: .expectedPolicyBody, source: "policy p retry 3", location: "1:10"),
  .init(id: .unterminatedBlock, source: "policy p {\n  retry 3\n", location: "3:1"),
  .init(id: .invalidName, source: "policy p = retry 3 on server-error", location: "1:23"),
  .init(id: .expectedPolicy, source: "retry 3", location: "1:1"),
  .init(id: .expectedRetry, source: "policy p {\n  delay 1s\n}", location: "2:3"),
  .init(id: .emptyPolicy, source: "policy p { }", location: "1:8"),
  // Semantic errors.
  .init(
    id: .duplicateClause, source: "policy p = retry 3 delay 1s max 2s max 3s", location: "1:36"),
  .init(id: .conflictingDelay, source: "policy p = retry 3 delay 1s backoff 1s", location: "1:29"),
  .init(id: .foreverWithoutWithin, source: "policy p = retry forever delay 1s", location: "1:18"),
  .init(id: .countTooLarge, source: "policy p = retry 20000", location: "1:18"),
  .init(id: .factorBelowOne, source: "policy p = retry 3 backoff 1s x0.5", location: "1:32"),
  .init(id: .factorTooLarge, source: "policy p = retry 3 backoff 1s x5000", location: "1:32"),
  .init(id: .jitterOutOfRange, source: "policy p = retry 3 delay 1s jitter 150%", location: "1:36"),
  .init(id: .jitterWithoutDelay, source: "policy p = retry 3 jitter full", location: "1:20"),
  .init(id: .zeroDuration, source: "policy p = retry 3 backoff 0s", location: "1:28"),
  .init(id: .durationTooLong, source: "policy p = retry 3 delay 20000h", location: "1:26"),
  .init(id: .budgetOutOfRange, source: "policy p = retry 3 budget 0%", location: "1:27"),
  .init(
    id: .hedgeCountOutOfRange, source: "policy p = retry 3 hedge 11 after 1s", location: "1:26"),
  .init(
    id: .hedgeConflict, source: "policy p = retry 3 delay 1s hedge 1 after 1s", location: "1:20"),
  .init(id: .breakerOutOfRange, source: "policy p = retry 3 breaker 0%", location: "1:28"),
  .init(id: .sheddingOutOfRange, source: "policy p = retry 3 limit 0", location: "1:26"),
  .init(id: .duplicatePolicy, source: "policy p = retry 1\npolicy p = retry 2", location: "2:8"),
  .init(
    id: .unknownErrorClass, source: "policy p = retry 3 on servrError", location: "1:23",
    vocabulary: Vocabulary(errorClasses: ["serverError"])),
  .init(
    id: .unknownHook, source: "policy p = retry 1 after refreshTokn", location: "1:26",
    vocabulary: Vocabulary(hooks: ["refreshToken"])),
  .init(id: .classInOnAndExcept, source: "policy p = retry 3 on a except a", location: "1:32"),
  .init(id: .invalidStatusCode, source: "policy p = retry 3 on 503, 600", location: "1:28"),
  .init(id: .invalidStatusClass, source: "policy p = retry 3 except 6xx", location: "1:27"),
  // Warnings.
  .init(id: .capBelowFirstDelay, source: "policy p = retry 3 delay 5s max 1s", location: "1:29"),
  .init(
    id: .unreachableRule, source: "policy p {\n    retry 3 on a\n    retry 2 on a\n}",
    location: "3:5"),
  .init(id: .factorOfOne, source: "policy p = retry 3 backoff 1s x1", location: "1:32"),
  .init(id: .zeroDelay, source: "policy p = retry 3 delay 0s", location: "1:20"),
  .init(id: .capWithoutDelay, source: "policy p = retry 3 max 1s", location: "1:20"),
  .init(
    id: .timeoutNotBelowDeadline, source: "policy p = retry 3 within 10s timeout 10s",
    location: "1:31"),
  // Notes.
  .init(id: .firstGivenHere, source: "policy p = retry 3 delay 1s max 1s max 2s", location: "1:29"),
  .init(id: .blockOpensHere, source: "policy p {\n retry 3", location: "1:10"),
  .init(
    id: .diagnosticsOmitted, source: "policy p = retry 3" + String(repeating: " @", count: 101),
    location: "1:220"),
]

@Suite("Diagnostic catalogue")
struct DiagnosticCatalogueTests {
  @Test("every message of the catalogue has a case in this table")
  func tableCoversCatalogue() {
    let covered = Set(catalogue.map(\.id))
    // Every id of the catalogue is reported by the core's parser and checker: the policy
    // store's (`unreadable-file`, `file-too-large`) and the export's (`inexact-export`) are
    // their own, outside the catalogue.
    let missing = DiagnosticID.allCases.filter { !covered.contains($0) }
    #expect(missing.isEmpty, "no test input for \(missing.map(\.rawValue))")
  }

  @Test("each message is reported for its input, at its line and column", arguments: catalogue)
  private func reported(_ entry: CatalogueCase) {
    let analysis =
      entry.bytes.map { analyze(policyFile: $0, vocabulary: entry.vocabulary) }
      ?? analyze(policyFile: entry.source, vocabulary: entry.vocabulary)
    let all = analysis.diagnostics + analysis.diagnostics.flatMap(\.notes)
    let found = all.filter { $0.id == entry.id }
    #expect(
      found.contains { "\($0.line):\($0.column)" == entry.location },
      "\(entry.id.rawValue) expected at \(entry.location); got \(all)")
    for diagnostic in found {
      #expect(diagnostic.severity == expectedSeverity(of: entry.id))
    }
  }

  @Test("messages are lowercase phrases without a final period", arguments: catalogue)
  private func style(_ entry: CatalogueCase) {
    let analysis =
      entry.bytes.map { analyze(policyFile: $0, vocabulary: entry.vocabulary) }
      ?? analyze(policyFile: entry.source, vocabulary: entry.vocabulary)
    for diagnostic in analysis.diagnostics + analysis.diagnostics.flatMap(\.notes) {
      let message = diagnostic.message
      #expect(!message.isEmpty)
      #expect(!message.hasSuffix("."), "\(message)")
      #expect(message.first.map { !$0.isUppercase } ?? false, "\(message)")
    }
  }

  @Test("a misspelt delay clause is reported alone, without warnings about a missing delay")
  func noCascadeFromBrokenDelay() {
    let analysis = analyze(policy: "retry 3 bakoff 1s jitter full max 5s")
    #expect(analysis.diagnostics.map(\.id) == [.unknownClause])
    let clean = analyze(policy: "retry 3 jitter full max 5s")
    #expect(clean.diagnostics.map(\.id) == [.jitterWithoutDelay, .capWithoutDelay])
  }

  private func expectedSeverity(of id: DiagnosticID) -> Diagnostic.Severity {
    switch id {
    case .capBelowFirstDelay, .unreachableRule, .factorOfOne, .zeroDelay, .capWithoutDelay,
      .timeoutNotBelowDeadline:
      .warning
    case .firstGivenHere, .blockOpensHere, .diagnosticsOmitted:
      .note
    default:
      .error
    }
  }
}
