/// The timing of one variant: the median over repetitions of the time per operation, and
/// the allocations per operation.
struct Measurement: Sendable {
  /// The median time per operation over the repetitions, in nanoseconds.
  var nanosecondsPerOperation: Double
  /// The fastest and slowest repetition, per operation, in nanoseconds.
  var fastest: Double
  /// The slowest repetition, per operation, in nanoseconds.
  var slowest: Double
  /// The fewest allocations per operation seen in a repetition, or nil without the counter.
  ///
  /// The fewest, not the median: other threads' allocations only ever add to a repetition.
  var allocationsPerOperation: Double?
  /// Operations per repetition, as calibrated.
  var iterations: Int
}

/// One way of doing a scenario's work: a name for the table and a body that performs the
/// operation a given number of times.
struct Variant {
  var name: String
  var note: String
  var body: (Int) async throws -> Void

  init(_ name: String, note: String = "", _ body: @escaping (Int) async throws -> Void) {
    self.name = name
    self.note = note
    self.body = body
  }
}

/// One line of the main table.
struct ReportRow: Sendable {
  var scenario: String
  var variant: String
  var measurement: Measurement?
  /// The time of this row over the scenario's baseline row, if it has one.
  var ratio: Double?
  /// Anything more: time per policy, an error.
  var note: String
}

/// A target of the issue, with what this run measured.
struct TargetFinding: Sendable {
  /// Whether the target holds in this run.
  enum Verdict: Sendable {
    case holds
    case fails
    case notMeasured
  }

  var target: String
  var measured: String
  var verdict: Verdict
}

/// Runs the variants of each scenario and collects the table and the targets.
///
/// Everything runs in one task, one variant after the other.
final class Benchmark {
  let options: BenchmarkOptions
  private(set) var rows: [ReportRow] = []
  private(set) var findings: [TargetFinding] = []
  /// Extra tables (the concurrent waits do not fit the time-per-operation table).
  private(set) var extraTables: [(title: String, table: ReportTable)] = []
  /// Remarks printed under the tables.
  private(set) var remarks: [String] = []

  init(options: BenchmarkOptions) {
    self.options = options
  }

  /// Measures `body`, which performs the operation `iterations` times, and adds a row.
  ///
  /// The first row of a scenario is its baseline unless `baseline` names another row of the
  /// scenario. Returns nil when the body throws (the row says so).
  @discardableResult
  func measure(
    _ scenario: String,
    _ variant: String,
    against baseline: String? = nil,
    note: String = "",
    _ body: (Int) async throws -> Void
  ) async -> Measurement? {
    await withoutActuallyEscaping(body) { body in
      await compare(scenario, [Variant(variant, note: note, body)], against: baseline)[0]
    }
  }

  /// Measures several variants of a scenario side by side and adds a row for each.
  ///
  /// Each variant is calibrated on its own; then the repetitions take turns (one of each
  /// variant, then again), so that a slow spell of a shared machine affects every variant
  /// alike, and the ratios stay meaningful. The first row of a scenario is its baseline unless
  /// `baseline` names another. Returns the measurements in order, nil for a variant that
  /// throws (its row says so).
  @discardableResult
  func compare(
    _ scenario: String, _ variants: [Variant], against baseline: String? = nil
  ) async -> [Measurement?] {
    var iterations: [Int?] = []
    var failures: [String?] = []
    for variant in variants {
      do {
        iterations.append(try await calibrate(variant.body))
        failures.append(nil)
      } catch {
        iterations.append(nil)
        failures.append("error: \(error)")
      }
    }
    var perOperation = [[Double]](repeating: [], count: variants.count)
    var allocations = [[Double]](repeating: [], count: variants.count)
    for _ in 0..<options.repetitions {
      for (index, variant) in variants.enumerated() {
        guard let count = iterations[index], failures[index] == nil else { continue }
        do {
          let (elapsed, allocated) = try await time(count, variant.body)
          perOperation[index].append(elapsed / Double(count))
          if let allocated { allocations[index].append(Double(allocated) / Double(count)) }
        } catch {
          failures[index] = "error: \(error)"
        }
      }
    }
    var measurements: [Measurement?] = []
    for (index, variant) in variants.enumerated() {
      guard let count = iterations[index], failures[index] == nil else {
        skip(scenario, variant.name, because: failures[index] ?? "not measured")
        measurements.append(nil)
        continue
      }
      let sorted = perOperation[index].sorted()
      let measurement = Measurement(
        nanosecondsPerOperation: median(sorted),
        fastest: sorted.first ?? 0,
        slowest: sorted.last ?? 0,
        allocationsPerOperation: allocations[index].min(),
        iterations: count)
      let baselineRow = rows.first { row in
        row.scenario == scenario && (baseline.map { row.variant == $0 } ?? true)
      }
      let ratio = baselineRow?.measurement.map {
        measurement.nanosecondsPerOperation / Swift.max($0.nanosecondsPerOperation, 1e-9)
      }
      rows.append(
        ReportRow(
          scenario: scenario, variant: variant.name, measurement: measurement, ratio: ratio,
          note: variant.note))
      measurements.append(measurement)
    }
    return measurements
  }

  /// Adds a row that has no measurement: a variant that cannot run yet, and why.
  func skip(_ scenario: String, _ variant: String, because reason: String) {
    rows.append(
      ReportRow(
        scenario: scenario, variant: variant, measurement: nil, ratio: nil,
        note: shortened(reason)))
  }

  /// Sets the note of the last row.
  func annotateLastRow(_ note: String) {
    guard !rows.isEmpty else { return }
    rows[rows.count - 1].note = note
  }

  /// Records a target and whether it holds.
  func addFinding(_ target: String, measured: String, verdict: TargetFinding.Verdict) {
    findings.append(TargetFinding(target: target, measured: measured, verdict: verdict))
  }

  /// Records a target and whether it holds, from a condition.
  func addFinding(_ target: String, measured: String, holds: Bool) {
    addFinding(target, measured: measured, verdict: holds ? .holds : .fails)
  }

  /// Adds a table of its own, printed after the main table.
  func addTable(_ title: String, _ table: ReportTable) {
    extraTables.append((title, table))
  }

  /// Adds a remark printed after the tables.
  func addRemark(_ remark: String) {
    remarks.append(remark)
  }

  /// Finds how many operations make a repetition of about the configured time; the runs
  /// also warm caches and the allocator.
  private func calibrate(_ body: (Int) async throws -> Void) async throws -> Int {
    let target = options.repetitionNanoseconds
    var iterations = 1
    while true {
      let elapsed = try await time(iterations, body).nanoseconds
      if elapsed >= target / 2 || iterations >= 1 << 40 {
        return Swift.max(1, Int(Double(iterations) * target / Swift.max(elapsed, 1)))
      }
      let factor = elapsed <= 0 ? 10 : Swift.min(10, Swift.max(2, target / elapsed))
      iterations = Int(Double(iterations) * factor)
    }
  }

  /// Times one repetition: nanoseconds, and allocations when the counter is loaded.
  private func time(
    _ iterations: Int, _ body: (Int) async throws -> Void
  ) async throws -> (nanoseconds: Double, allocations: UInt64?) {
    let allocationsBefore = AllocationCounter.count()
    let start = ContinuousClock.now
    try await body(iterations)
    let elapsed = start.duration(to: .now)
    let allocationsAfter = AllocationCounter.count()
    var allocations: UInt64?
    if let allocationsBefore, let allocationsAfter {
      allocations = allocationsAfter &- allocationsBefore
    }
    return (elapsed.nanoseconds, allocations)
  }
}

/// The first line of a text, at most 120 characters, for a table cell.
func shortened(_ text: String) -> String {
  let line = text.prefix { $0 != "\n" }
  let isCut = line.count > 120 || line.count < text.count
  return String(line.prefix(120)) + (isCut ? " …" : "")
}

/// The median of sorted values (0 for none).
func median(_ sorted: [Double]) -> Double {
  guard !sorted.isEmpty else { return 0 }
  let middle = sorted.count / 2
  return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

/// The value at a fraction (0…1) of sorted values, nearest rank (0 for none).
func percentile(_ sorted: [Double], _ fraction: Double) -> Double {
  guard !sorted.isEmpty else { return 0 }
  let rank = Int((fraction * Double(sorted.count)).rounded(.up)) - 1
  return sorted[Swift.min(Swift.max(rank, 0), sorted.count - 1)]
}

extension Duration {
  /// The duration in nanoseconds, as a floating-point number.
  var nanoseconds: Double {
    let (seconds, attoseconds) = components
    return Double(seconds) * 1e9 + Double(attoseconds) / 1e9
  }
}
