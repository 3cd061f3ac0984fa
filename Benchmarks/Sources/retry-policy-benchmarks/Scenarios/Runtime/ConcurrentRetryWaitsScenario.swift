import RetryPolicy
import Synchronization

/// N runs at once on the continuous clock, each failing once and waiting `delay 100ms` for
/// its retry, beside N plain `Task.sleep(for: 100ms)`: peak memory, wall time and lateness.
///
/// Lateness is when the retry's attempt starts (the sleep returns) minus when it was due.
enum ConcurrentRetryWaitsScenario {
  static let name = "retry-waits-scale"
  static let policyText = "retry 1 delay 100ms"
  static let delay = Duration.milliseconds(100)

  private enum Failure: Error {
    case unavailable
  }

  static let scenario = Scenario(
    name: name,
    summary: "N concurrent runs waiting 'delay 100ms' on the continuous clock vs N Task.sleep"
  ) { benchmark in
    let runs = benchmark.options.concurrency
    let sleep = await ConcurrentWaitsScenario.measure(
      "Task.sleep(for: 100ms) (baseline)", runs: runs
    ) {
      log in
      let due = ContinuousClock.now.advanced(by: delay)
      try? await Task.sleep(for: delay)
      log.record(due.duration(to: .now))
    }
    var policyResult: ConcurrentWaitsScenario.Result?
    do {
      let policy = try compile(policy: policyText)
      policyResult = await ConcurrentWaitsScenario.measure(
        "policy.run '\(policyText)', continuous clock", runs: runs
      ) { log in
        let state = Mutex<ContinuousClock.Instant?>(nil)
        blackHole(
          try? await policy.run { () async throws -> Int in
            let now = ContinuousClock.now
            let due = state.withLock { due -> ContinuousClock.Instant? in
              defer { due = now.advanced(by: delay) }
              return due
            }
            guard let due else { throw Failure.unavailable }
            log.record(due.duration(to: now))
            return 1
          })
      }
    } catch {
      benchmark.addRemark("\(name): policy.run not measured, compile(policy:) throws: \(error)")
    }
    var table = ReportTable(
      headers: [
        "variant", "runs", "wall time", "peak memory/run", "lateness median", "lateness p99",
      ],
      alignments: [.left, .right, .right, .right, .right, .right])
    for result in [sleep] + (policyResult.map { [$0] } ?? []) {
      table.append([
        result.variant, Format.integer(result.runs),
        Format.time(nanoseconds: result.wallNanoseconds),
        result.peakBytesPerRun.map(Format.bytes) ?? "n/a",
        Format.time(nanoseconds: median(result.lateness)),
        Format.time(nanoseconds: percentile(result.lateness, 0.99)),
      ])
    }
    benchmark.addTable(
      "Retry waits at scale: \(Format.integer(runs)) runs at once, each waiting 100 ms once",
      table)
    let target = "scale: memory and wall time ≤ 1.2× plain Task.sleep"
    guard let policyResult else {
      benchmark.addFinding(target, measured: "not measured", verdict: .notMeasured)
      return
    }
    let time = policyResult.wallNanoseconds / sleep.wallNanoseconds
    var measured = String(format: "wall time %.2f×", time)
    var holds = time <= 1.2
    if let mine = policyResult.peakBytesPerRun, let theirs = sleep.peakBytesPerRun, theirs > 0 {
      measured += String(format: ", memory %.2f×", mine / theirs)
      holds = holds && mine / theirs <= 1.2
    }
    measured +=
      "; p99 lateness \(Format.time(nanoseconds: percentile(policyResult.lateness, 0.99)))"
      + " vs \(Format.time(nanoseconds: percentile(sleep.lateness, 0.99)))"
    benchmark.addFinding(target, measured: measured, holds: holds)
  }
}
