import Foundation
import RetryPolicy
import RetryPolicyTestSupport
import Testing

/// The package's `Samples` folder, found from this file's path.
private let samples = packageRoot.appendingPathComponent("Samples")

private func sampleText(_ path: String) throws -> String {
  try String(contentsOf: samples.appendingPathComponent(path), encoding: .utf8)
}

@Suite("Sample files through the parser and printer")
struct SampleSyntaxTests {
  static let validSamples = [
    "database-reconnect.retry", "http-api-client.retry", "login-token-refresh.retry",
    "mobile-app.retry", "queue-consumer.retry", "webhook-delivery.retry", "grpc-client.retry",
  ]

  @Test("each sample parses without syntax errors and prints idempotently", arguments: validSamples)
  func validSample(name: String) throws {
    let (syntax, diagnostics) = Parser.parseFile(try sampleText(name))
    #expect(diagnostics.isEmpty, "\(diagnostics)")
    #expect(!syntax.policies.isEmpty)
    let printed = CanonicalPrinter.print(syntax)
    let (reparsed, rediagnostics) = Parser.parseFile(printed)
    #expect(rediagnostics.isEmpty)
    #expect(reparsed.policies.map(\.name.text) == syntax.policies.map(\.name.text))
    #expect(reparsed.comments.count == syntax.comments.count)
    #expect(CanonicalPrinter.print(reparsed) == printed)
  }

  @Test(
    "the syntax mistakes of the mistake samples are found on their lines",
    arguments: [
      ("counts.retry.bad", ["unexpected-character@16:24"]),
      ("delays.retry.bad", []),
      (
        "keywords.retry.bad",
        [
          "unknown-clause@10:28", "unknown-clause@11:34", "unknown-clause@16:5",
          "expected-retry-after@17:50",
        ]
      ),
      ("limits.retry.bad", ["number-too-large@16:23"]),
      ("policies.retry.bad", ["unterminated-block@24:1"]),
      ("units.retry.bad", ["unknown-unit@11:35", "missing-unit@12:33"]),
    ])
  func mistakeSample(name: String, expected: [String]) throws {
    let (_, diagnostics) = Parser.parseFile(try sampleText("mistakes/" + name))
    #expect(diagnostics.map { "\($0.id.rawValue)@\($0.line):\($0.column)" } == expected)
  }
}
