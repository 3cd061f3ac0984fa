import RetryPolicy

/// The refusals of `limit adaptive`, `throttle` and `rate` (issue 34: "a refusal costs ≤ 150
/// ns"), beside the refusal of a full `limit 1` that ``SheddingScenario`` measures.
extension SheddingScenario {
  /// A refused run of each stage: what makes it refuse, and the error it throws.
  struct RefusalCase {
    /// The clause added to the plain policy.
    var clause: String
    /// What the finding and the row say about the state the runs meet.
    var state: String
  }

  /// The stages whose refusal is measured here, by clause.
  static let refusalCases = [
    RefusalCase(clause: "limit adaptive min 1 max 1", state: "full"),
    RefusalCase(clause: "throttle x1", state: "after 2,000 failures"),
    RefusalCase(clause: "rate 1/m burst 1 within 1ms", state: "empty"),
  ]

  /// Runs refused by `limit adaptive`, `throttle` and `rate`, the thrown error included,
  /// against throwing and catching the error alone.
  static func stageRefusals(_ benchmark: Benchmark, in environment: RetryEnvironment) async {
    for refusal in refusalCases {
      let target = "a refused run ('\(refusal.clause)' \(refusal.state)): ≤ 150 ns"
      let policy: CompiledPolicy
      do {
        policy = try compile(policy: "retry 5 on serverError immediately \(refusal.clause)")
      } catch {
        benchmark.addFinding(target, measured: "compile throws: \(error)", verdict: .notMeasured)
        continue
      }
      // Brings the stage to refusing: a slot held, a throttle that saw only failures, a
      // bucket emptied.
      let holder = Task {
        try await policy.run(in: environment) { try await Task.sleep(for: .seconds(3600)) }
      }
      defer { holder.cancel() }
      // The holder takes its slot (its token) before the runs below hold it.
      try? await Task.sleep(for: .milliseconds(20))
      guard await isRefusing(policy, in: environment) else {
        benchmark.skip(name, "refused: '\(refusal.clause)'", because: "it never refused")
        benchmark.addFinding(target, measured: "not measured", verdict: .notMeasured)
        continue
      }
      let measurements = await benchmark.compare(
        name,
        [
          Variant("refused: throwing and catching the error (baseline)") { iterations in
            for _ in 0..<iterations {
              do { try throwRefusal() } catch { blackHole(error) }
            }
          },
          Variant("refused: policy.run with '\(refusal.clause)' \(refusal.state)") { iterations in
            try await failingRuns(iterations, of: policy, in: environment)
          },
        ])
      guard measurements.count == 2, let refused = measurements[1] else {
        benchmark.addFinding(target, measured: "not measured", verdict: .notMeasured)
        continue
      }
      let processor = await processorTimes(refused.iterations) { _ in
        { try await failingRuns($0, of: policy, in: environment) }
      }
      benchmark.addFinding(
        target,
        measured:
          "processor time \(processor.map { Format.time(nanoseconds: $0[0]) } ?? "n/a") per "
          + "refused run, the thrown error included (wall "
          + "\(Format.time(nanoseconds: refused.nanosecondsPerOperation))); allocations "
          + "\(refused.allocationsPerOperation.map(Format.count) ?? "not counted")",
        holds: (processor?[0] ?? .infinity) <= 150)
    }
  }

  /// Runs `policy` until one is refused (a `LimitExceededError`, `ThrottledError` or
  /// `RateLimitedError`), the operation failing meanwhile; false when none was in 2,000 runs.
  private static func isRefusing(
    _ policy: CompiledPolicy, in environment: RetryEnvironment
  ) async -> Bool {
    for _ in 0..<2000 {
      do {
        _ = try await policy.run(in: environment) { () async throws -> Int in
          throw BenchmarkError.serverError(code: 503)
        }
      } catch is LimitExceededError, is ThrottledError, is RateLimitedError {
        return true
      } catch {
        try? await Task.sleep(for: .microseconds(100))
      }
    }
    return false
  }

  /// Runs of `policy` whose operation fails (a throttle then never sees an accept).
  private static func failingRuns(
    _ count: Int, of policy: CompiledPolicy, in environment: RetryEnvironment
  ) async throws {
    for _ in 0..<count {
      do {
        blackHole(
          try await policy.run(in: environment) { () async throws -> Int in
            throw BenchmarkError.serverError(code: 503)
          })
      } catch {
        blackHole(error)
      }
    }
  }
}
