import Foundation
import RetryPolicy

/// The gRPC service-config form of a retry policy: what a JSON-configured client decodes.
struct ServiceConfigRetryPolicy: Decodable {
  var maxAttempts: Int
  var initialBackoff: String
  var maxBackoff: String
  var backoffMultiplier: Double
  var retryableStatusCodes: [String]
}

/// `compile(policy:)` of the one-liner beside `JSONDecoder` decoding the equivalent JSON.
enum CompileScenario {
  static let name = "compile"
  static let policyText = "retry 5 on serverError backoff 1s x1.5 jitter 10% max 30s"
  static let json = """
    {"maxAttempts": 6, "initialBackoff": "1s", "maxBackoff": "30s", \
    "backoffMultiplier": 1.5, "retryableStatusCodes": ["UNAVAILABLE"]}
    """

  static let scenario = Scenario(
    name: name,
    summary: "compile(policy:) of the one-liner vs JSONDecoder of the equivalent JSON"
  ) { benchmark in
    let data = Data(json.utf8)
    let decoder = JSONDecoder()
    let decoded = await benchmark.measure(name, "JSONDecoder, service-config JSON (baseline)") {
      iterations in
      for _ in 0..<iterations {
        blackHole(try decoder.decode(ServiceConfigRetryPolicy.self, from: opaque(data)))
      }
    }
    do {
      _ = try compile(policy: policyText)
    } catch {
      benchmark.skip(
        name, "compile(policy:) '\(policyText)'",
        because: "compile(policy:) throws (placeholder?): \(error)")
      benchmark.addFinding(
        "compile(policy:) of the one-liner ≤ 0.1× JSONDecoder",
        measured: "compiler not merged yet", verdict: .notMeasured)
      return
    }
    let compiled = await benchmark.measure(name, "compile(policy:) '\(policyText)'") {
      iterations in
      for _ in 0..<iterations {
        blackHole(try compile(policy: opaque(policyText)))
      }
    }
    if let decoded, let compiled {
      let ratio = compiled.nanosecondsPerOperation / decoded.nanosecondsPerOperation
      benchmark.addFinding(
        "compile(policy:) of the one-liner ≤ 0.1× JSONDecoder",
        measured:
          "\(Format.time(nanoseconds: compiled.nanosecondsPerOperation)) vs "
          + "\(Format.time(nanoseconds: decoded.nanosecondsPerOperation)): \(Format.ratio(ratio))",
        holds: ratio <= 0.1)
    }
  }
}
