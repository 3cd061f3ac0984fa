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
    let allocations = with.allocationsPerOperation
    let iterations = with.iterations
    let processor = await processorTimes(iterations) { index in
      index == 0
        ? { try await runs($0, of: plain, in: environment) }
        : { try await runs($0, of: guarded, in: environment) }
    }
    let added = processor.map { $0[1] - $0[0] }
    benchmark.addFinding(
      closedTarget,
      measured:
        "processor time \(processor.map { Format.time(nanoseconds: $0[1]) } ?? "n/a") vs "
        + "\(processor.map { Format.time(nanoseconds: $0[0]) } ?? "n/a"): "
        + "\(added.map { Format.time(nanoseconds: $0) } ?? "n/a") added (wall "
        + "\(Format.time(nanoseconds: with.nanosecondsPerOperation - without.nanosecondsPerOperation))); "
        + "allocations \(allocations.map(Format.count) ?? "not counted")",
      holds: (added ?? .infinity) <= 15 && (allocations ?? 0) == 0)
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
    let processor = await processorTimes(refused.iterations) { _ in
      { iterations in
        for index in 0..<iterations {
          do {
            blackHole(try await guarded.run(in: environment) { try await fetchValue(index) })
          } catch {
            blackHole(error)
          }
        }
      }
    }
    benchmark.addFinding(
      openTarget,
      measured:
        "processor time \(processor.map { Format.time(nanoseconds: $0[0]) } ?? "n/a") per "
        + "refused run, the thrown error included (wall "
        + "\(Format.time(nanoseconds: refused.nanosecondsPerOperation)))",
      holds: (processor?[0] ?? .infinity) <= 150)
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
    // Throughput per core of the 16 tasks, as a share of one task's throughput: by wall time
    // (which other processes on the machine distort), and by processor time (what each run
    // costs a core, contention included).
    let share = one.nanosecondsPerOperation / (many.nanosecondsPerOperation * cores)
    let processor = await processorTimes(many.iterations) { index in
      index == 0
        ? { try await runs($0, of: guarded, in: environment) }
        : { try await concurrently($0, of: guarded, in: environment) }
    }
    let processorShare = processor.map { $0[0] / $0[1] }
    benchmark.addFinding(
      sharedTarget,
      measured:
        "processor time per run \(processor.map { Format.time(nanoseconds: $0[0]) } ?? "n/a") "
        + "alone, \(processor.map { Format.time(nanoseconds: $0[1]) } ?? "n/a") with \(tasks) "
        + "tasks: \(processorShare.map { "\(Int(($0 * 100).rounded()))%" } ?? "n/a") per core "
        + "(wall: \(Int((share * 100).rounded()))% on \(Int(cores)) cores)",
      holds: (processorShare ?? 0) >= 0.7)
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

  /// The fewest processor nanoseconds (all the process's threads) per operation of each of
  /// two bodies over five alternating repetitions of `iterations` operations; nil when the
  /// system does not tell a process's processor time.
  private static func processorTimes(
    _ iterations: Int, _ body: (Int) -> (Int) async throws -> Void
  ) async -> [Double]? {
    var best = [Double.infinity, Double.infinity]
    for _ in 0..<5 {
      for index in 0..<2 {
        guard let start = Platform.processProcessorNanoseconds else { return nil }
        do { try await body(index)(iterations) } catch { return nil }
        guard let end = Platform.processProcessorNanoseconds else { return nil }
        best[index] = Swift.min(best[index], (end - start) / Double(Swift.max(iterations, 1)))
      }
    }
    return best
  }

  @inline(never)
  private static func throwOpen() throws {
    throw CircuitOpenError(remaining: .seconds(5))
  }
}
