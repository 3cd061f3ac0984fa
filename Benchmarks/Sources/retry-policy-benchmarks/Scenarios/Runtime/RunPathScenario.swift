import RetryPolicy

/// The paths users take (issue 31), side by side in one run: a success under
/// `run(in: environment)` against a direct call, and what a closed breaker adds.
enum RunPathScenario {
  static let name = "run-path"
  static let policyText = "retry 5 on serverError backoff 1s x1.5 jitter 10%"
  static let breakerText = "retry 5 on serverError backoff 1s x1.5 jitter 10% breaker 50%"
  static let environmentTarget =
    "run path: success under run(in: environment) ≤ 1.2× direct call, 0 allocations"
  static let breakerTarget = "run path: a closed breaker adds ≤ 15 ns"

  static let scenario = Scenario(
    name: name,
    summary: "run(in: environment) and a closed breaker, beside the direct call"
  ) { benchmark in
    let environment = RetryEnvironment(errorClasses: ["serverError": { _ in false }])
    let breakerEnvironment = RetryEnvironment(
      errorClasses: ["serverError": { _ in false }], breaker: CircuitBreaker())
    guard let policy = try? compile(policy: policyText),
      let guarded = try? compile(policy: breakerText)
    else {
      benchmark.skip(name, "run paths", because: "compile(policy:) throws")
      return
    }
    let variants = [
      Variant("direct call (baseline)") { iterations in
        for index in 0..<iterations {
          blackHole(try await fetchValue(index))
        }
      },
      Variant("policy.run { } (no environment)") { iterations in
        for index in 0..<iterations {
          blackHole(try await policy.run { try await fetchValue(index) })
        }
      },
      Variant("policy.run(in: environment)") { iterations in
        for index in 0..<iterations {
          blackHole(try await policy.run(in: environment) { try await fetchValue(index) })
        }
      },
      Variant("policy.run(in: environment), closed breaker") { iterations in
        for index in 0..<iterations {
          blackHole(
            try await guarded.run(in: breakerEnvironment) { try await fetchValue(index) })
        }
      },
      // What contract §15 asks of every run, alone: the direct call inside one push and pop
      // of the task-local `RetryContext.current`. The run path cannot cost less than this.
      Variant("direct call with RetryContext.current set (the task-local alone)") { iterations in
        for index in 0..<iterations {
          blackHole(
            try await RetryContext.$current.withValue(
              RetryContext(policy: "anonymous", attempt: 1)
            ) { try await fetchValue(index) })
        }
      },
    ]
    let measurements = await benchmark.compare(name, variants)
    guard measurements.count == 5, let direct = measurements[0], let run = measurements[2],
      let closed = measurements[3]
    else {
      benchmark.addFinding(environmentTarget, measured: "not measured", verdict: .notMeasured)
      return
    }
    let ratio = run.nanosecondsPerOperation / direct.nanosecondsPerOperation
    let allocations = run.allocationsPerOperation
    benchmark.addFinding(
      environmentTarget,
      measured:
        "\(Format.time(nanoseconds: run.nanosecondsPerOperation)) vs "
        + "\(Format.time(nanoseconds: direct.nanosecondsPerOperation)): \(Format.ratio(ratio)); "
        + "allocations \(allocations.map(Format.count) ?? "not counted")",
      holds: ratio <= 1.2 && (allocations ?? 0) == 0)
    if let floor = measurements[4] {
      let pushed = floor.nanosecondsPerOperation - direct.nanosecondsPerOperation
      benchmark.addRemark(
        "run path: setting RetryContext.current around one call (contract §15) costs "
          + "\(Format.time(nanoseconds: pushed)); run(in: environment) is "
          + Format.ratio(run.nanosecondsPerOperation / floor.nanosecondsPerOperation)
          + " that floor")
    }
    let added = closed.nanosecondsPerOperation - run.nanosecondsPerOperation
    benchmark.addFinding(
      breakerTarget,
      measured: "\(Format.time(nanoseconds: added)) added",
      holds: added <= 15)
  }
}
