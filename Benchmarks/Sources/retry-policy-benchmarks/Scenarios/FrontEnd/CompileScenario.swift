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
    let target = "compile(policy:) of the one-liner ≤ 0.5× JSONDecoder"
    var variants = [
      Variant("JSONDecoder, service-config JSON (baseline)") { iterations in
        for _ in 0..<iterations {
          blackHole(try decoder.decode(ServiceConfigRetryPolicy.self, from: opaque(data)))
        }
      }
    ]
    do {
      _ = try compile(policy: policyText)
      variants.append(
        Variant("compile(policy:) '\(policyText)'") { iterations in
          for _ in 0..<iterations {
            blackHole(try compile(policy: opaque(policyText)))
          }
        })
    } catch {
      benchmark.skip(name, "compile(policy:)", because: "compile(policy:) throws: \(error)")
    }
    let measurements = await benchmark.compare(name, variants)
    guard measurements.count == 2, let decoded = measurements[0], let compiled = measurements[1]
    else {
      benchmark.addFinding(target, measured: "compile(policy:) not measured", verdict: .notMeasured)
      return
    }
    let ratio = compiled.nanosecondsPerOperation / decoded.nanosecondsPerOperation
    benchmark.addFinding(
      target,
      measured:
        "\(Format.time(nanoseconds: compiled.nanosecondsPerOperation)) vs "
        + "\(Format.time(nanoseconds: decoded.nanosecondsPerOperation)): \(Format.ratio(ratio))",
      holds: ratio <= 0.5)
  }
}
