import RetryPolicy

/// The three speed targets of issue 25: what a closed breaker adds to a success, how fast an
/// open one refuses, and how 16 tasks sharing one breaker scale on the machine's cores.
enum CircuitBreakerScenario {
  static let name = "breaker"
  static let plainText = "retry 5 on serverError backoff 1s x1.5 jitter 10%"
  /// `breaker 50% over 30s min 20 for 5s`, set on the compiled value.
  static let clause = CircuitBreakerPolicy(
    failurePercent: 50, window: .seconds(30), minimumAttempts: 20, openDuration: .seconds(5))
  static let closedTarget = "closed breaker: ≤ 15 ns added to the success path, 0 allocations"
  static let openTarget = "open breaker: refuses an attempt in ≤ 150 ns"
  static let sharedTarget =
    "16 tasks sharing one breaker: ≥ 70% of one task's throughput per core"
  /// The tasks of the shared variant.
  static let tasks = 16

  static let scenario = Scenario(
    name: name,
    summary: "a closed breaker's success path, an open breaker's refusal, 16 tasks sharing one"
  ) { benchmark in
    let plain: CompiledPolicy
    var guarded: CompiledPolicy
    do {
      plain = try compile(policy: plainText)
      guarded = plain
      guarded.breaker = clause
    } catch {
      benchmark.skip(name, "policy.run", because: "compile(policy:) throws: \(error)")
      return
    }
    await closedPath(benchmark, plain: plain, guarded: guarded)
    await openPath(benchmark, guarded: guarded)
    await sharedBreaker(benchmark, plain: plain, guarded: guarded)
  }

  /// A success under the same policy without and with `breaker`, in an environment that
  /// gives a breaker (the policy without the clause ignores it).
  private static func closedPath(
    _ benchmark: Benchmark, plain: CompiledPolicy, guarded: CompiledPolicy
  ) async {
    let environment = RetryEnvironment(breaker: CircuitBreaker())
    let measurements = await benchmark.compare(
      name,
      [
        Variant("closed: policy.run without 'breaker' (baseline)") { iterations in
          for index in 0..<iterations {
            blackHole(try await plain.run(in: environment) { try await fetchValue(index) })
          }
        },
        Variant("closed: policy.run with 'breaker 50%'") { iterations in
          for index in 0..<iterations {
            blackHole(try await guarded.run(in: environment) { try await fetchValue(index) })
          }
        },
      ])
    guard measurements.count == 2, let without = measurements[0], let with = measurements[1]
    else {
      benchmark.addFinding(closedTarget, measured: "not measured", verdict: .notMeasured)
      return
    }
    let added = with.nanosecondsPerOperation - without.nanosecondsPerOperation
    let allocations = with.allocationsPerOperation
    benchmark.addFinding(
      closedTarget,
      measured:
        "\(Format.time(nanoseconds: with.nanosecondsPerOperation)) vs "
        + "\(Format.time(nanoseconds: without.nanosecondsPerOperation)): "
        + "\(Format.time(nanoseconds: added)) added; "
        + "allocations \(allocations.map(Format.count) ?? "not counted")",
      holds: added <= 15 && (allocations ?? 0) == 0)
  }

  /// A run refused by an isolated breaker: its first attempt is refused, the operation is
  /// not called, and `run` throws `CircuitOpenError`.
  private static func openPath(_ benchmark: Benchmark, guarded: CompiledPolicy) async {
    let breaker = CircuitBreaker()
    breaker.isolate()
    let environment = RetryEnvironment(breaker: breaker)
    let measurements = await benchmark.compare(
      name,
      [
        Variant("open: throwing and catching CircuitOpenError (baseline)") { iterations in
          for _ in 0..<iterations {
            do { try throwOpen() } catch { blackHole(error) }
          }
        },
        Variant("open: policy.run refused") { iterations in
          for index in 0..<iterations {
            do {
              blackHole(try await guarded.run(in: environment) { try await fetchValue(index) })
            } catch {
              blackHole(error)
            }
          }
        },
      ],
      against: "open: throwing and catching CircuitOpenError (baseline)")
    guard measurements.count == 2, let refused = measurements[1] else {
      benchmark.addFinding(openTarget, measured: "not measured", verdict: .notMeasured)
      return
    }
    benchmark.addFinding(
      openTarget,
      measured:
        "\(Format.time(nanoseconds: refused.nanosecondsPerOperation)) per refused run, "
        + "the thrown error included",
      holds: refused.nanosecondsPerOperation <= 150)
  }

  /// One task against 16 tasks sharing one breaker, each making its share of the runs.
  private static func sharedBreaker(
    _ benchmark: Benchmark, plain: CompiledPolicy, guarded: CompiledPolicy
  ) async {
    let environment = RetryEnvironment(breaker: CircuitBreaker())
    let measurements = await benchmark.compare(
      name,
      [
        Variant("shared: 1 task, 'breaker 50%'") { iterations in
          try await runs(iterations, of: guarded, in: environment)
        },
        Variant("shared: \(tasks) tasks, no breaker") { iterations in
          try await concurrently(iterations, of: plain, in: environment)
        },
        Variant("shared: \(tasks) tasks, one 'breaker 50%'") { iterations in
          try await concurrently(iterations, of: guarded, in: environment)
        },
      ],
      against: "shared: 1 task, 'breaker 50%'")
    guard measurements.count == 3, let one = measurements[0], let many = measurements[2] else {
      benchmark.addFinding(sharedTarget, measured: "not measured", verdict: .notMeasured)
      return
    }
    let cores = Double(Swift.max(1, Swift.min(tasks, Platform.processorCount)))
    // Throughput per core of the 16 tasks, as a share of one task's throughput.
    let share = one.nanosecondsPerOperation / (many.nanosecondsPerOperation * cores)
    benchmark.addFinding(
      sharedTarget,
      measured:
        "\(Format.time(nanoseconds: one.nanosecondsPerOperation)) per run alone, "
        + "\(Format.time(nanoseconds: many.nanosecondsPerOperation)) per run with \(tasks) "
        + "tasks on \(Int(cores)) cores: \(Int((share * 100).rounded()))% per core",
      holds: share >= 0.7)
  }

  private static func runs(
    _ count: Int, of policy: CompiledPolicy, in environment: RetryEnvironment
  ) async throws {
    for index in 0..<count {
      blackHole(try await policy.run(in: environment) { try await fetchValue(index) })
    }
  }

  private static func concurrently(
    _ count: Int, of policy: CompiledPolicy, in environment: RetryEnvironment
  ) async throws {
    try await withThrowingDiscardingTaskGroup { group in
      for task in 0..<tasks {
        let share = count / tasks + (task < count % tasks ? 1 : 0)
        group.addTask { try await runs(share, of: policy, in: environment) }
      }
    }
  }

  @inline(never)
  private static func throwOpen() throws {
    throw CircuitOpenError(remaining: .seconds(5))
  }
}
