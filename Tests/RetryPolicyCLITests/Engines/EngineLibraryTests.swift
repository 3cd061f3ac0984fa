import Foundation
import RetryPolicy
import RetryPolicyEngines
import Testing

/// The public API of `RetryPolicyEngines` against `retry-policy export` and `import`: a
/// program gets the tool's bytes and the tool's warnings, at the same places.
@Suite("Engines library: the same documents and warnings as the command line")
struct EngineLibraryTests {
  /// Exact and inexact policies of every kind of clause the engines map.
  static let policies = [
    "retry 5 on serverError backoff 1s x1.5 jitter 10%",
    "retry 3 on unavailable, RESOURCE_EXHAUSTED backoff 100ms jitter 20% max 1s",
    "retry forever on 503 delays 1s, 2s, 5s within 2m timeout 10s",
    "retry 2 on unavailable immediately hedge 2 after 50ms budget 10%",
    "retry 4 on 5xx backoff 200ms +100ms jitter full max 2s breaker 50% over 1m min 10 for 10s",
    "retry 3 except notFound backoff 1s honoring retry-after after refresh",
  ]

  /// The `LINE:COL: warning: MESSAGE` lines of the tool's standard error.
  static func warningLines(_ standardError: String) -> [String] {
    standardError.split(separator: "\n").map(String.init)
      .filter { $0.hasPrefix("<policy>:") && $0.contains(": warning: ") }
      .map { String($0.dropFirst("<policy>:".count)) }
  }

  @Test("gRPC: the library's JSON and warnings are the tool's", arguments: policies)
  func grpc(policy: String) async throws {
    let exported = try GRPCServiceConfig.export(policy: policy, service: "pkg.Service")
    let tool = await ToolRunner.run(["export", "--to", "grpc", "--service", "pkg.Service", policy])
    #expect(tool.status == 0)
    #expect(exported.json == tool.standardOutput)
    #expect(exported.warnings.map(\.description) == Self.warningLines(tool.standardError))
    #expect(exported.warnings.allSatisfy { $0.id == .inexactExport && $0.severity == .warning })
  }

  @Test("Envoy: the library's YAML, JSON and warnings are the tool's", arguments: policies)
  func envoy(policy: String) async throws {
    let exported = try EnvoyRetrySettings.export(policy: policy)
    let yaml = await ToolRunner.run(["export", "--to", "envoy", policy])
    let json = await ToolRunner.run(["export", "--to", "envoy", "--json", policy])
    #expect(exported.yaml == yaml.standardOutput)
    #expect(exported.json == json.standardOutput)
    #expect(exported.warnings.map(\.description) == Self.warningLines(yaml.standardError))
  }

  @Test("an invalid policy throws the compile error with every diagnostic")
  func invalidPolicy() throws {
    #expect(throws: PolicyCompileError.self) {
      try EnvoyRetrySettings.export(policy: "retry 3 bakoff 1s")
    }
  }

  @Test("a name gRPC refuses is an error, and so is a method without a service")
  func invalidNames() {
    #expect(throws: GRPCServiceConfig.InvalidNameError.self) {
      try GRPCServiceConfig.export(policy: "retry 3", service: "not a name")
    }
    #expect(throws: GRPCServiceConfig.InvalidNameError.self) {
      try GRPCServiceConfig.export(policy: "retry 3", method: "SayHello")
    }
  }

  @Test("an import gives the tool's text, and the policies of that text as values")
  func importConfig() async throws {
    let config = """
      {"methodConfig": [{"name": [{"service": "pkg.Service"}], "retryPolicy": {
        "maxAttempts": 9, "initialBackoff": "0.1s", "maxBackoff": "1s",
        "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE"]}}]}
      """
    let header = ["imported from - by 'retry-policy import --from grpc'"]
    let imported = try GRPCServiceConfig.importPolicies(
      fromJSON: Array(config.utf8), header: header)
    let tool = await ToolRunner.run(["import", "--from", "grpc", "-"], input: config)
    #expect(imported.text == tool.standardOutput)
    #expect(imported.policies == (try compile(policyFile: imported.text)).policies)
    #expect(
      imported.warnings.map { "retry-policy: warning: -: \($0)" }.joined(separator: "\n")
        == tool.standardError.trimmingCharacters(in: .newlines))
  }

  @Test("a config gRPC refuses throws every problem with its JSON path")
  func importRefused() {
    let config = #"{"methodConfig": [{"retryPolicy": {"maxAttempts": 1}}]}"#
    #expect(throws: GRPCServiceConfig.ImportError.self) {
      try GRPCServiceConfig.importPolicies(fromJSON: Array(config.utf8))
    }
  }
}
