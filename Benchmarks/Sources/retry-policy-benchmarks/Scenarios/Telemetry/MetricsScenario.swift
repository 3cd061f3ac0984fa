import RetryPolicy

/// What recording into `RetryMetrics` adds to runs: a success and a retry under `run(in:)`,
/// 16 tasks recording into one `RetryMetrics`, and `openMetricsText()` of 1,000 policies.
enum MetricsScenario {
  static let name = "metrics"
  static let policyText = "retry 2 on serverError"
  static let successTarget = "metrics: recording adds ≤ 30 ns and 0 allocations to a success"
  static let retryTarget = "metrics: recording adds ≤ 60 ns to a run with one retry"
  static let contentionTarget = "metrics: 16 tasks into one RetryMetrics keep ≥ 70 % throughput"
  static let textTarget = "metrics: openMetricsText() of 1,000 policies under 5 ms"
  static let tasks = 16

  static let scenario = Scenario(
    name: name,
    summary: "recording into RetryMetrics: a success, a retry, 16 tasks, the text of 1,000 policies"
  ) { benchmark in
    let compiled: CompiledPolicy
    do {
      compiled = try compile(policy: policyText)
    } catch {
      benchmark.skip(name, "every variant", because: "compile(policy:) throws: \(error)")
      return
    }
    var named = compiled
    named.name = "payments"
    let policy = named
    let plain = RetryEnvironment()
    let metrics = RetryMetrics()
    let recorded = RetryEnvironment(metrics: metrics)
    let operation = FlakyOperation()

    /// What recording adds in processor time (all threads of the process), the best of 5
    /// interleaved runs of each: on a shared machine, what other processes take from this
    /// one's time does not count. The text to append to a finding.
    func processorTimeAdded(
      _ body: (RetryEnvironment, Int) async throws -> Void
    ) async -> String {
      let iterations = 100_000
      var best = [Double.infinity, Double.infinity]
      for _ in 0..<5 {
        for (index, environment) in [plain, recorded].enumerated() {
          guard let start = Platform.processProcessorNanoseconds else { return "" }
          do { try await body(environment, iterations) } catch { return "" }
          guard let end = Platform.processProcessorNanoseconds else { return "" }
          best[index] = Swift.min(best[index], (end - start) / Double(iterations))
        }
      }
      return "; processor time, best of 5: "
        + "\(Format.time(nanoseconds: best[1] - best[0])) added "
        + "(\(Format.time(nanoseconds: best[0])) without)"
    }

    let success = await benchmark.compare(
      name + " success",
      [
        Variant("run(in:) success, no metrics (baseline)") { iterations in
          for index in 0..<iterations {
            blackHole(try await policy.run(in: plain) { try await fetchValue(index) })
          }
        },
        Variant("run(in:) success, recording") { iterations in
          for index in 0..<iterations {
            blackHole(try await policy.run(in: recorded) { try await fetchValue(index) })
          }
        },
        Variant("two readings of ContinuousClock.now (the floor of timing a run)") { iterations in
          let clock = ContinuousClock()
          for _ in 0..<iterations {
            let start = clock.now
            blackHole(start.duration(to: clock.now))
          }
        },
      ])
    if let base = success[0], let with = success[1] {
      let added = with.nanosecondsPerOperation - base.nanosecondsPerOperation
      let allocations = with.allocationsPerOperation
      let processor = await processorTimeAdded { environment, iterations in
        for index in 0..<iterations {
          blackHole(try await policy.run(in: environment) { try await fetchValue(index) })
        }
      }
      benchmark.addFinding(
        successTarget,
        measured:
          "\(Format.time(nanoseconds: added)) added; allocations "
          + "\(allocations.map(Format.count) ?? "not counted")\(processor)",
        holds: added <= 30 && (allocations ?? 0) == 0)
    } else {
      benchmark.addFinding(successTarget, measured: "not measured", verdict: .notMeasured)
    }

    let retry = await benchmark.compare(
      name + " retry",
      [
        Variant("run(in:) 1 retry, no metrics (baseline)") { iterations in
          for _ in 0..<iterations {
            operation.reset(failures: 1)
            blackHole(try await policy.run(in: plain) { try await operation() })
          }
        },
        Variant("run(in:) 1 retry, recording") { iterations in
          for _ in 0..<iterations {
            operation.reset(failures: 1)
            blackHole(try await policy.run(in: recorded) { try await operation() })
          }
        },
      ])
    if let base = retry[0], let with = retry[1] {
      let added = with.nanosecondsPerOperation - base.nanosecondsPerOperation
      let processor = await processorTimeAdded { environment, iterations in
        for _ in 0..<iterations {
          operation.reset(failures: 1)
          blackHole(try await policy.run(in: environment) { try await operation() })
        }
      }
      benchmark.addFinding(
        retryTarget,
        measured:
          "\(Format.time(nanoseconds: added)) added; allocations "
          + "\(with.allocationsPerOperation.map(Format.count) ?? "not counted") "
          + "(without: \(base.allocationsPerOperation.map(Format.count) ?? "not counted"))"
          + processor,
        holds: added <= 60)
    } else {
      benchmark.addFinding(retryTarget, measured: "not measured", verdict: .notMeasured)
    }

    /// `iterations` successful runs split among 16 tasks.
    @Sendable func concurrently(_ environment: RetryEnvironment, _ iterations: Int) async {
      await withTaskGroup(of: Void.self) { group in
        for task in 0..<tasks {
          let share = iterations / tasks + (task < iterations % tasks ? 1 : 0)
          group.addTask {
            for index in 0..<share {
              blackHole(try? await policy.run(in: environment) { try await fetchValue(index) })
            }
          }
        }
      }
    }
    let contended = await benchmark.compare(
      name + " 16 tasks",
      [
        Variant("16 tasks, no metrics (baseline)") { iterations in
          await concurrently(plain, iterations)
        },
        Variant("16 tasks, one RetryMetrics") { iterations in
          await concurrently(recorded, iterations)
        },
      ])
    if let base = contended[0], let with = contended[1] {
      let kept = base.nanosecondsPerOperation / with.nanosecondsPerOperation
      benchmark.addFinding(
        contentionTarget,
        measured: "\(Int((kept * 100).rounded())) % of the throughput without metrics",
        holds: kept >= 0.7)
    } else {
      benchmark.addFinding(contentionTarget, measured: "not measured", verdict: .notMeasured)
    }

    let many = RetryMetrics()
    var policies: [CompiledPolicy] = []
    for index in 0..<1000 {
      var each = compiled
      each.name = "service-\(index)"
      policies.append(each)
    }
    let manyEnvironment = RetryEnvironment(metrics: many)
    for each in policies {
      for _ in 0..<3 {
        operation.reset(failures: 1)
        _ = try? await each.run(in: manyEnvironment) { try await operation() }
      }
    }
    let text = await benchmark.measure(name + " text", "openMetricsText(), 1,000 policies") {
      iterations in
      for _ in 0..<iterations { blackHole(many.openMetricsText()) }
    }
    if let text {
      benchmark.addFinding(
        textTarget,
        measured:
          "\(Format.time(nanoseconds: text.nanosecondsPerOperation)) "
          + "(\(many.openMetricsText().utf8.count / 1024) KiB)",
        holds: text.nanosecondsPerOperation < 5_000_000)
    } else {
      benchmark.addFinding(textTarget, measured: "not measured", verdict: .notMeasured)
    }
  }
}
