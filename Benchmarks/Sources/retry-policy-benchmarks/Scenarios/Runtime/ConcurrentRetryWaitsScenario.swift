import RetryPolicy
import Synchronization

/// N runs at once on the continuous clock, each failing once and waiting `delay 100ms` for
/// its retry, beside N plain `Task.sleep(for: 100ms)`: wall time, peak memory and lateness;
/// then the memory of N runs all waiting at once, beside N `Task.sleep` all waiting.
///
/// Lateness is when the retry's attempt starts (the sleep returns) minus when it was due.
///
/// The peak memory of the 100 ms wave counts only the runs that overlap: starting 100,000
/// tasks takes longer than 100 ms, so how many wait at once depends on how fast each variant
/// starts them, and on the load. The memory the target compares is therefore measured apart:
/// N tasks started the same way, each waiting an hour (`retry 1 delay 1h` after one failure,
/// or `Task.sleep(for: 1h)`), the resident size read once every one of them has reached its
/// wait, then all cancelled.
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
    let sleepWaiting = await residentPerWaitingRun(runs: runs) { arrivals in
      arrivals.arrive()
      try? await Task.sleep(for: .seconds(3600))
    }
    var policyWaiting: Double?
    if let policy = try? compile(policy: "retry 1 delay 1h") {
      policyWaiting = await residentPerWaitingRun(runs: runs) { arrivals in
        blackHole(
          try? await policy.run { () async throws -> Int in
            arrivals.arrive()
            throw Failure.unavailable
          })
      }
    }
    var table = ReportTable(
      headers: [
        "variant", "runs", "wall time", "peak memory/run (100 ms)", "memory/run (all waiting)",
        "lateness median", "lateness p99",
      ],
      alignments: [.left, .right, .right, .right, .right, .right, .right])
    for (result, waiting) in zip(
      [sleep] + (policyResult.map { [$0] } ?? []), [sleepWaiting, policyWaiting])
    {
      table.append([
        result.variant, Format.integer(result.runs),
        Format.time(nanoseconds: result.wallNanoseconds),
        result.peakBytesPerRun.map(Format.bytes) ?? "n/a",
        waiting.map(Format.bytes) ?? "n/a",
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
    if let mine = policyWaiting, let theirs = sleepWaiting, theirs > 0 {
      measured += String(format: ", memory %.2f× (all waiting)", mine / theirs)
      holds = holds && mine / theirs <= 1.2
    } else {
      holds = false
    }
    measured +=
      "; p99 lateness \(Format.time(nanoseconds: percentile(policyResult.lateness, 0.99)))"
      + " vs \(Format.time(nanoseconds: percentile(sleep.lateness, 0.99)))"
    benchmark.addFinding(target, measured: measured, holds: holds)
  }

  /// The resident memory per run of `runs` tasks all waiting at once.
  ///
  /// Each task calls ``Arrivals/arrive()`` just before its wait; once all have, and a moment
  /// later, the resident size is read and the tasks are cancelled. Nil when it cannot be read.
  static func residentPerWaitingRun(
    runs: Int, _ body: @escaping @Sendable (Arrivals) async -> Void
  ) async -> Double? {
    let arrivals = Arrivals()
    ProcessMemory.trimAllocator()
    guard let before = ProcessMemory.residentBytes() else { return nil }
    var during: Int?
    await withDiscardingTaskGroup { group in
      for _ in 0..<runs {
        group.addTask { await body(arrivals) }
      }
      while arrivals.count < runs {
        try? await Task.sleep(for: .milliseconds(5))
      }
      // The last to arrive reach their wait.
      try? await Task.sleep(for: .milliseconds(100))
      during = ProcessMemory.residentBytes()
      group.cancelAll()
    }
    return during.map { Double($0 - before) / Double(runs) }
  }
}

/// How many tasks reached their wait.
final class Arrivals: Sendable {
  private let arrived = Atomic<Int>(0)

  /// A task is about to wait.
  func arrive() { arrived.wrappingAdd(1, ordering: .relaxed) }

  /// The tasks that arrived so far.
  var count: Int { arrived.load(ordering: .relaxed) }
}
