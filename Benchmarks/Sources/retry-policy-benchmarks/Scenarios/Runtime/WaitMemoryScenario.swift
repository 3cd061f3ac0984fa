import RetryPolicy
import Synchronization

/// Runs that end during a long wait on the continuous clock: the memory that stays behind once
/// they have ended (it must return to its baseline, whatever the delay).
///
/// - "cancelled during `delay 1h`": each run fails once and is cancelled while it waits;
/// - "`hedge 1 after 1h` won by the first attempt": the hedge timer is armed, then cut short.
///
/// `--concurrency N` sets the runs of each (default 1,000,000; the baseline runs a tenth).
enum WaitMemoryScenario {
  static let name = "wait-memory"
  static let delayPolicy = "retry 1 delay 1h"
  static let hedgePolicy = "retry 1 on unavailable hedge 1 after 1h"
  /// Runs started at once, then cancelled together.
  static let batch = 1000

  private enum Failure: Error {
    case unavailable
  }

  static let scenario = Scenario(
    name: name,
    summary: "1,000,000 runs cancelled during 'delay 1h', and hedges won before 'after 1h'"
  ) { benchmark in
    let runs = Swift.min(benchmark.options.concurrency, 1_000_000)
    var table = ReportTable(
      headers: ["variant", "runs", "time/run", "resident growth", "growth/run"],
      alignments: [.left, .right, .right, .right, .right])
    let baselineRuns = Swift.max(batch, runs / 10)
    let baseline = await measure(batches: baselineRuns / batch) {
      await cancelledBatch { try await Task.sleep(for: .seconds(3600)) }
    }
    table.append(row("Task.sleep(1h), cancelled (what a retry's wait was)", baseline))
    var findings: [(String, Double?)] = []
    do {
      let policy = try compile(policy: delayPolicy)
      let result = await measure(batches: runs / batch) {
        await cancelledBatch {
          try await policy.run { throw Failure.unavailable }
        }
      }
      table.append(row("policy.run '\(delayPolicy)', cancelled in the wait", result))
      findings.append(("cancelled during 'delay 1h'", result.growth))
      let hedged = try compile(policy: hedgePolicy)
      let hedge = await measure(batches: runs / batch) {
        await withDiscardingTaskGroup { group in
          for _ in 0..<batch {
            group.addTask {
              blackHole(
                try? await hedged.runHedged { _ in
                  await Task.yield()
                  return opaque(1)
                })
            }
          }
        }
      }
      table.append(row("runHedged '\(hedgePolicy)', first attempt wins", hedge))
      findings.append(("'hedge 1 after 1h' won by the first attempt", hedge.growth))
    } catch {
      benchmark.addRemark("\(name): not measured, compile(policy:) throws: \(error)")
    }
    benchmark.addTable(
      "Wait memory: runs ending during a 1 h wait on the continuous clock, \(batch) at a time",
      table)
    for (what, growth) in findings {
      let target = "\(Format.integer(runs)) runs \(what) grow resident memory < 5 MB"
      guard let growth else {
        benchmark.addFinding(target, measured: "not measured", verdict: .notMeasured)
        continue
      }
      benchmark.addFinding(
        target, measured: "\(Format.bytes(growth)) resident growth", holds: growth < 5_242_880)
    }
  }

  /// A result counted in batches, as rows counted in runs.
  static func row(_ variant: String, _ result: TimeoutMemoryScenario.Result) -> [String] {
    let runs = Double(result.attempts * batch)
    return [
      variant, Format.integer(result.attempts * batch),
      Format.time(nanoseconds: result.nanoseconds / runs),
      result.growth.map(Format.bytes) ?? "n/a",
      result.growth.map { Format.bytes($0 / runs) } ?? "n/a",
    ]
  }

  /// Runs `body` (one batch) `batches` times in a row, after ten to warm up; the resident size
  /// after trimming the allocator, before and after.
  static func measure(batches: Int, _ body: () async -> Void) async
    -> TimeoutMemoryScenario.Result
  {
    for _ in 0..<10 { await body() }
    ProcessMemory.trimAllocator()
    let before = ProcessMemory.residentBytes()
    let start = ContinuousClock.now
    for _ in 0..<batches { await body() }
    let elapsed = start.duration(to: .now)
    ProcessMemory.trimAllocator()
    let after = ProcessMemory.residentBytes()
    var growth: Double?
    if let before, let after { growth = Double(after - before) }
    return TimeoutMemoryScenario.Result(
      attempts: batches,
      nanoseconds: Double(elapsed.components.seconds) * 1e9
        + Double(elapsed.components.attoseconds) / 1e9,
      growth: growth)
  }

  /// Starts `batch` tasks running `body`, waits until each is suspended in its wait, cancels
  /// them all and waits for them to end.
  static func cancelledBatch(_ body: @escaping @Sendable () async throws -> Void) async {
    let tasks = (0..<batch).map { _ in Task { try? await body() } }
    // Enough yields for every task to reach its wait on a busy two-core machine; a task that
    // has not is cancelled before it waits, which only flatters the variant that leaks.
    for _ in 0..<20 { await Task.yield() }
    try? await Task.sleep(for: .milliseconds(2))
    for task in tasks { task.cancel() }
    for task in tasks { await task.value }
  }
}
