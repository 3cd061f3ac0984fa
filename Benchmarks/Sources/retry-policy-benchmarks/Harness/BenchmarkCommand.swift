/// One scenario: a name for `--filter`, and the code that measures its variants.
struct Scenario: Sendable {
  var name: String
  var summary: String
  var run: @Sendable (Benchmark) async -> Void
}

/// The entry point: reads the options, runs the selected scenarios, prints the report.
enum BenchmarkCommand {
  /// Every scenario, in the order they run.
  static let scenarios: [Scenario] = [
    SuccessPathScenario.scenario,
    RunPathScenario.scenario,
    ImmediateRetryScenario.scenario,
    JitteredRetryScenario.scenario,
    ClassificationScenario.scenario,
    HTTPScenario.scenario,
    CompileScenario.scenario,
    PolicyFileScenario.scenario,
    ConcurrentWaitsScenario.scenario,
    HostileInputScenario.scenario,
    TimeoutMemoryScenario.scenario,
    WaitMemoryScenario.scenario,
    ConcurrentRetryWaitsScenario.scenario,
    ClassificationSizesScenario.scenario,
    LanguageServerScenario.scenario,
    StormBenchmarkScenario.scenario,
    PolicyStoreScenario.scenario,
    CircuitBreakerScenario.scenario,
    MetricsScenario.scenario,
    CircuitBreakerGroupScenario.scenario,
    SheddingScenario.scenario,
  ]

  static func main(arguments: [String]) async {
    switch BenchmarkOptions.parse(arguments) {
    case .help:
      print(BenchmarkOptions.usage)
    case .list:
      for scenario in scenarios {
        print("\(scenario.name): \(scenario.summary)")
      }
    case .usageError(let message):
      printError("retry-policy-benchmarks: \(message)\n\(BenchmarkOptions.usage)")
      Platform.exit(2)
    case .run(let options):
      let selected = scenarios.filter { scenario in
        options.filter.map { scenario.name.contains($0) } ?? true
      }
      guard !selected.isEmpty else {
        let names = scenarios.map(\.name).joined(separator: ", ")
        printError("retry-policy-benchmarks: no scenario matches the filter; the names: \(names)")
        Platform.exit(2)
      }
      let benchmark = Benchmark(options: options)
      print(conditions(options))
      for scenario in selected {
        printError("running \(scenario.name)…")
        await scenario.run(benchmark)
      }
      print()
      print(report(benchmark))
    }
  }

  /// The conditions of the run, printed before the tables.
  static func conditions(_ options: BenchmarkOptions) -> String {
    #if DEBUG
      let configuration = "debug (timings are not meaningful: build with -c release)"
    #else
      let configuration = "release"
    #endif
    let cores = Platform.processorCount
    let counter =
      AllocationCounter.isAvailable
      ? "malloc counter loaded" : "malloc counter not loaded (allocations n/a; see .ci/bench)"
    let repetitions =
      "\(options.repetitions) repetitions of ~\(Int(options.repetitionNanoseconds / 1e6)) ms"
    return "retry-policy benchmarks: \(configuration), \(cores) cores, \(repetitions), \(counter)"
  }

  /// The main table, the extra tables, the targets and the remarks.
  static func report(_ benchmark: Benchmark) -> String {
    var table = ReportTable(
      headers: ["scenario", "variant", "time/op", "spread", "allocs/op", "vs baseline", "note"],
      alignments: [.left, .left, .right, .right, .right, .right, .left])
    for row in benchmark.rows {
      guard let measurement = row.measurement else {
        table.append([row.scenario, row.variant, "—", "", "", "", row.note])
        continue
      }
      let spread =
        "\(Format.time(nanoseconds: measurement.fastest))–"
        + Format.time(nanoseconds: measurement.slowest)
      table.append([
        row.scenario, row.variant, Format.time(nanoseconds: measurement.nanosecondsPerOperation),
        spread, measurement.allocationsPerOperation.map(Format.count) ?? "n/a",
        row.ratio.map(Format.ratio) ?? "", row.note,
      ])
    }
    var sections = benchmark.rows.isEmpty ? [] : [table.render()]
    for (title, extra) in benchmark.extraTables {
      sections.append("\(title)\n\n\(extra.render())")
    }
    if !benchmark.findings.isEmpty {
      var targets = ReportTable(
        headers: ["target", "measured", "holds"], alignments: [.left, .left, .left])
      for finding in benchmark.findings {
        let verdict: String
        switch finding.verdict {
        case .holds: verdict = "yes"
        case .fails: verdict = "NO"
        case .notMeasured: verdict = "not measured"
        }
        targets.append([finding.target, finding.measured, verdict])
      }
      sections.append("Targets\n\n\(targets.render())")
    }
    if !benchmark.remarks.isEmpty {
      sections.append(benchmark.remarks.map { "- \($0)" }.joined(separator: "\n"))
    }
    return sections.joined(separator: "\n\n")
  }
}

/// Writes a line to standard error (progress and usage errors; the report goes to standard
/// output).
func printError(_ line: String) {
  Platform.writeToStandardError(line + "\n")
}
