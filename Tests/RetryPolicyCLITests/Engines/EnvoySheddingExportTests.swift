import Foundation
import RetryPolicy
import RetryPolicyEngines
import Testing

/// The Envoy export of a `rate` (contract §14), which the language cannot write yet: a
/// policy given a ``RatePolicy`` through the library exports the `local_ratelimit` filter
/// whose bytes `.ci/engines/local-ratelimit.json` holds, and which `.ci/engines-e2e` parses
/// strictly into xds-protos' `LocalRateLimit`.
@Suite("Envoy export of a rate set through the library")
struct EnvoySheddingExportTests {
  /// The policy's text; the rate is added to its compiled value.
  static let text = "retry 3 on serverError backoff 100ms"

  /// `.ci/engines/local-ratelimit.json`, read from the package's folder.
  static func fixture() throws -> String {
    let root = URL(fileURLWithPath: #filePath)
      .deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent().deletingLastPathComponent()
    return try String(
      contentsOf: root.appendingPathComponent(".ci/engines/local-ratelimit.json"),
      encoding: .utf8)
  }

  /// The export of ``text`` with `rate 50/s burst 80`.
  static func exported() throws -> EngineDocument {
    var checked = try #require(analyze(policy: text).checked.first)
    checked.policy.rate = RatePolicy(count: 50, per: .seconds(1), burst: 80)
    return EngineDocument(EnvoyExport.export(checked.policy, locator: ExportLocator(checked)))
  }

  @Test("the export is the fixture .ci/engines-e2e parses into LocalRateLimit")
  func matchesFixture() throws {
    let document = try Self.exported()
    #expect(document.json == (try Self.fixture()))
    #expect(document.json.contains("\"max_tokens\": 80"))
    #expect(document.json.contains("\"tokens_per_fill\": 50"))
    #expect(document.json.contains("\"fill_interval\": \"1s\""))
  }

  @Test("the rate's inexact parts are a warning")
  func warns() throws {
    let warnings = try Self.exported().warnings.map(\.description)
    #expect(warnings.contains { $0.contains("local_ratelimit refuses a request") })
  }

  @Test("the YAML export quotes the key @type, which YAML reserves, and names each filter")
  func yamlQuotesType() throws {
    let yaml = try EnvoyRetrySettings.export(
      policy: "retry 3 on serverError limit adaptive max 50 throttle x2"
    ).yaml
    #expect(!yaml.contains("\n        @type:"))
    #expect(
      yaml.contains(
        "\"@type\": \"type.googleapis.com/envoy.extensions.filters.http.admission_control.v3"
          + ".AdmissionControl\""))
    #expect(yaml.contains("- name: \"envoy.filters.http.adaptive_concurrency\""))
    #expect(try Self.exported().yaml.contains("max_tokens: 80"))
  }
}
