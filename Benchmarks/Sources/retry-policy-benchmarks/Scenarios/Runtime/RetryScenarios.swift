import RetryPolicy
import RetryPolicyTesting

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

/// The cost per retry of a variant beyond the throw-and-catch baseline: each run makes two
/// retries.
func perRetryNanoseconds(_ variant: Measurement?, baseline: Measurement?) -> Double? {
  guard let variant, let baseline else { return nil }
  return (variant.nanosecondsPerOperation - baseline.nanosecondsPerOperation) / 2
}

/// Adds a finding on the cost per retry of `policy.run` beyond throwing, and a remark on the
/// hand-written loop's.
func reportPerRetry(
  _ benchmark: Benchmark, scenario: String, target: String, limit: Double,
  baseline: Measurement?, loop: Measurement?, run: Measurement?
) {
  if let perRetry = perRetryNanoseconds(loop, baseline: baseline) {
    benchmark.addRemark(
      "\(scenario): the hand-written loop costs \(Format.time(nanoseconds: perRetry)) "
        + "per retry beyond throwing")
  }
  guard let perRetry = perRetryNanoseconds(run, baseline: baseline), let run else {
    benchmark.addFinding(target, measured: "policy.run not measured", verdict: .notMeasured)
    return
  }
  let allocations = run.allocationsPerOperation.map {
    "; \(Format.count($0)) allocations per run (2 retries)"
  }
  benchmark.addFinding(
    target,
    measured: "\(Format.time(nanoseconds: perRetry)) per retry" + (allocations ?? ""),
    holds: perRetry <= limit)
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
    var variants = [
      Variant("throw and catch ×2 (baseline)") { iterations in
        for _ in 0..<iterations {
          blackHole(await throwTwiceAndCatch(operation))
        }
      },
      Variant("hand-written retryLoop(times: 2)") { iterations in
        for _ in 0..<iterations {
          operation.reset(failures: 2)
          blackHole(try await retryLoop(times: 2) { try await operation() })
        }
      },
    ]
    do {
      let policy = try compile(policy: policyText)
      variants.append(
        Variant("policy.run '\(policyText)'") { iterations in
          for _ in 0..<iterations {
            operation.reset(failures: 2)
            blackHole(try await policy.run { try await operation() })
          }
        })
    } catch {
      benchmark.skip(name, "policy.run", because: "compile(policy:) throws: \(error)")
    }
    let measurements = await benchmark.compare(name, variants) + [nil]
    reportPerRetry(
      benchmark, scenario: name,
      target: "per retry under 'retry N immediately' ≤ 100 ns beyond throwing", limit: 100,
      baseline: measurements[0], loop: measurements[1], run: measurements[2])
  }
}

/// The same with delays and jitter, on a clock whose sleeps return at once.
enum JitteredRetryScenario {
  static let name = "retry-jitter"
  static let policyText = "retry 2 backoff 1s jitter 10%"

  static let scenario = Scenario(
    name: name,
    summary: "fails twice under 'retry 2 backoff 1s jitter 10%' on an immediate clock"
  ) { benchmark in
    let operation = FlakyOperation()
    let loopClock = ImmediateClock()
    var random = SeededRandomNumberGenerator(seed: 7)
    var variants = [
      Variant("throw and catch ×2 (baseline)") { iterations in
        for _ in 0..<iterations {
          blackHole(await throwTwiceAndCatch(operation))
        }
      },
      Variant("hand-written loop, backoff + jitter, ImmediateClock") { iterations in
        for _ in 0..<iterations {
          operation.reset(failures: 2)
          blackHole(
            try await retryLoop(
              times: 2, backoff: .seconds(1), jitter: 0.1, clock: loopClock, random: &random
            ) { try await operation() })
        }
      },
    ]
    do {
      let policy = try compile(policy: policyText)
      let environment = RetryEnvironment(
        clock: ImmediateClock(), random: SeededRandomNumberGenerator(seed: 7))
      variants.append(
        Variant("policy.run '\(policyText)', ImmediateClock") { iterations in
          for _ in 0..<iterations {
            operation.reset(failures: 2)
            blackHole(try await policy.run(in: environment) { try await operation() })
          }
        })
    } catch {
      benchmark.skip(name, "policy.run", because: "compile(policy:) throws: \(error)")
    }
    let measurements = await benchmark.compare(name, variants) + [nil]
    reportPerRetry(
      benchmark, scenario: name,
      target: "a retry decision with delay and jitter on an instant clock ≤ 200 ns", limit: 200,
      baseline: measurements[0], loop: measurements[1], run: measurements[2])
  }
}
