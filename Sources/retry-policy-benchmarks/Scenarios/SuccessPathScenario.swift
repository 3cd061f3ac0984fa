import RetryPolicy

/// `policy.run` when the first attempt succeeds, beside calling the closure directly and the
/// hand-written retry loop.
enum SuccessPathScenario {
  static let name = "success-path"
  static let policyText = "retry 5 on serverError backoff 1s x1.5 jitter 10%"

  static let scenario = Scenario(
    name: name,
    summary: "policy.run when the first attempt succeeds, vs the direct call and a hand loop"
  ) { benchmark in
    let direct = await benchmark.measure(name, "direct call (baseline)") { iterations in
      for index in 0..<iterations {
        blackHole(try await fetchValue(index))
      }
    }
    await benchmark.measure(name, "hand-written retryLoop(times: 5)") { iterations in
      for index in 0..<iterations {
        blackHole(try await retryLoop(times: 5) { try await fetchValue(index) })
      }
    }
    let target = "success path: policy.run ≤ 1.5× direct call, 0 allocations"
    let policy: CompiledPolicy
    do {
      policy = try compile(policy: policyText)
    } catch {
      benchmark.skip(name, "policy.run", because: "compile(policy:) throws: \(error)")
      benchmark.addFinding(target, measured: "policy did not compile", verdict: .notMeasured)
      return
    }
    let run = await benchmark.measure(name, "policy.run '\(policyText)'") { iterations in
      for index in 0..<iterations {
        blackHole(try await policy.run { try await fetchValue(index) })
      }
    }
    guard let direct, let run else {
      benchmark.addFinding(target, measured: "a variant failed", verdict: .notMeasured)
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
