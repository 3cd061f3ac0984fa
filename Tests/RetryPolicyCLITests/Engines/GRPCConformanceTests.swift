import Foundation
import RetryPolicy
import Testing

@testable import RetryPolicyCLI
@testable import RetryPolicyEngines

// The gRPC conformance suite: service configs written for this suite from the cases of gRPC's
// C-core test/core/client_channel/retry_service_config_test.cc and from gRFC A6's examples
// and rules. Each case states gRPC's verdict: invalid ones name the JSON paths gRPC names;
// valid ones state the delays gRPC waits, which `explain --json` of the imported policy must
// predict, and the config `export` gives back must mean the same to gRPC.

/// A method config: the attempts and delays gRPC makes of it, jitter aside.
private struct GRPCMeaning: Equatable {
  var names: [String]
  var attempts: Int?
  var delays: [Double]
  var codes: Set<String>
  var attemptTimeout: String?
  var hedgingDelay: String?
  var timeout: String?
}

/// The whole config as gRPC runs it: method configs and throttling (tokens, ratio in 1/1000).
private struct GRPCConfigMeaning: Equatable {
  var methods: [GRPCMeaning]
  var throttling: [Int]?
}

/// What gRPC makes of a (valid) service config: maxAttempts clamped to 5, the delays before
/// each retry, min(initial × multiplier^(n−1), maxBackoff), the codes as a set.
private func meaning(_ text: String) throws -> GRPCConfigMeaning {
  let root = try #require(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
  func seconds(_ value: Any?) -> Double? {
    (value as? String).flatMap { Double($0.dropLast()) }
  }
  func number(_ value: Any?) -> Double? {
    (value as? NSNumber)?.doubleValue ?? (value as? String).flatMap(Double.init)
  }
  func codes(_ value: Any?) -> Set<String> {
    Set(
      (value as? [Any] ?? []).map { code in
        (code as? String) ?? GRPCStatus.name(ofCode: (code as? Int) ?? -1) ?? "?"
      })
  }
  var methods: [GRPCMeaning] = []
  for config in root["methodConfig"] as? [[String: Any]] ?? [] {
    let names = (config["name"] as? [[String: String]] ?? []).map {
      ($0["service"] ?? "") + "/" + ($0["method"] ?? "")
    }
    var method = GRPCMeaning(
      names: names, attempts: nil, delays: [], codes: [],
      timeout: (config["timeout"] as? String).flatMap { seconds($0).map { "\($0)" } })
    if let retry = config["retryPolicy"] as? [String: Any] {
      let attempts = min(Int(number(retry["maxAttempts"]) ?? 0), 5)
      method.attempts = attempts
      let initial = try #require(seconds(retry["initialBackoff"]))
      let maximum = try #require(seconds(retry["maxBackoff"]))
      let factor = try #require(number(retry["backoffMultiplier"]))
      var delay = initial
      for _ in 1..<attempts {
        method.delays.append((min(delay, maximum) * 1e6).rounded() / 1e6)
        delay *= factor
      }
      method.codes = codes(retry["retryableStatusCodes"])
      method.attemptTimeout = (retry["perAttemptRecvTimeout"] as? String).flatMap {
        seconds($0).map { "\($0)" }
      }
    } else if let hedging = config["hedgingPolicy"] as? [String: Any] {
      method.attempts = min(Int(number(hedging["maxAttempts"]) ?? 0), 5)
      method.hedgingDelay = "\(seconds(hedging["hedgingDelay"]) ?? 0)"
      method.codes = codes(hedging["nonFatalStatusCodes"])
    }
    methods.append(method)
  }
  let throttling = (root["retryThrottling"] as? [String: Any]).map { value -> [Int] in
    [
      Int(number(value["maxTokens"]) ?? 0),
      Int(((number(value["tokenRatio"]) ?? 0) * 1000 + 1e-6).rounded(.down)),
    ]
  }
  return GRPCConfigMeaning(methods: methods, throttling: methods.isEmpty ? nil : throttling)
}

/// A config of one method config `TestServ/TestMethod` with this retry policy.
private func retryConfig(_ policy: String) -> String {
  """
  {"methodConfig": [{"name": [{"service": "TestServ", "method": "TestMethod"}],
    "retryPolicy": \(policy)}]}
  """
}

/// The fields of C-core's valid retry policy, with `extra` members replacing or added.
private func retryPolicy(_ extra: String = "", codes: String = "[\"ABORTED\"]") -> String {
  var members = [
    "maxAttempts": "3", "initialBackoff": "\"1s\"", "maxBackoff": "\"120s\"",
    "backoffMultiplier": "1.6", "retryableStatusCodes": codes,
  ]
  for pair in extra.split(separator: ";") {
    let parts = pair.split(separator: "=", maxSplits: 1).map {
      $0.trimmingCharacters(in: .whitespaces)
    }
    guard parts.count == 2 else { continue }
    if parts[1] == "-" { members[parts[0]] = nil } else { members[parts[0]] = parts[1] }
  }
  return "{"
    + members.sorted { $0.key < $1.key }.map { "\"\($0.key)\": \($0.value)" }
    .joined(separator: ", ") + "}"
}

/// An invalid config and the JSON paths whose values gRPC refuses.
struct InvalidCase: CustomTestStringConvertible, Sendable {
  var name: String
  var config: String
  var paths: [String]
  var testDescription: String { name }
}

/// A valid config and the delays gRPC waits before each retry (nominal, before its jitter).
struct ValidCase: CustomTestStringConvertible, Sendable {
  var name: String
  var config: String
  /// Per method config: the nominal delays, in seconds.
  var delays: [[Double]]
  /// Phrases the imported text must hold.
  var phrases: [String] = []
  var testDescription: String { name }
}

@Suite("gRPC conformance: import and export agree with gRPC's own cases and gRFC A6")
struct GRPCConformanceTests {
  static let invalid: [InvalidCase] = [
    // retry_service_config_test.cc
    .init(
      name: "RetryThrottlingMissingFields", config: #"{"retryThrottling": {}}"#,
      paths: ["retryThrottling.maxTokens", "retryThrottling.tokenRatio"]),
    .init(
      name: "InvalidRetryThrottlingNegativeMaxTokens",
      config: #"{"retryThrottling": {"maxTokens": -2, "tokenRatio": 1.0}}"#,
      paths: ["retryThrottling.maxTokens"]),
    .init(
      name: "InvalidRetryThrottlingInvalidTokenRatio",
      config: #"{"retryThrottling": {"maxTokens": 2, "tokenRatio": -1}}"#,
      paths: ["retryThrottling.tokenRatio"]),
    .init(
      name: "InvalidRetryPolicyWrongType", config: retryConfig("5"),
      paths: ["methodConfig[0].retryPolicy"]),
    .init(
      name: "InvalidRetryPolicyRequiredFieldsMissing",
      config: retryConfig(#"{"retryableStatusCodes": ["ABORTED"]}"#),
      paths: [
        "methodConfig[0].retryPolicy.maxAttempts", "methodConfig[0].retryPolicy.initialBackoff",
        "methodConfig[0].retryPolicy.maxBackoff", "methodConfig[0].retryPolicy.backoffMultiplier",
      ]),
    .init(
      name: "InvalidRetryPolicyMaxAttemptsWrongType",
      config: retryConfig(retryPolicy(#"maxAttempts = "FOO""#)),
      paths: ["methodConfig[0].retryPolicy.maxAttempts"]),
    .init(
      name: "InvalidRetryPolicyMaxAttemptsBadValue",
      config: retryConfig(retryPolicy("maxAttempts = 1")),
      paths: ["methodConfig[0].retryPolicy.maxAttempts"]),
    .init(
      name: "InvalidRetryPolicyInitialBackoffWrongType",
      config: retryConfig(retryPolicy(#"initialBackoff = "1sec""#)),
      paths: ["methodConfig[0].retryPolicy.initialBackoff"]),
    .init(
      name: "InvalidRetryPolicyInitialBackoffBadValue",
      config: retryConfig(retryPolicy(#"initialBackoff = "0s""#)),
      paths: ["methodConfig[0].retryPolicy.initialBackoff"]),
    .init(
      name: "InvalidRetryPolicyMaxBackoffWrongType",
      config: retryConfig(retryPolicy(#"maxBackoff = "120sec""#)),
      paths: ["methodConfig[0].retryPolicy.maxBackoff"]),
    .init(
      name: "InvalidRetryPolicyMaxBackoffBadValue",
      config: retryConfig(retryPolicy(#"maxBackoff = "0s""#)),
      paths: ["methodConfig[0].retryPolicy.maxBackoff"]),
    .init(
      name: "InvalidRetryPolicyBackoffMultiplierWrongType",
      config: retryConfig(retryPolicy("backoffMultiplier = []")),
      paths: ["methodConfig[0].retryPolicy.backoffMultiplier"]),
    .init(
      name: "InvalidRetryPolicyBackoffMultiplierBadValue",
      config: retryConfig(retryPolicy("backoffMultiplier = 0")),
      paths: ["methodConfig[0].retryPolicy.backoffMultiplier"]),
    .init(
      name: "InvalidRetryPolicyEmptyRetryableStatusCodes",
      config: retryConfig(retryPolicy(codes: "[]")),
      paths: ["methodConfig[0].retryPolicy.retryableStatusCodes"]),
    .init(
      name: "InvalidRetryPolicyRetryableStatusCodesWrongType",
      config: retryConfig(retryPolicy(codes: "0")),
      paths: ["methodConfig[0].retryPolicy.retryableStatusCodes"]),
    // C-core refuses numbers here too; A6's proto enum takes them, so only `true` is refused.
    .init(
      name: "InvalidRetryPolicyRetryableStatusCodesElementsWrongType",
      config: retryConfig(retryPolicy(codes: "[true, 2]")),
      paths: ["methodConfig[0].retryPolicy.retryableStatusCodes[0]"]),
    .init(
      name: "InvalidRetryPolicyUnparseableRetryableStatusCodes",
      config: retryConfig(retryPolicy(codes: #"["FOO", "BAR"]"#)),
      paths: [
        "methodConfig[0].retryPolicy.retryableStatusCodes[0]",
        "methodConfig[0].retryPolicy.retryableStatusCodes[1]",
      ]),
    .init(
      name: "InvalidRetryPolicyPerAttemptRecvTimeoutUnparseable",
      config: retryConfig(retryPolicy(#"perAttemptRecvTimeout = "1sec""#)),
      paths: ["methodConfig[0].retryPolicy.perAttemptRecvTimeout"]),
    .init(
      name: "InvalidRetryPolicyPerAttemptRecvTimeoutWrongType",
      config: retryConfig(retryPolicy("perAttemptRecvTimeout = 1")),
      paths: ["methodConfig[0].retryPolicy.perAttemptRecvTimeout"]),
    .init(
      name: "InvalidRetryPolicyPerAttemptRecvTimeoutBadValue",
      config: retryConfig(retryPolicy(#"perAttemptRecvTimeout = "0s""#)),
      paths: ["methodConfig[0].retryPolicy.perAttemptRecvTimeout"]),
    // A6's rules and protobuf's JSON (issues 23 and 27).
    .init(
      name: "maxAttempts 2.5 is no integer", config: retryConfig(retryPolicy("maxAttempts = 2.5")),
      paths: ["methodConfig[0].retryPolicy.maxAttempts"]),
    .init(
      name: "maxAttempts 2.9 is no integer", config: retryConfig(retryPolicy("maxAttempts = 2.9")),
      paths: ["methodConfig[0].retryPolicy.maxAttempts"]),
    .init(
      name: "maxAttempts beyond Int", config: retryConfig(retryPolicy("maxAttempts = 1e30")),
      paths: ["methodConfig[0].retryPolicy.maxAttempts"]),
    .init(
      name: "maxAttempts beyond Int64 digits",
      config: retryConfig(retryPolicy("maxAttempts = 99999999999999999999999")),
      paths: ["methodConfig[0].retryPolicy.maxAttempts"]),
    .init(
      name: "status 14.7", config: retryConfig(retryPolicy(codes: "[14.7]")),
      paths: ["methodConfig[0].retryPolicy.retryableStatusCodes[0]"]),
    .init(
      name: "status beyond Int", config: retryConfig(retryPolicy(codes: "[1e400]")),
      paths: ["methodConfig[0].retryPolicy.retryableStatusCodes[0]"]),
    .init(
      name: "status 17 is unknown", config: retryConfig(retryPolicy(codes: "[17]")),
      paths: ["methodConfig[0].retryPolicy.retryableStatusCodes[0]"]),
    .init(
      name: "duplicate status codes",
      config: retryConfig(retryPolicy(codes: #"["UNAVAILABLE", 14]"#)),
      paths: ["methodConfig[0].retryPolicy.retryableStatusCodes[1]"]),
    .init(
      name: "retryPolicy [1]", config: retryConfig("[1]"),
      paths: ["methodConfig[0].retryPolicy"]),
    .init(
      name: "retryPolicy and hedgingPolicy together",
      config: """
        {"methodConfig": [{"name": [{"service": "a"}], "retryPolicy": \(retryPolicy()),
          "hedgingPolicy": {"maxAttempts": 2}}]}
        """, paths: ["methodConfig[0]"]),
    .init(
      name: "maxTokens 1001",
      config: #"{"retryThrottling": {"maxTokens": 1001, "tokenRatio": 0.1}}"#,
      paths: ["retryThrottling.maxTokens"]),
    .init(
      name: "tokenRatio 0.0001 is 0 at three decimals",
      config: #"{"retryThrottling": {"maxTokens": 10, "tokenRatio": 0.0001}}"#,
      paths: ["retryThrottling.tokenRatio"]),
    .init(
      name: "hedging maxAttempts beyond Int",
      config: #"{"methodConfig": [{"hedgingPolicy": {"maxAttempts": 1e19}}]}"#,
      paths: ["methodConfig[0].hedgingPolicy.maxAttempts"]),
    .init(
      name: "a key given twice",
      config: retryConfig(
        #"{"maxAttempts": 2, "maxAttempts": 3, "initialBackoff": "1s", "maxBackoff": "1s", "backoffMultiplier": 2, "retryableStatusCodes": ["ABORTED"]}"#
      ),
      paths: ["methodConfig[0].retryPolicy.maxAttempts"]),
    .init(
      name: "a negative duration",
      config: retryConfig(retryPolicy(#"initialBackoff = "-1s""#)),
      paths: ["methodConfig[0].retryPolicy.initialBackoff"]),
  ]

  @Test("gRPC refuses it, and so does import, naming each value's JSON path", arguments: invalid)
  func refused(_ test: InvalidCase) {
    guard case .failure(let failure) = GRPCImport.policyFile(Array(test.config.utf8)) else {
      Issue.record("imported a config gRPC refuses")
      return
    }
    let paths = failure.problems.map(\.path)
    for path in test.paths {
      #expect(paths.contains(path), "\(path) not in \(failure.problems)")
    }
    #expect(Set(paths).isSubset(of: Set(test.paths)), "\(failure.problems)")
  }

  static let valid: [ValidCase] = [
    .init(
      name: "ValidRetryPolicy", config: retryConfig(retryPolicy()), delays: [[1, 1.6]],
      phrases: ["retry 2 on aborted backoff 1s x1.6 jitter 20% max 2m"]),
    .init(
      name: "backoffMultiplier as a string (C-core's \"1.6\")",
      config: retryConfig(retryPolicy(#"backoffMultiplier = "1.6""#)), delays: [[1, 1.6]]),
    .init(
      name: "ValidRetryPolicyWithPerAttemptRecvTimeout",
      config: retryConfig(retryPolicy(#"maxAttempts = 2; perAttemptRecvTimeout = "1s""#)),
      delays: [[1]], phrases: ["on aborted, timeout", "timeout 1s"]),
    .init(
      name: "ValidRetryPolicyWithPerAttemptRecvTimeoutAndUnsetRetryableStatusCodes",
      config: retryConfig(
        retryPolicy(#"maxAttempts = 2; perAttemptRecvTimeout = "1s"; retryableStatusCodes = -"#)),
      delays: [[1]], phrases: ["retry 1 on timeout delay 1s jitter 20% timeout 1s"]),
    .init(
      name: "A6's retry policy example",
      config: retryConfig(
        #"{"maxAttempts": 4, "initialBackoff": ".1s", "maxBackoff": "1s", "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE"]}"#
      ), delays: [[0.1, 0.2, 0.4]],
      phrases: ["retry 3 on unavailable backoff 100ms jitter 20% max 1s"]),
    .init(
      name: "A6's hedging policy example",
      config: """
        {"methodConfig": [{"name": [{"service": "a.B"}], "hedgingPolicy": {"maxAttempts": 4,
          "hedgingDelay": ".5s", "nonFatalStatusCodes": ["UNAVAILABLE", "INTERNAL", "ABORTED"]}}]}
        """, delays: [[0, 0, 0]],
      phrases: ["retry 3 on unavailable, internal, aborted hedge 3 after 500ms"]),
    .init(
      name: "A6's hedging policy that sends all at once",
      config: """
        {"methodConfig": [{"name": [{"service": "a.B"}], "hedgingPolicy": {"maxAttempts": 4,
          "hedgingDelay": "0s", "nonFatalStatusCodes": ["UNAVAILABLE"]}}]}
        """, delays: [[0, 0, 0]], phrases: ["hedge 3 after 0s"]),
    .init(
      name: "A6's throttling example on a method",
      config: """
        {"methodConfig": [{"name": [{"service": "a.B"}], "retryPolicy": \(retryPolicy())}],
         "retryThrottling": {"maxTokens": 10, "tokenRatio": 0.1}}
        """, delays: [[1, 1.6]], phrases: ["budget 10%"]),
    .init(
      name: "maxAttempts above 5 is clamped to 5",
      config: retryConfig(retryPolicy("maxAttempts = 7")), delays: [[1, 1.6, 2.56, 4.096]],
      phrases: ["retry 4 on aborted", "# maxAttempts 7: gRPC clients make 5 at most"]),
    .init(
      name: "a multiplier below 1 is an explicit schedule",
      config: retryConfig(
        retryPolicy(#"maxAttempts = 4; initialBackoff = "0.1s"; backoffMultiplier = 0.5"#)),
      delays: [[0.1, 0.05, 0.025]], phrases: ["delays 100ms, 50ms, 25ms jitter 20%"]),
    .init(
      name: "a cap reached is an explicit schedule",
      config: retryConfig(
        retryPolicy(#"maxAttempts = 5; maxBackoff = "4s"; backoffMultiplier = 2"#)),
      delays: [[1, 2, 4, 4]], phrases: ["delays 1s, 2s, 4s, 4s jitter 20%"]),
    .init(
      name: "a multiplier of 1 is one delay",
      config: retryConfig(retryPolicy(#"backoffMultiplier = 1; maxBackoff = "0.5s""#)),
      delays: [[0.5, 0.5]], phrases: ["delay 500ms jitter 20%"]),
    .init(
      name: "a duration as grpc-go reads it, .002s",
      config: retryConfig(retryPolicy(#"initialBackoff = ".002s"; backoffMultiplier = 2"#)),
      delays: [[0.002, 0.004]], phrases: ["backoff 2ms jitter 20%"]),
    .init(
      name: "tokenRatio is truncated to three decimals",
      config: """
        {"methodConfig": [{"name": [{"service": "a"}], "retryPolicy": \(retryPolicy())}],
         "retryThrottling": {"maxTokens": 7, "tokenRatio": 0.5466}}
        """, delays: [[1, 1.6]], phrases: ["budget 54.6%", "\"maxTokens\": 7"]),
    .init(
      name: "tokenRatio 2 is valid",
      config: """
        {"methodConfig": [{"name": [{"service": "a"}], "retryPolicy": \(retryPolicy())}],
         "retryThrottling": {"maxTokens": 1000, "tokenRatio": 2}}
        """, delays: [[1, 1.6]], phrases: ["budget 100%", "\"tokenRatio\": 2"]),
    .init(
      name: "a method config with two names keeps both",
      config: """
        {"methodConfig": [{"name": [{"service": "a.B", "method": "C"}, {"service": "d.E"}],
          "timeout": "2.5s", "retryPolicy": \(retryPolicy())}]}
        """, delays: [[1, 1.6]],
      phrases: [#""name": [{"service": "a.B", "method": "C"}, {"service": "d.E"}]"#, "within 2.5s"]),
    .init(
      name: "a method config without a policy makes one attempt",
      config: #"{"methodConfig": [{"name": [{"service": "a"}], "timeout": "1s"}]}"#,
      delays: [[]], phrases: ["policy a = retry 0 within 1s"]),
  ]

  @Test(
    "gRPC accepts it; explain predicts gRPC's delays; export gives back the same config",
    arguments: valid)
  func accepted(_ test: ValidCase) async throws {
    let imported = await ToolRunner.run(["import", "--from", "grpc", "-"], input: test.config)
    try #require(imported.status == 0, "\(imported.standardError)")
    for phrase in test.phrases {
      #expect(imported.standardOutput.contains(phrase), "\(imported.standardOutput)")
    }
    let folder = try ToolRunner.makeFolder(["imported.retry": imported.standardOutput])
    defer { try? FileManager.default.removeItem(at: folder) }
    let file = folder.appendingPathComponent("imported.retry").path
    #expect(await ToolRunner.run(["check", file]).status == 0)
    let analysis = analyze(policyFile: imported.standardOutput)
    #expect(analysis.policies.count == test.delays.count)
    // explain --json: each retry's range is gRPC's, the delay times [0.8, 1.2].
    for (policy, delays) in zip(analysis.policies, test.delays) {
      let explained = await ToolRunner.run(
        ["explain", "--json", "--file", file, "--policy", policy.name ?? ""])
      let json = try #require(
        JSONSerialization.jsonObject(with: Data(explained.standardOutput.utf8)) as? NSDictionary)
      let rule = try #require((json["rules"] as? [NSDictionary])?.first)
      let rows = rule["schedule"] as? [NSDictionary] ?? []
      #expect(rows.count == delays.count, "\(rows)")
      for (row, delay) in zip(rows, delays) {
        let low = try #require(row["min"] as? Double)
        let high = try #require(row["max"] as? Double)
        #expect(abs(low - delay * 0.8) < 1e-6 && abs(high - delay * 1.2) < 1e-6, "\(row)")
      }
    }
    // export of the file: the same config, as gRPC reads it.
    let exported = await ToolRunner.run(["export", "--to", "grpc", "--file", file])
    #expect(exported.status == 0, "\(exported.standardError)")
    #expect(try meaning(exported.standardOutput) == meaning(test.config))
  }

  @Test("a config with only retryThrottling imports as a comment and a warning")
  func throttlingOnly() async {
    let config = #"{"retryThrottling": {"maxTokens": 2, "tokenRatio": 1.0}}"#
    let result = await ToolRunner.run(["import", "--from", "grpc", "-"], input: config)
    #expect(result.status == 0)
    #expect(result.standardError.contains("warning: -: retryThrottling: a config without"))
    #expect(
      result.standardOutput.contains(
        #"# grpc-service-config: {"retryThrottling": {"maxTokens": 2, "tokenRatio": 1}}"#))
    #expect(analyze(policyFile: result.standardOutput).policies.isEmpty)
    #expect(!analyze(policyFile: result.standardOutput).hasErrors)
  }

  @Test("every valid retry policy imports with jitter 20%, which exports exactly")
  func jitterTwentyPercent() async throws {
    for test in Self.valid where test.config.contains("retryPolicy") {
      let imported = try #require(
        try? GRPCImport.policyFile(Array(test.config.utf8)).get(), "\(test.name)")
      for policy in imported.policies {
        #expect(policy.rules.allSatisfy { $0.jitter == .proportional(fraction: 0.2) })
      }
    }
    let exact = await ToolRunner.run([
      "export", "--to", "grpc", "--strict",
      "retry 3 on unavailable backoff 100ms jitter 20% max 1s",
    ])
    #expect(exact.status == 0)
    #expect(exact.standardError == "")
    for jitter in ["jitter full", "jitter 10%", "jitter equal", "jitter decorrelated", ""] {
      let policy = "retry 3 on unavailable backoff 100ms \(jitter) max 1s"
      let result = await ToolRunner.run(["export", "--to", "grpc", "--strict", policy])
      #expect(result.status == 1, "\(policy)")
      #expect(result.standardError.contains("uniform factor in [0.8, 1.2]"), "\(policy)")
    }
  }

  @Test("export is exact for the schedules gRPC runs, and warns at the clause otherwise")
  func schedules() async {
    let exact = [
      "retry 3 on unavailable delays 100ms, 50ms, 25ms jitter 20%",
      "retry 4 on unavailable delays 1s, 2s, 4s, 4s jitter 20%",
      "retry 2 on unavailable backoff 1s +1s jitter 20%",
      "retry 2 on unavailable delay 1s jitter 20%",
    ]
    for policy in exact {
      let result = await ToolRunner.run(["export", "--to", "grpc", "--strict", policy])
      #expect(result.status == 0, "\(policy): \(result.standardError)")
    }
    let shrinking = await ToolRunner.run([
      "export", "--to", "grpc", "retry 3 on unavailable delays 100ms, 50ms, 25ms jitter 20%",
    ])
    #expect(shrinking.standardOutput.contains("\"backoffMultiplier\": 0.5"))
    let inexact = await ToolRunner.run([
      "export", "--to", "grpc", "retry 3 on unavailable delays 1s, 3s, 2s jitter 20%",
    ])
    #expect(
      inexact.standardError.contains(
        "<policy>:1:24: warning: gRPC's back-off is exponential: retry 3 waits 3s, not 2s"))
    let capped = await ToolRunner.run([
      "export", "--to", "grpc", "retry 3 on unavailable backoff 100ms jitter 20% max 300ms",
    ])
    #expect(capped.standardError.contains("<policy>:1:49: warning: gRPC caps a delay before"))
  }

  @Test("export --strict of 'retry 0' is exact; --service '' is refused")
  func exportEdges() async {
    let zero = await ToolRunner.run(["export", "--to", "grpc", "--strict", "retry 0"])
    #expect(zero.status == 0)
    #expect(zero.standardError == "")
    let lost = await ToolRunner.run([
      "export", "--to", "grpc", "--file", "-", "--policy", "p",
    ])
    #expect(lost.status != 0)
    for (option, value) in [("--service", ""), ("--service", "a..b"), ("--service", "1a")] {
      let result = await ToolRunner.run([
        "export", "--to", "grpc", option, value, "retry 1 on unavailable delay 1s jitter 20%",
      ])
      #expect(result.status == 2, "\(value)")
      #expect(result.standardError.contains("invalid value"))
    }
    let method = await ToolRunner.run([
      "export", "--to", "grpc", "--service", "a.B", "--method", "x.y", "retry 0",
    ])
    #expect(method.status == 2)
  }

  @Test("export --file without --policy writes one method config per policy, with its record")
  func fileOfPolicies() async throws {
    let text = """
      # grpc-service-config: {"name": [{"service": "a.B", "method": "C"}, {"service": "d"}], "retryThrottling": {"maxTokens": 7, "tokenRatio": 0.1}}
      policy first = retry 2 on unavailable delay 1s jitter 20% budget 10%

      policy second = retry 0
      """
    let folder = try ToolRunner.makeFolder(["f.retry": text])
    defer { try? FileManager.default.removeItem(at: folder) }
    let path = folder.appendingPathComponent("f.retry").path
    let result = await ToolRunner.run(["export", "--to", "grpc", "--file", path])
    #expect(result.status == 0, "\(result.standardError)")
    let document = try #require(
      JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? NSDictionary)
    let configs = try #require(document["methodConfig"] as? [NSDictionary])
    #expect(configs.count == 2)
    #expect(
      configs.first?["name"] as? [NSDictionary] == [
        ["service": "a.B", "method": "C"], ["service": "d"],
      ])
    #expect(configs.last?["name"] as? [NSDictionary] == [[:]])
    #expect(
      document["retryThrottling"] as? NSDictionary == ["maxTokens": 7, "tokenRatio": 0.1])
    // --service overrides the record; a policy and --file together are refused.
    let named = await ToolRunner.run([
      "export", "--to", "grpc", "--file", path, "--policy", "first", "--service", "x.Y",
    ])
    #expect(named.standardOutput.contains(#"{"service": "x.Y"}"#))
    let both = await ToolRunner.run(["export", "--to", "grpc", "--file", path, "retry 1"])
    #expect(both.status == 2)
    let unknown = await ToolRunner.run([
      "export", "--to", "grpc", "--file", path, "--policy", "frist",
    ])
    #expect(unknown.status == 1)
    #expect(unknown.standardError.contains("did you mean 'first'?"))
  }

  @Test("perAttemptRecvTimeout round-trips as 'timeout' with 'on timeout', and grpcio's gap warns")
  func perAttemptTimeout() async {
    let result = await ToolRunner.run([
      "export", "--to", "grpc", "retry 2 on unavailable, timeout delay 1s jitter 20% timeout 2s",
    ])
    #expect(result.status == 0)
    #expect(result.standardOutput.contains("\"perAttemptRecvTimeout\": \"2s\""))
    #expect(result.standardOutput.contains("\"retryableStatusCodes\": [\"UNAVAILABLE\"]"))
    #expect(result.standardError.contains("grpc.experimental.enable_hedging"))
    #expect(!result.standardError.contains("no gRPC status code"))
  }
}

@Suite("gRPC import: hostile names and numbers print text that check accepts")
struct GRPCImportHostileTests {
  static let hostile: [(String, String)] = [
    ("a newline that injects a policy", #"{"service": "x\npolicy evil = retry 9\n#"}"#),
    ("quotes and a backslash", #"{"service": "a\"b\\c", "method": "'q'"}"#),
    ("a keyword", #"{"service": "timeout"}"#),
    ("another keyword", #"{"service": "retry"}"#),
    ("a factor-like name", #"{"service": "x2"}"#),
    ("a digit first", #"{"service": "1abc"}"#),
    ("non-identifier characters", #"{"service": "caf\u00e9 \u2028 \r/*", "method": "-"}"#),
    ("a CR alone", #"{"service": "a\rpolicy b = retry 3"}"#),
  ]

  @Test("each method config is exactly one policy, with a valid unique name")
  func hostileNames() async throws {
    let configs =
      Self.hostile.map { #"{"name": [\#($0.1)], "retryPolicy": \#(retryPolicy())}"# }
      + [
        #"{"name": [{"service": "a"}]}"#, #"{"name": [{"service": "a3"}]}"#,
        #"{"name": [{"service": "a"}]}"#, #"{"name": [{"service": "a.x"}]}"#,
        #"{"name": [{"service": "a_x"}]}"#,
      ]
    let text = #"{"methodConfig": ["# + configs.joined(separator: ", ") + "]}"
    let result = await ToolRunner.run(["import", "--from", "grpc", "-"], input: text)
    try #require(result.status == 0, "\(result.standardError)")
    let analysis = analyze(policyFile: result.standardOutput)
    #expect(!analysis.hasErrors, "\(analysis.diagnostics)")
    #expect(analysis.policies.count == configs.count)
    let names = analysis.policies.compactMap(\.name)
    #expect(Set(names).count == configs.count, "\(names)")
    #expect(!names.contains("evil") && !names.contains("b"))
    for name in names { #expect(!LanguageWords.keywords.contains(name)) }
    #expect(analysis.policies.allSatisfy { $0.rules.count == 1 })
    #expect(
      result.standardError.contains("warning: -: methodConfig[2].name[0]: the policy is named"))
    // Every line is a comment, a policy or blank: nothing was injected.
    for line in result.standardOutput.split(separator: "\n") {
      #expect(line.hasPrefix("#") || line.hasPrefix("policy "), "\(line)")
    }
    // The names come back exactly through the record.
    let folder = try ToolRunner.makeFolder(["i.retry": result.standardOutput])
    defer { try? FileManager.default.removeItem(at: folder) }
    let exported = await ToolRunner.run([
      "export", "--to", "grpc", "--file", folder.appendingPathComponent("i.retry").path,
    ])
    let original = try meaning(text)
    let back = try meaning(exported.standardOutput)
    #expect(back.methods.map(\.names) == original.methods.map(\.names))
  }

  @Test("every tokenRatio gRPC keeps prints a budget that reads back equal (found by the fuzzer)")
  func budgetsReadBack() throws {
    for milli in [1, 7, 93, 100, 123, 546, 999, 1000, 1500, 999_999] {
      let ratio = GRPCRecord.milliText(milli)
      let config = """
        {"methodConfig": [{"name": [{"service": "a"}]}],
         "retryThrottling": {"maxTokens": 210, "tokenRatio": \(ratio)}}
        """
      let imported = try GRPCImport.policyFile(Array(config.utf8)).get()
      let readBack = analyze(policyFile: imported.text)
      #expect(readBack.policies == imported.policies, "\(ratio)")
    }
  }

  @Test("extreme numbers print text that check accepts, and never trap")
  func extremeNumbers() async throws {
    let policies = [
      retryPolicy("backoffMultiplier = 1e+20; maxAttempts = 5"),
      retryPolicy("backoffMultiplier = 1e-298; maxAttempts = 5"),
      retryPolicy(#"initialBackoff = "315576000000s"; maxBackoff = "315576000000s""#),
      retryPolicy(#"initialBackoff = "0.000000001s"; backoffMultiplier = 1000.5"#),
      retryPolicy("maxAttempts = 2147483647"),
    ]
    let configs = policies.enumerated().map {
      #"{"name": [{"service": "s\#($0.offset)"}], "retryPolicy": \#($0.element)}"#
    }
    let text =
      #"{"methodConfig": ["# + configs.joined(separator: ", ")
      + #"], "retryThrottling": {"maxTokens": 1000, "tokenRatio": 1e+20}}"#
    let result = await ToolRunner.run(["import", "--from", "grpc", "-"], input: text)
    try #require(result.status == 0, "\(result.standardError)")
    let analysis = analyze(policyFile: result.standardOutput)
    #expect(!analysis.hasErrors, "\(analysis.diagnostics) \(result.standardOutput)")
    #expect(analysis.policies.count == configs.count)
  }
}
