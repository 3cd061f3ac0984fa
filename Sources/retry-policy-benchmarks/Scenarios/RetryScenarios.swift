import RetryPolicy

/// The retry scenarios' baseline, "the cost of throwing": one run without retry logic.
///
/// Three calls of an operation that fails twice, each error caught.
@inline(never)
func throwTwiceAndCatch(_ operation: FlakyOperation) async -> Int {
  operation.reset(failures: 2)
  for _ in 0..<3 {
    do {
      return try await operation()
    } catch {
      blackHole(error)
    }
  }
  return 0
}

/// Reports the cost per retry of a variant, beyond the throw-and-catch baseline: each run
/// makes two retries.
func perRetryNanoseconds(_ variant: Measurement?, baseline: Measurement?) -> Double? {
  guard let variant, let baseline else { return nil }
  return (variant.nanosecondsPerOperation - baseline.nanosecondsPerOperation) / 2
}

/// A call that fails twice, then succeeds, under `retry 2 immediately`.
enum ImmediateRetryScenario {
  static let name = "retry-immediate"
  static let policyText = "retry 2 immediately"

  static let scenario = Scenario(
    name: name,
    summary: "fails twice then succeeds under 'retry 2 immediately': the cost of a retry"
  ) { benchmark in
    let operation = FlakyOperation()
    let baseline = await benchmark.measure(name, "throw and catch ×2 (baseline)") { iterations in
      for _ in 0..<iterations {
        blackHole(await throwTwiceAndCatch(operation))
      }
    }
    let loop = await benchmark.measure(name, "hand-written retryLoop(times: 2)") { iterations in
      for _ in 0..<iterations {
        operation.reset(failures: 2)
        blackHole(try await retryLoop(times: 2) { try await operation() })
      }
    }
    if let perRetry = perRetryNanoseconds(loop, baseline: baseline) {
      benchmark.addRemark(
        "retry-immediate: the hand-written loop costs \(Format.time(nanoseconds: perRetry)) "
          + "per retry beyond throwing")
    }
    benchmark.skip(name, "policy.run (\(policyText))", because: "runtime not merged yet")
    benchmark.addFinding(
      "per retry under 'retry N immediately' ≤ 100 ns beyond throwing",
      measured: "runtime not merged yet", verdict: .notMeasured)
  }
}

/// The same with delays and jitter, on a clock whose sleeps return at once.
enum JitteredRetryScenario {
  static let name = "retry-jitter"
  static let policyText = "retry 2 backoff 1s jitter 10%"

  static let scenario = Scenario(
    name: name,
    summary: "fails twice under 'retry 2 backoff 1s jitter 10%' on an instant clock"
  ) { benchmark in
    let operation = FlakyOperation()
    let baseline = await benchmark.measure(name, "throw and catch ×2 (baseline)") { iterations in
      for _ in 0..<iterations {
        blackHole(await throwTwiceAndCatch(operation))
      }
    }
    let clock = InstantClock()
    var random = SplitMix64(seed: 7)
    let loop = await benchmark.measure(
      name, "hand-written loop, backoff + jitter, instant clock"
    ) { iterations in
      for _ in 0..<iterations {
        operation.reset(failures: 2)
        blackHole(
          try await retryLoop(
            times: 2, backoff: .seconds(1), jitter: 0.1, clock: clock, random: &random
          ) { try await operation() })
      }
    }
    if let perRetry = perRetryNanoseconds(loop, baseline: baseline) {
      benchmark.addRemark(
        "retry-jitter: the hand-written loop costs \(Format.time(nanoseconds: perRetry)) "
          + "per retry decision beyond throwing")
    }
    benchmark.skip(name, "policy.run (\(policyText))", because: "runtime not merged yet")
    benchmark.addFinding(
      "a retry decision with delay and jitter on an instant clock ≤ 200 ns",
      measured: "runtime not merged yet", verdict: .notMeasured)
  }
}
