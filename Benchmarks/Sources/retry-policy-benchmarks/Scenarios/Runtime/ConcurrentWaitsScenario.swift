import RetryPolicy

/// Many concurrent runs that each wait on the real clock a few times: memory per run and how
/// late each wait ends, beside plain `Task.sleep`.
enum ConcurrentWaitsScenario {
  static let name = "concurrent-waits"
  static let policyText = "retry 3 delay 1ms"
  static let waitsPerRun = 3
  static let delay = Duration.milliseconds(1)

  /// What one variant measured.
  struct Result {
    var variant: String
    var runs: Int
    var wallNanoseconds: Double
    var peakBytesPerRun: Double?
    var lateness: [Double]
  }

  static let scenario = Scenario(
    name: name,
    summary: "N concurrent runs ('retry 3 delay 1ms', 3 failures): memory per run, lateness"
  ) { benchmark in
    let runs = benchmark.options.concurrency
    var results: [Result] = []
    results.append(
      await measure("Task.sleep ×3 (baseline)", runs: runs) { log in
        for _ in 0..<waitsPerRun {
          let deadline = ContinuousClock.now.advanced(by: delay)
          try? await Task.sleep(until: deadline, clock: .continuous)
          log.record(deadline.duration(to: .now))
        }
      })
    results.append(
      await measure("hand-written loop, delay 1ms, recording clock", runs: runs) { log in
        let clock = LatenessRecordingClock(log: log)
        let operation = FlakyOperation(failures: waitsPerRun)
        blackHole(
          try? await retryLoop(times: waitsPerRun, delay: delay, clock: clock) {
            try await operation()
          })
      })
    var policyResult: Result?
    do {
      let policy = try compile(policy: policyText)
      policyResult = await measure("policy.run '\(policyText)', recording clock", runs: runs) {
        log in
        let environment = RetryEnvironment(clock: LatenessRecordingClock(log: log))
        let operation = FlakyOperation(failures: waitsPerRun)
        blackHole(try? await policy.run(in: environment) { try await operation() })
      }
    } catch {
      benchmark.addRemark("\(name): policy.run not measured, compile(policy:) throws: \(error)")
    }
    if let policyResult { results.append(policyResult) }
    var table = ReportTable(
      headers: [
        "variant", "runs", "wall time", "time/run", "peak memory/run", "lateness median",
        "lateness p99", "lateness max",
      ],
      alignments: [.left, .right, .right, .right, .right, .right, .right, .right])
    for result in results {
      table.append([
        result.variant, Format.integer(result.runs),
        Format.time(nanoseconds: result.wallNanoseconds),
        Format.time(nanoseconds: result.wallNanoseconds / Double(result.runs)),
        result.peakBytesPerRun.map(Format.bytes) ?? "n/a",
        Format.time(nanoseconds: median(result.lateness)),
        Format.time(nanoseconds: percentile(result.lateness, 0.99)),
        Format.time(nanoseconds: result.lateness.last ?? 0),
      ])
    }
    benchmark.addTable(
      "Concurrent waits: \(Format.integer(runs)) runs at once, each waiting \(waitsPerRun) × 1 ms",
      table)
    let target = "waits: p99 lateness ≤ plain Task.sleep + 50 µs"
    guard let policyResult, let sleepResult = results.first else {
      benchmark.addFinding(target, measured: "policy.run not measured", verdict: .notMeasured)
      return
    }
    let policyP99 = percentile(policyResult.lateness, 0.99)
    let sleepP99 = percentile(sleepResult.lateness, 0.99)
    let memory = policyResult.peakBytesPerRun.map { "; \(Format.bytes($0)) per run" } ?? ""
    benchmark.addFinding(
      target,
      measured:
        "p99 \(Format.time(nanoseconds: policyP99)) vs \(Format.time(nanoseconds: sleepP99)) "
        + "(\(Format.time(nanoseconds: policyP99 - sleepP99)) more)" + memory,
      holds: policyP99 <= sleepP99 + 50_000)
  }

  /// Starts `runs` tasks at once, each running `body`, and waits for all of them.
  static func measure(
    _ variant: String, runs: Int, _ body: @escaping @Sendable (LatenessLog) async -> Void
  ) async -> Result {
    let log = LatenessLog(capacity: runs * (waitsPerRun + 1))
    ProcessMemory.trimAllocator()
    let peakWasReset = ProcessMemory.resetPeak()
    let before = ProcessMemory.residentBytes()
    let start = ContinuousClock.now
    await withDiscardingTaskGroup { group in
      for _ in 0..<runs {
        group.addTask { await body(log) }
      }
    }
    let wall = start.duration(to: .now).nanoseconds
    var peakBytesPerRun: Double?
    if peakWasReset, let before, let peak = ProcessMemory.peakResidentBytes() {
      peakBytesPerRun = Double(peak - before) / Double(runs)
    }
    return Result(
      variant: variant, runs: runs, wallNanoseconds: wall, peakBytesPerRun: peakBytesPerRun,
      lateness: log.sortedNanoseconds())
  }
}
