import Foundation
import Testing

@testable import RetryPolicyCLI

/// The JSON text as Foundation objects, for comparing documents whatever their layout.
private func parsed(_ text: String) throws -> NSDictionary {
  try #require(JSONSerialization.jsonObject(with: Data(text.utf8)) as? NSDictionary)
}

@Suite("Command line: export and import")
struct ExportCommandTests {
  @Test("an exact gRPC export prints the service config and nothing on standard error")
  func exactGRPC() async {
    let result = await ToolRunner.run([
      "export", "--to", "grpc", "--service", "helloworld.Greeter", "--method", "SayHello",
      "retry 3 on unavailable, RESOURCE_EXHAUSTED backoff 100ms jitter 20% max 1s",
    ])
    #expect(result.status == 0)
    #expect(result.standardError == "")
    #expect(
      result.standardOutput == """
        {
          "methodConfig": [
            {
              "name": [
                {"service": "helloworld.Greeter", "method": "SayHello"}
              ],
              "retryPolicy": {
                "maxAttempts": 4,
                "initialBackoff": "0.1s",
                "maxBackoff": "1s",
                "backoffMultiplier": 2,
                "retryableStatusCodes": ["UNAVAILABLE", "RESOURCE_EXHAUSTED"]
              }
            }
          ]
        }

        """)
  }

  @Test("gRPC has no breaker: --strict fails at the 'breaker' clause's line and column")
  func grpcBreakerStrict() async {
    let policy = "retry 3 on serverError breaker 50% for 5s"
    let lenient = await ToolRunner.run(["export", "--to", "grpc", policy])
    #expect(lenient.status == 0)
    #expect(lenient.standardError.contains("<policy>:1:24: warning: gRPC's service config has no"))
    let strict = await ToolRunner.run(["export", "--to", "grpc", "--strict", policy])
    #expect(strict.status == 1)
    #expect(strict.standardOutput == "")
    #expect(strict.standardError.contains("<policy>:1:24: error: gRPC's service config has no"))
  }

  @Test("an inexact export warns at each clause; --strict makes them errors and prints nothing")
  func warningsAndStrict() async {
    let policy = "retry 7 on unavailable, serverError backoff 1s x1.5 jitter 10%"
    let result = await ToolRunner.run(["export", "--to", "grpc", policy])
    #expect(result.status == 0)
    let lines = result.standardError.split(separator: "\n").filter { $0.hasPrefix("<policy>") }
    #expect(
      lines == [
        "<policy>:1:7: warning: gRPC clients cap attempts at 5; 8 attempts become 5",
        "<policy>:1:25: warning: 'serverError' is no gRPC status code; it is left out",
        "<policy>:1:53: warning: gRPC multiplies each delay by a uniform factor in [0.8, 1.2]"
          + " ('jitter 20%'), not ±10%",
      ])
    #expect(result.standardOutput.contains("\"maxAttempts\": 5"))
    let strict = await ToolRunner.run(["export", "--to", "grpc", "--strict", policy])
    #expect(strict.status == 1)
    #expect(strict.standardOutput == "")
    #expect(strict.standardError.contains("<policy>:1:7: error: gRPC clients cap attempts at 5"))
  }

  @Test("a hedged policy exports a hedgingPolicy")
  func hedging() async throws {
    let result = await ToolRunner.run([
      "export", "--to", "grpc", "retry 2 on unavailable hedge 2 after 50ms",
    ])
    #expect(result.status == 0)
    #expect(result.standardError == "")
    let document = try parsed(result.standardOutput)
    let configs = try #require(document["methodConfig"] as? [NSDictionary])
    #expect(
      configs.first?["hedgingPolicy"] as? NSDictionary == [
        "maxAttempts": 3, "hedgingDelay": "0.05s", "nonFatalStatusCodes": ["UNAVAILABLE"],
      ])
  }

  @Test("Envoy: YAML by default, the same as JSON with --json; factor and jitter warn")
  func envoy() async throws {
    let policy = "retry 3 on unavailable backoff 100ms max 1s timeout 2s within 10s budget 20%"
    let yaml = await ToolRunner.run(["export", "--to", "envoy", policy])
    #expect(yaml.status == 0)
    #expect(
      yaml.standardOutput == """
        route:
          timeout: "10s"
          retry_policy:
            retry_on: "unavailable"
            num_retries: 3
            per_try_timeout: "2s"
            retry_back_off:
              base_interval: "0.1s"
              max_interval: "1s"
        cluster:
          circuit_breakers:
            thresholds:
              - retry_budget:
                  budget_percent:
                    value: 20
                  min_retry_concurrency: 10

        """)
    #expect(yaml.standardError.contains("<policy>:1:24: warning: retry n waits a uniform time"))
    let json = await ToolRunner.run(["export", "--to", "envoy", "--json", policy])
    let route = try #require(try parsed(json.standardOutput)["route"] as? NSDictionary)
    #expect(route["timeout"] as? String == "10s")
    let factor = await ToolRunner.run(["export", "--to", "envoy", "retry 2 backoff 1s x1.5"])
    #expect(factor.standardError.contains("Envoy's back-off grows by a factor of 2, not 1.5"))
  }

  @Test("Envoy: statuses and classes become retriable_status_codes, less the excepted codes")
  func envoyStatuses() async throws {
    let policy = "retry 2 on 5xx, 429 except 501 backoff 1s"
    let json = await ToolRunner.run(["export", "--to", "envoy", "--json", policy])
    #expect(json.status == 0)
    let route = try #require(try parsed(json.standardOutput)["route"] as? NSDictionary)
    let retry = try #require(route["retry_policy"] as? NSDictionary)
    #expect(retry["retry_on"] as? String == "retriable-status-codes")
    let codes = try #require(retry["retriable_status_codes"] as? [Int])
    #expect(codes == Array(500...599).filter { $0 != 501 } + [429])
    // The statuses are exact: only the back-off's full jitter warns, not 'on' or 'except'.
    #expect(!json.standardError.contains("Envoy has no"))
    #expect(json.standardError.components(separatedBy: "warning:").count == 2)
    let transient = await ToolRunner.run(
      ["export", "--to", "envoy", "--json", "retry 2 on transient backoff 1s"])
    #expect(transient.standardError.contains("Envoy has no 'transient'"))
    let transientRoute = try #require(
      try parsed(transient.standardOutput)["route"] as? NSDictionary)
    let transientRetry = try #require(transientRoute["retry_policy"] as? NSDictionary)
    #expect(transientRetry["retriable_status_codes"] as? [Int] == [408, 500, 502, 503, 504])
  }

  @Test("usage errors exit 2")
  func usage() async {
    #expect(await ToolRunner.run(["export", "retry 2"]).status == 2)
    #expect(await ToolRunner.run(["export", "--to", "istio", "retry 2"]).status == 2)
    #expect(
      await ToolRunner.run(["export", "--to", "grpc", "--method", "M", "retry 2"]).status == 2)
    #expect(await ToolRunner.run(["import", "--from", "envoy", "x.json"]).status == 2)
  }

  /// Service configs whose import, exported again, gives the same config.
  static let roundTrips: [String] = [
    """
    {"methodConfig": [{"name": [{"service": "helloworld.Greeter", "method": "SayHello"}],
      "timeout": "5s", "retryPolicy": {"maxAttempts": 4, "initialBackoff": "0.1s",
      "maxBackoff": "1s", "backoffMultiplier": 2,
      "retryableStatusCodes": ["UNAVAILABLE", "RESOURCE_EXHAUSTED"]}}],
     "retryThrottling": {"maxTokens": 20, "tokenRatio": 0.1}}
    """,
    """
    {"methodConfig": [{"name": [{"service": "a.B"}], "retryPolicy": {"maxAttempts": 3,
      "initialBackoff": "0.5s", "maxBackoff": "0.5s", "backoffMultiplier": 1,
      "retryableStatusCodes": ["ABORTED"]}}]}
    """,
    """
    {"methodConfig": [{"name": [{"service": "a.B", "method": "C"}], "hedgingPolicy":
      {"maxAttempts": 5, "hedgingDelay": "0.025s",
       "nonFatalStatusCodes": ["UNAVAILABLE", "INTERNAL"]}}]}
    """,
    """
    {"methodConfig": [{"name": [{}], "retryPolicy": {"maxAttempts": 5,
      "initialBackoff": "1.5s", "maxBackoff": "30s", "backoffMultiplier": 1.6,
      "retryableStatusCodes": ["DEADLINE_EXCEEDED"]}}],
     "retryThrottling": {"maxTokens": 20, "tokenRatio": 0.25}}
    """,
  ]

  @Test("import, then export, gives back an equivalent config", arguments: roundTrips)
  func roundTrip(config: String) async throws {
    let folder = try ToolRunner.makeFolder(["service.json": config])
    defer { try? FileManager.default.removeItem(at: folder) }
    let imported = await ToolRunner.run([
      "import", "--from", "grpc", folder.appendingPathComponent("service.json").path,
    ])
    #expect(imported.status == 0)
    let policyFile = folder.appendingPathComponent("imported.retry")
    try imported.standardOutput.write(to: policyFile, atomically: true, encoding: .utf8)
    #expect(await ToolRunner.run(["check", policyFile.path]).status == 0)
    let original = try parsed(config)
    let methodConfig = try #require((original["methodConfig"] as? [NSDictionary])?.first)
    let name = (methodConfig["name"] as? [NSDictionary])?.first ?? [:]
    var arguments = ["export", "--to", "grpc", "--file", policyFile.path]
    if let service = name["service"] as? String { arguments += ["--service", service] }
    if let method = name["method"] as? String { arguments += ["--method", method] }
    let exported = await ToolRunner.run(arguments)
    #expect(exported.status == 0)
    #expect(try parsed(exported.standardOutput) == original)
  }

  @Test("import names each policy after its method and says what has no counterpart")
  func importText() async throws {
    let folder = try ToolRunner.makeFolder([
      "service.json": """
      {"methodConfig": [{"name": [{"service": "x.Y", "method": "Z"}], "retryPolicy":
        {"maxAttempts": 9, "initialBackoff": "1s", "maxBackoff": "4s",
         "backoffMultiplier": 2, "retryableStatusCodes": [14]}}],
       "retryThrottling": {"maxTokens": 10, "tokenRatio": 0.5}}
      """,
      "broken.json": "{\"methodConfig\": 3}",
    ])
    defer { try? FileManager.default.removeItem(at: folder) }
    let result = await ToolRunner.run([
      "import", "--from", "grpc", folder.appendingPathComponent("service.json").path,
    ])
    #expect(result.status == 0)
    #expect(
      result.standardOutput.contains(
        #"# grpc-service-config: {"name": [{"service": "x.Y", "method": "Z"}], "maxAttempts": 9,"#
          + #" "retryThrottling": {"maxTokens": 10, "tokenRatio": 0.5}}"#))
    #expect(result.standardOutput.contains("# maxAttempts 9: gRPC clients make 5 at most"))
    // The cap of 4s is reached before the last retry: gRPC's schedule, stated exactly.
    #expect(
      result.standardOutput.contains(
        "policy x_Y_Z = retry 4 on unavailable delays 1s, 2s, 4s, 4s jitter 20% budget 50%\n"))
    let broken = await ToolRunner.run([
      "import", "--from", "grpc", folder.appendingPathComponent("broken.json").path,
    ])
    #expect(broken.status == 1)
    #expect(broken.standardError.contains("broken.json: methodConfig: is not an array"))
  }

  @Test("explain shows the hedge timeline, and --json its member or null")
  func explainHedge() async throws {
    let text = await ToolRunner.run(["explain", "retry 2 hedge 2 after 100ms"])
    #expect(text.standardOutput.contains("attempt 1 at 0s, 2 at 100ms, 3 at 200ms"))
    let json = await ToolRunner.run(["explain", "--json", "retry 2 hedge 2 after 100ms"])
    #expect(json.standardOutput.contains("\"hedge\": {\"count\": 2, \"after\": 0.1}"))
    let none = await ToolRunner.run(["explain", "--json", "retry 2"])
    #expect(none.standardOutput.contains("\"hedge\": null"))
  }
}
