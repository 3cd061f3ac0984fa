import Foundation
import RetryPolicy
import RetryPolicyEngines
import Testing

/// The Envoy export of a `rate` (contract §14): the clause, and a policy given a
/// ``RatePolicy`` through the library, export the `local_ratelimit` filter whose bytes
/// `.ci/engines/local-ratelimit.json` holds, and which `.ci/engines-e2e` parses strictly into
/// xds-protos' `LocalRateLimit`.
@Suite("Envoy export of a rate")
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

  @Test("the clause 'rate' exports the same filter, with a warning at the clause; gRPC warns")
  func clause() async throws {
    let library = try Self.exported().json
    let text = try EnvoyRetrySettings.export(policy: Self.text + " rate 50/s burst 80").json
    #expect(text.contains(try #require(library.split(separator: "\"http_filters\"").last)))
    let perMinute = try EnvoyRetrySettings.export(policy: "retry 2 rate 30/m").json
    #expect(perMinute.contains("\"tokens_per_fill\": 30"))
    #expect(perMinute.contains("\"fill_interval\": \"60s\""))
    let envoy = await ToolRunner.run(["export", "--to", "envoy", "retry 2 rate 30/m"])
    #expect(envoy.status == 0)
    #expect(envoy.standardError.contains("<policy>:1:9: warning: Envoy's local_ratelimit refuses"))
    let strict = await ToolRunner.run(["export", "--to", "envoy", "--strict", "retry 2 rate 30/m"])
    #expect(strict.status == 1)
    let grpc = await ToolRunner.run(["export", "--to", "grpc", "retry 2 on unavailable rate 5/s"])
    #expect(
      grpc.standardError.contains(
        "<policy>:1:24: warning: gRPC's service config has no rate limit: 'rate' is left out"))
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
