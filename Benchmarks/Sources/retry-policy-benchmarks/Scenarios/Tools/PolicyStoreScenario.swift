import Foundation
import RetryPolicy

/// Reading the current policy of a ``PolicyStore`` by name, which a service does on every
/// call, beside looking the name up in a plain dictionary: in a file of 5 policies (searched
/// in order) and of 25 (through the store's dictionary).
enum PolicyStoreScenario {
  static let name = "store"
  static let target = "store[\"payments\"] ≤ 1.25× a dictionary read, 0 allocations (5 policies)"
  static let handleTarget = "store.handle(\"payments\").policy ≤ 1.1× holding the CompiledPolicy"

  /// A store over a temporary file of `payments` and `others` generated policies.
  static func makeStore(others: Int) -> (PolicyStore, path: String)? {
    var generator = PolicyFileGenerator()
    let file =
      "policy payments = retry 5 on serverError backoff 1s x1.5 jitter 10%\n"
      + generator.makeFile(policies: others)
    let path = FileManager.default.temporaryDirectory
      .appendingPathComponent("retry-policy-bench-\(UUID().uuidString).retry").path
    guard FileManager.default.createFile(atPath: path, contents: Data(file.utf8)),
      let store = try? PolicyStore(path: path)
    else { return nil }
    return (store, path)
  }

  static let scenario = Scenario(
    name: name,
    summary: "PolicyStore: the current policy by name, as every call reads it"
  ) { benchmark in
    guard let (small, smallPath) = makeStore(others: 4),
      let (large, largePath) = makeStore(others: 24)
    else {
      benchmark.skip(name, "every variant", because: "the policy file could not be made")
      benchmark.addFinding(target, measured: "not measured", verdict: .notMeasured)
      return
    }
    defer {
      try? FileManager.default.removeItem(atPath: smallPath)
      try? FileManager.default.removeItem(atPath: largePath)
    }
    let dictionary = Dictionary(
      small.names.compactMap { name in small[name].map { (name, $0) } },
      uniquingKeysWith: { first, _ in first })
    let key = "payments"
    guard let held = small[key], let handle = try? small.handle(key) else {
      benchmark.skip(name, "every variant", because: "the store has no policy 'payments'")
      benchmark.addFinding(target, measured: "not measured", verdict: .notMeasured)
      return
    }
    let holder = PolicyHolder(policy: held)
    let measurements = await benchmark.compare(
      name,
      [
        Variant("[String: CompiledPolicy] lookup (baseline)") { iterations in
          for _ in 0..<iterations {
            blackHole(dictionary[opaque(key)])
          }
        },
        Variant("store[\"payments\"], 5 policies") { iterations in
          for _ in 0..<iterations {
            blackHole(small[opaque(key)])
          }
        },
        Variant("store[\"payments\"], 25 policies") { iterations in
          for _ in 0..<iterations {
            blackHole(large[opaque(key)])
          }
        },
        Variant("try store.policy(named: \"payments\"), 5 policies") { iterations in
          for _ in 0..<iterations {
            blackHole(try small.policy(named: opaque(key)))
          }
        },
        Variant("holding the CompiledPolicy (baseline of the handle)") { iterations in
          for _ in 0..<iterations {
            blackHole(opaque(holder).policy)
          }
        },
        Variant("handle.policy (store.handle(\"payments\"))") { iterations in
          for _ in 0..<iterations {
            blackHole(opaque(handle).policy)
          }
        },
      ])
    guard measurements.count == 6, let dictionaryRead = measurements[0],
      let lookup = measurements[1], let holding = measurements[4], let resolved = measurements[5]
    else {
      benchmark.addFinding(target, measured: "not measured", verdict: .notMeasured)
      return
    }
    let storeRatio = lookup.nanosecondsPerOperation / dictionaryRead.nanosecondsPerOperation
    let allocations = lookup.allocationsPerOperation
    benchmark.addFinding(
      target,
      measured: Format.time(nanoseconds: lookup.nanosecondsPerOperation)
        + " (\(Format.ratio(storeRatio)) the dictionary read)"
        + (allocations.map { ", \(Format.count($0)) allocations" } ?? ""),
      holds: storeRatio <= 1.25 && (allocations ?? 0) == 0)
    let handleRatio = resolved.nanosecondsPerOperation / holding.nanosecondsPerOperation
    benchmark.addFinding(
      handleTarget,
      measured: Format.time(nanoseconds: resolved.nanosecondsPerOperation)
        + " (\(Format.ratio(handleRatio)) holding the policy)",
      holds: handleRatio <= 1.1 && (resolved.allocationsPerOperation ?? 0) == 0)
  }
}

/// A policy held by a service in a field, as a handle is held: the handle's baseline.
final class PolicyHolder: Sendable {
  let policy: CompiledPolicy

  init(policy: CompiledPolicy) {
    self.policy = policy
  }
}
