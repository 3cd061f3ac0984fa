import RetryPolicy

/// The speed targets of issue 34: what a shedding stage that admits without waiting adds to a
/// success, how 16 tasks sharing one `limit` keep their throughput, and what a refusal costs.
///
/// Every policy is run as users run it: `policy.run(in:)` with the state each policy value
/// has for the process (a limiter, a throttle or a rate limiter per policy value). The rate
/// of the success path (a million a second, as many in the bucket) keeps up with its runs:
/// they take turns with the other variants, so none waits for a token.
enum SheddingScenario {
  static let name = "shedding"
  static let plainText = "retry 5 on serverError backoff 1s x1.5 jitter 10%"
  /// The stages measured on the success path, by the clause added to `plainText`; the first
  /// is the one the target names.
  static let stages = [
    "limit 1000", "limit adaptive max 1000", "throttle x2", "rate 1000000/s burst 1000000",
  ]
  static let admitTarget =
    "a shedding stage that admits without waiting: ≤ 20 ns added to a success, 0 allocations"
  static let sharedTarget =
    "16 tasks sharing one 'limit 1000': ≥ 70% of their throughput without it"
  static let refusalTarget = "a refused attempt ('limit 1' full): ≤ 150 ns a refused run"
  static let registryNote =
    "(not a target) 'limit 1000' in a host's registry: ≤ 1.25× a run with the process-wide one"
  /// The tasks of the shared variant.
  static let tasks = 16

  static let scenario = Scenario(
    name: name,
    summary: "a limit, an adaptive limit, a throttle and a rate on the success path, 16 tasks "
      + "sharing one limit, a refusal by each"
  ) { benchmark in
    let plain: CompiledPolicy
    var limited: [CompiledPolicy] = []
    let single: CompiledPolicy
    let named: CompiledPolicy
    do {
      plain = try compile(policy: plainText)
      for stage in stages { limited.append(try compile(policy: "\(plainText) \(stage)")) }
      single = try compile(policy: "\(plainText) limit 1")
      named = try compile(policyFile: "policy search = \(plainText) \(stages[0])").policies[0]
    } catch {
      benchmark.skip(name, "policy.run", because: "compile(policy:) throws: \(error)")
      return
    }
    let environment = RetryEnvironment()
    await successPath(benchmark, plain: plain, limited: limited, in: environment)
    await sharedLimit(benchmark, plain: plain, limited: limited[0], in: environment)
    await refusal(benchmark, single: single, in: environment)
    await hostRegistry(benchmark, plain: plain, limited: limited[0], named: named)
    await stageRefusals(benchmark, in: environment)
  }

  /// A success with 'limit 1000' kept in a host's registry (as a `PolicyStore` keeps it, by
  /// name), beside the process-wide registry's (by value) and no limit.
  private static func hostRegistry(
    _ benchmark: Benchmark, plain: CompiledPolicy, limited: CompiledPolicy, named: CompiledPolicy
  ) async {
    let processWide = RetryEnvironment()
    let hosted = RetryEnvironment(registry: RetryStateRegistry())
    let measurements = await benchmark.compare(
      name,
      [
        Variant("registry: policy.run, no shedding (baseline)") { iterations in
          try await runs(iterations, of: plain, in: processWide)
        },
        Variant("registry: 'limit 1000', the process-wide registry") { iterations in
          try await runs(iterations, of: limited, in: processWide)
        },
        Variant("registry: 'limit 1000', a host's registry, by name") { iterations in
          try await runs(iterations, of: named, in: hosted)
        },
      ])
    guard measurements.count == 3, let host = measurements[2] else {
      benchmark.addFinding(registryNote, measured: "not measured", verdict: .notMeasured)
      return
    }
    let processor = await processorTimes(host.iterations) { variant in
      variant == 0
        ? { try await runs($0, of: limited, in: processWide) }
        : { try await runs($0, of: named, in: hosted) }
    }
    benchmark.addFinding(
      registryNote,
      measured:
        "processor time \(processor.map { Format.time(nanoseconds: $0[1]) } ?? "n/a") with the "
        + "host's registry vs \(processor.map { Format.time(nanoseconds: $0[0]) } ?? "n/a") "
        + "with the process-wide one (wall \(Format.time(nanoseconds: host.nanosecondsPerOperation)))",
      holds: processor.map { $0[1] <= 1.25 * $0[0] } ?? false)
  }

  /// A success under the same policy without and with each stage.
  private static func successPath(
    _ benchmark: Benchmark, plain: CompiledPolicy, limited: [CompiledPolicy],
    in environment: RetryEnvironment
  ) async {
    var variants = [
      Variant("success: policy.run, no shedding (baseline)") { iterations in
        try await runs(iterations, of: plain, in: environment)
      }
    ]
    for (stage, policy) in zip(stages, limited) {
      variants.append(
        Variant("success: policy.run with '\(stage)'") { iterations in
          try await runs(iterations, of: policy, in: environment)
        })
    }
    let measurements = await benchmark.compare(name, variants)
    guard measurements.count == variants.count, let without = measurements[0] else {
      benchmark.addFinding(admitTarget, measured: "not measured", verdict: .notMeasured)
      return
    }
    for (index, stage) in stages.enumerated() {
      guard let with = measurements[index + 1] else { continue }
      let policy = limited[index]
      let processor = await processorTimes(with.iterations) { variant in
        variant == 0
          ? { try await runs($0, of: plain, in: environment) }
          : { try await runs($0, of: policy, in: environment) }
      }
      let added = processor.map { $0[1] - $0[0] }
      let allocations = with.allocationsPerOperation
      benchmark.addFinding(
        index == 0 ? admitTarget : "the same, with '\(stage)' (not a target)",
        measured:
          "'\(stage)': processor time \(processor.map { Format.time(nanoseconds: $0[1]) } ?? "n/a") "
          + "vs \(processor.map { Format.time(nanoseconds: $0[0]) } ?? "n/a"): "
          + "\(added.map { Format.time(nanoseconds: $0) } ?? "n/a") added (wall "
          + "\(Format.time(nanoseconds: with.nanosecondsPerOperation - without.nanosecondsPerOperation))); "
          + "allocations \(allocations.map(Format.count) ?? "not counted")",
        holds: (added ?? .infinity) <= 20 && (allocations ?? 0) == 0)
    }
  }

  /// 16 tasks making their share of the runs, without a limit and sharing one `limit 1000`
  /// (never full: every attempt is admitted).
  private static func sharedLimit(
    _ benchmark: Benchmark, plain: CompiledPolicy, limited: CompiledPolicy,
    in environment: RetryEnvironment
  ) async {
    let measurements = await benchmark.compare(
      name,
      [
        Variant("shared: \(tasks) tasks, no limit (baseline)") { iterations in
          try await concurrently(iterations, of: plain, in: environment)
        },
        Variant("shared: \(tasks) tasks, one 'limit 1000'") { iterations in
          try await concurrently(iterations, of: limited, in: environment)
        },
      ])
    guard measurements.count == 2, let without = measurements[0], let with = measurements[1]
    else {
      benchmark.addFinding(sharedTarget, measured: "not measured", verdict: .notMeasured)
      return
    }
    let wallShare = without.nanosecondsPerOperation / with.nanosecondsPerOperation
    let processor = await processorTimes(with.iterations) { variant in
      variant == 0
        ? { try await concurrently($0, of: plain, in: environment) }
        : { try await concurrently($0, of: limited, in: environment) }
    }
    let share = processor.map { $0[0] / $0[1] }
    benchmark.addFinding(
      sharedTarget,
      measured:
        "processor time per run \(processor.map { Format.time(nanoseconds: $0[0]) } ?? "n/a") "
        + "without, \(processor.map { Format.time(nanoseconds: $0[1]) } ?? "n/a") with: "
        + "\(share.map { "\(Int(($0 * 100).rounded()))%" } ?? "n/a") of the throughput "
        + "(wall: \(Int((wallShare * 100).rounded()))%)",
      holds: (share ?? 0) >= 0.7)
  }

  /// Runs refused by a `limit 1` whose slot another run holds: the first attempt is refused,
  /// the operation is not called, and `run` throws `LimitExceededError`.
  private static func refusal(
    _ benchmark: Benchmark, single: CompiledPolicy, in environment: RetryEnvironment
  ) async {
    let holder = Task {
      try await single.run(in: environment) { try await Task.sleep(for: .seconds(3600)) }
    }
    defer { holder.cancel() }
    // Until the holder has its slot, a run is admitted: wait for the first refusal.
    var isFull = false
    for _ in 0..<1000 where !isFull {
      do {
        _ = try await single.run(in: environment) { 0 }
        try? await Task.sleep(for: .milliseconds(1))
      } catch {
        isFull = error is LimitExceededError
      }
    }
    guard isFull else {
      benchmark.skip(name, "refused", because: "the holder never took the slot")
      benchmark.addFinding(refusalTarget, measured: "not measured", verdict: .notMeasured)
      return
    }
    let measurements = await benchmark.compare(
      name,
      [
        Variant("refused: throwing and catching LimitExceededError (baseline)") { iterations in
          for _ in 0..<iterations {
            do { try throwRefusal() } catch { blackHole(error) }
          }
        },
        Variant("refused: policy.run with 'limit 1' full") { iterations in
          try await refusedRuns(iterations, of: single, in: environment)
        },
      ])
    guard measurements.count == 2, let refused = measurements[1] else {
      benchmark.addFinding(refusalTarget, measured: "not measured", verdict: .notMeasured)
      return
    }
    let processor = await processorTimes(refused.iterations) { _ in
      { try await refusedRuns($0, of: single, in: environment) }
    }
    benchmark.addFinding(
      refusalTarget,
      measured:
        "processor time \(processor.map { Format.time(nanoseconds: $0[0]) } ?? "n/a") per "
        + "refused run, the thrown error included (wall "
        + "\(Format.time(nanoseconds: refused.nanosecondsPerOperation)))",
      holds: (processor?[0] ?? .infinity) <= 150)
  }

  private static func runs(
    _ count: Int, of policy: CompiledPolicy, in environment: RetryEnvironment
  ) async throws {
    for index in 0..<count {
      blackHole(try await policy.run(in: environment) { try await fetchValue(index) })
    }
  }

  private static func refusedRuns(
    _ count: Int, of policy: CompiledPolicy, in environment: RetryEnvironment
  ) async throws {
    for index in 0..<count {
      do {
        blackHole(try await policy.run(in: environment) { try await fetchValue(index) })
      } catch {
        blackHole(error)
      }
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
  static func processorTimes(
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
  static func throwRefusal() throws {
    throw LimitExceededError(limit: 1)
  }
}
