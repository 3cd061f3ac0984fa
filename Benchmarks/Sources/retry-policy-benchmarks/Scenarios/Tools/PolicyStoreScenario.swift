import Foundation
import RetryPolicy

/// Reading the current policy of a ``PolicyStore`` by name, which a service does on every
/// call, beside looking the name up in a plain dictionary.
enum PolicyStoreScenario {
  static let name = "store"
  static let target = "store[\"payments\"] ≤ 20 ns, 0 allocations"

  static let scenario = Scenario(
    name: name,
    summary: "PolicyStore: the current policy by name, as every call reads it"
  ) { benchmark in
    var generator = PolicyFileGenerator()
    let file =
      "policy payments = retry 5 on serverError backoff 1s x1.5 jitter 10%\n"
      + generator.makeFile(policies: 20)
    let path = FileManager.default.temporaryDirectory
      .appendingPathComponent("retry-policy-bench-\(UUID().uuidString).retry").path
    defer { try? FileManager.default.removeItem(atPath: path) }
    guard FileManager.default.createFile(atPath: path, contents: Data(file.utf8)),
      let store = try? PolicyStore(path: path)
    else {
      benchmark.skip(name, "every variant", because: "the policy file could not be made")
      benchmark.addFinding(target, measured: "not measured", verdict: .notMeasured)
      return
    }
    let dictionary = Dictionary(
      store.names.compactMap { name in store[name].map { (name, $0) } },
      uniquingKeysWith: { first, _ in first })
    let key = "payments"
    let measurements = await benchmark.compare(
      name,
      [
        Variant("[String: CompiledPolicy] lookup (baseline)") { iterations in
          for _ in 0..<iterations {
            blackHole(dictionary[opaque(key)])
          }
        },
        Variant("store[\"payments\"]") { iterations in
          for _ in 0..<iterations {
            blackHole(store[opaque(key)])
          }
        },
        Variant("try store.policy(named: \"payments\")") { iterations in
          for _ in 0..<iterations {
            blackHole(try store.policy(named: opaque(key)))
          }
        },
      ])
    guard measurements.count == 3, let lookup = measurements[1] else {
      benchmark.addFinding(target, measured: "not measured", verdict: .notMeasured)
      return
    }
    let allocations = lookup.allocationsPerOperation
    benchmark.addFinding(
      target,
      measured: Format.time(nanoseconds: lookup.nanosecondsPerOperation)
        + (allocations.map { ", \(Format.count($0)) allocations" } ?? ""),
      holds: lookup.nanosecondsPerOperation <= 20 && (allocations ?? 0) == 0)
  }
}
