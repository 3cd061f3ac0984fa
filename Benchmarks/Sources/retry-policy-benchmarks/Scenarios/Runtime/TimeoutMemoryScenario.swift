import RetryPolicy

/// Many attempts under a long `timeout`, one after another: the memory that stays behind once
/// each attempt has ended (it must return to its baseline, whatever the limit).
enum TimeoutMemoryScenario {
  static let name = "timeout-memory"
  static let policyText = "retry 0 timeout 1h"
  static let attempts = 1_000_000
  /// The baseline holds every cancelled sleep for an hour, so it runs fewer attempts.
  static let baselineAttempts = 100_000

  static let scenario = Scenario(
    name: name,
    summary: "1,000,000 attempts under 'retry 0 timeout 1h': heap growth once they have ended"
  ) { benchmark in
    var table = ReportTable(
      headers: ["variant", "attempts", "time/attempt", "resident growth", "growth/attempt"],
      alignments: [.left, .right, .right, .right, .right])
    let baseline = await measure(attempts: baselineAttempts) {
      // What an attempt under `timeout` did before: a child task sleeping the limit with
      // `Task.sleep`, cancelled when the operation returns.
      await withTaskGroup(of: Void.self) { group in
        group.addTask { blackHole(opaque(1)) }
        group.addTask { try? await Task.sleep(for: .seconds(3600)) }
        await group.next()
        group.cancelAll()
      }
    }
    table.append(row("Task.sleep timer child, cancelled (baseline)", baseline))
    var growth: Double?
    do {
      let policy = try compile(policy: policyText)
      let result = await measure(attempts: attempts) {
        blackHole(try? await policy.run { opaque(1) })
      }
      growth = result.growth
      table.append(row("policy.run '\(policyText)'", result))
    } catch {
      benchmark.addRemark("\(name): policy.run not measured, compile(policy:) throws: \(error)")
    }
    benchmark.addTable(
      "Timeout memory: attempts one after another, each ending at once under a 1 h limit", table)
    let target = "timeout: 1,000,000 attempts under 'timeout 1h' grow the heap < 1 MB"
    guard let growth else {
      benchmark.addFinding(target, measured: "not measured", verdict: .notMeasured)
      return
    }
    benchmark.addFinding(
      target, measured: "\(Format.bytes(growth)) resident growth", holds: growth < 1_048_576)
  }

  struct Result {
    var attempts: Int
    var nanoseconds: Double
    var growth: Double?
  }

  static func row(_ variant: String, _ result: Result) -> [String] {
    [
      variant, Format.integer(result.attempts),
      Format.time(nanoseconds: result.nanoseconds / Double(result.attempts)),
      result.growth.map(Format.bytes) ?? "n/a",
      result.growth.map { Format.bytes($0 / Double(result.attempts)) } ?? "n/a",
    ]
  }

  /// Runs `body` `attempts` times in a row; the resident size after trimming the allocator,
  /// before and after.
  static func measure(attempts: Int, _ body: () async -> Void) async -> Result {
    // A first round warms up the runtime's caches and thread pool.
    for _ in 0..<1000 { await body() }
    ProcessMemory.trimAllocator()
    let before = ProcessMemory.residentBytes()
    let start = ContinuousClock.now
    for _ in 0..<attempts { await body() }
    let elapsed = start.duration(to: .now)
    ProcessMemory.trimAllocator()
    let after = ProcessMemory.residentBytes()
    var growth: Double?
    if let before, let after { growth = Double(after - before) }
    return Result(
      attempts: attempts,
      nanoseconds: Double(elapsed.components.seconds) * 1e9
        + Double(elapsed.components.attoseconds) / 1e9,
      growth: growth)
  }
}
