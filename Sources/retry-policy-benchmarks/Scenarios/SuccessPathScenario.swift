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
    _ = direct
    benchmark.skip(name, "policy.run (\(policyText))", because: "runtime not merged yet")
    benchmark.addFinding(
      "success path: policy.run ≤ 1.5× direct call, 0 allocations",
      measured: "runtime not merged yet", verdict: .notMeasured)
  }
}
