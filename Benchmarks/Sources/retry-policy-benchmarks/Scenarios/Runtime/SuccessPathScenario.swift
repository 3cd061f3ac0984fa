import RetryPolicy

/// `policy.run` when the first attempt succeeds, beside calling the closure directly and the
/// hand-written retry loop.
enum SuccessPathScenario {
  static let name = "success-path"
  static let policyText = "retry 5 on serverError backoff 1s x1.5 jitter 10%"
  static let target = "success path: policy.run ≤ 1.5× direct call, 0 allocations"

  static let scenario = Scenario(
    name: name,
    summary: "policy.run when the first attempt succeeds, vs the direct call and a hand loop"
  ) { benchmark in
    var variants = [
      Variant("direct call (baseline)") { iterations in
        for index in 0..<iterations {
          blackHole(try await fetchValue(index))
        }
      },
      Variant("hand-written retryLoop(times: 5)") { iterations in
        for index in 0..<iterations {
          blackHole(try await retryLoop(times: 5) { try await fetchValue(index) })
        }
      },
    ]
    do {
      let policy = try compile(policy: policyText)
      variants.append(
        Variant("policy.run '\(policyText)'") { iterations in
          for index in 0..<iterations {
            blackHole(try await policy.run { try await fetchValue(index) })
          }
        })
    } catch {
      benchmark.skip(name, "policy.run", because: "compile(policy:) throws: \(error)")
    }
    let measurements = await benchmark.compare(name, variants)
    guard measurements.count == 3, let direct = measurements[0], let run = measurements[2] else {
      benchmark.addFinding(target, measured: "policy.run not measured", verdict: .notMeasured)
      return
    }
    let ratio = run.nanosecondsPerOperation / direct.nanosecondsPerOperation
    let allocations = run.allocationsPerOperation
    benchmark.addFinding(
      target,
      measured:
        "\(Format.time(nanoseconds: run.nanosecondsPerOperation)) vs "
        + "\(Format.time(nanoseconds: direct.nanosecondsPerOperation)): \(Format.ratio(ratio)); "
        + "allocations \(allocations.map(Format.count) ?? "not counted")",
      holds: ratio <= 1.5 && (allocations ?? 0) == 0)
  }
}
