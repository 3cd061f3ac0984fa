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
      Variant("the same with the RetryContext push (the floor)") { iterations in
        for _ in 0..<iterations {
          operation.reset(failures: 2)
          blackHole(try await retryLoopInContext(times: 2) { try await operation() })
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
    reportAgainstFloor(benchmark, scenario: name, floor: measurements[2], run: measurements[3])
    reportPerRetry(
      benchmark, scenario: name,
      target: "per retry under 'retry N immediately' ≤ 100 ns beyond throwing", limit: 100,
      baseline: measurements[0], loop: measurements[1], run: measurements[3])
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
      Variant("the same with the RetryContext push (the floor)") { iterations in
        for _ in 0..<iterations {
          operation.reset(failures: 2)
          blackHole(
            try await retryLoopInContext(
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
    reportAgainstFloor(benchmark, scenario: name, floor: measurements[2], run: measurements[3])
    reportPerRetry(
      benchmark, scenario: name,
      target: "a retry decision with delay and jitter on an instant clock ≤ 200 ns", limit: 200,
      baseline: measurements[0], loop: measurements[1], run: measurements[3])
  }
}

/// Adds a remark on `policy.run` against the hand-written loop that sets
/// `RetryContext.current` around each attempt, as contract §15 makes every run do: the part of
/// a run's cost that the driver itself adds.
func reportAgainstFloor(
  _ benchmark: Benchmark, scenario: String, floor: Measurement?, run: Measurement?
) {
  guard let floor, let run else { return }
  let ratio = run.nanosecondsPerOperation / Swift.max(floor.nanosecondsPerOperation, 1e-9)
  benchmark.addRemark(
    "\(scenario): policy.run costs \(Format.ratio(ratio)) the hand-written loop with the "
      + "RetryContext push")
}

/// ``retryLoop(times:operation:)`` with `RetryContext.current` set around each attempt, as a
/// run sets it (contract §15): the floor of a retry under the contract.
func retryLoopInContext<T>(
  times retries: Int, isolation: isolated (any Actor)? = #isolation,
  operation: () async throws -> T
) async throws -> T {
  var attempt = 0
  while true {
    do {
      return try await RetryContext.$current.withValue(
        RetryContext(policy: "anonymous", attempt: attempt + 1), operation: operation,
        isolation: isolation)
    } catch {
      if error is CancellationError || attempt >= retries { throw error }
      attempt += 1
    }
  }
}

/// The jittered ``retryLoop(times:backoff:multiplier:jitter:clock:random:operation:)`` with
/// `RetryContext.current` set around each attempt (contract §15).
func retryLoopInContext<T, C: Clock>(
  times retries: Int,
  backoff initial: Duration,
  multiplier: Double = 2,
  jitter fraction: Double,
  clock: C,
  random: inout some RandomNumberGenerator,
  isolation: isolated (any Actor)? = #isolation,
  operation: () async throws -> T
) async throws -> T where C.Duration == Duration {
  var attempt = 0
  var delay = initial
  while true {
    do {
      return try await RetryContext.$current.withValue(
        RetryContext(policy: "anonymous", attempt: attempt + 1), operation: operation,
        isolation: isolation)
    } catch {
      if error is CancellationError || attempt >= retries { throw error }
      attempt += 1
      let factor = Double.random(in: (1 - fraction)...(1 + fraction), using: &random)
      try await clock.sleep(until: clock.now.advanced(by: delay * factor), tolerance: nil)
      delay = delay * multiplier
    }
  }
}
