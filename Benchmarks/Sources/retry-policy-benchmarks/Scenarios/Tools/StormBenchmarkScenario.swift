import Foundation

/// `retry-policy storm` (the release binary given by `--tool`, run as a child process): a
/// fleet at 1 request per second for 10 simulated minutes, through a one-minute outage; the
/// cost per request must not grow with the fleet.
enum StormBenchmarkScenario {
  static let name = "storm"
  static let policies = ["retry 3 backoff 100ms jitter full budget 10%", "retry 3 immediately"]

  static let scenario = Scenario(
    name: name,
    summary:
      "retry-policy storm: 1,000 and 10,000 clients × 1 req/s × 1 and 10 min, an outage "
      + "from a fifth of the time for a tenth of it (time/request is the child's CPU time)"
  ) { benchmark in
    guard let tool = benchmark.options.toolPath else {
      benchmark.skip(name, "every variant", because: "needs --tool PATH (.ci/bench passes it)")
      return
    }
    var table = ReportTable(
      headers: [
        "policy", "clients", "minutes", "requests", "attempts", "time", "CPU time", "time/request",
      ],
      alignments: [.left, .right, .right, .right, .right, .right, .right, .right])
    // (clients, simulated minutes): the last two differ only in the number of requests.
    let fleets =
      benchmark.options.isQuick
      ? [(1000, 1), (2000, 1), (2000, 2)]
      : [
        (1000, 10), (10_000, 1), (10_000, 10),
      ]
    var perRequest: [String: [Double]] = [:]
    var largest: [Double] = []
    for text in policies {
      for (clients, minutes) in fleets {
        let seconds = minutes * 60
        let arguments = [
          "storm", text, "--clients", String(clients), "--rate", "1",
          "--capacity", String(clients * 3 / 2), "--duration", "\(seconds)s",
          "--outage", "\(seconds / 5)s+\(seconds / 10)s", "--json",
        ]
        guard let run = try? ChildRun(tool: tool, arguments: arguments),
          let result = run.stormResult
        else {
          benchmark.addRemark("\(name): '\(text)' failed for \(clients) clients")
          continue
        }
        let elapsed = run.elapsed
        let processor = run.processorNanoseconds
        let nanoseconds =
          Double(elapsed.components.seconds) * 1e9 + Double(elapsed.components.attoseconds) / 1e9
        // The machine may be shared: the child's processor time is what the run costs.
        let cost = processor ?? nanoseconds
        perRequest[text, default: []].append(cost / Double(result.offered))
        if clients == fleets.last?.0, minutes == fleets.last?.1 { largest.append(cost) }
        table.append([
          text, Format.integer(clients), String(minutes), Format.integer(result.offered),
          Format.integer(result.attempts), Format.time(nanoseconds: nanoseconds),
          processor.map { Format.time(nanoseconds: $0) } ?? "n/a",
          Format.time(nanoseconds: cost / Double(result.offered)),
        ])
      }
    }
    benchmark.addTable("Storm simulator: one run per fleet and duration", table)
    let target = "storm: 10,000 clients × 1 req/s × 10 min (6M requests) < 5 s, linear"
    guard !benchmark.options.isQuick, largest.count == policies.count else {
      benchmark.addFinding(target, measured: "not measured (--quick)", verdict: .notMeasured)
      return
    }
    let slowest = largest.max() ?? 0
    let growth =
      perRequest.values.map { costs in
        (costs.last ?? 0) / max(costs.dropLast().last ?? 1, 1)
      }.max() ?? 0
    benchmark.addFinding(
      target,
      measured:
        "\(Format.time(nanoseconds: slowest)) CPU time at most; time/request "
        + "\(Format.ratio(growth)) from 1 to 10 minutes of 10,000 clients",
      holds: slowest < 5e9 && growth < 1.5)
  }
}

/// One run of the tool as a child process: its output, its wall time and processor time.
struct ChildRun {
  /// Standard output.
  var output: Data
  /// From start to exit.
  var elapsed: Duration
  /// The processor time of the child (user and system), when the system tells it.
  var processorNanoseconds: Double?

  /// Runs `tool` with `arguments` to its end.
  init(tool: String, arguments: [String]) throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: tool)
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = FileHandle.nullDevice
    let before = Platform.childrenProcessorNanoseconds
    let clock = ContinuousClock()
    let start = clock.now
    try process.run()
    output = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    elapsed = start.duration(to: clock.now)
    processorNanoseconds = Platform.childrenProcessorNanoseconds.flatMap { after in
      before.map { after - $0 }
    }
  }

  /// `offered` and `attempts` of the first policy of `storm --json`.
  var stormResult: (offered: Int, attempts: Int)? {
    guard let object = try? JSONSerialization.jsonObject(with: output) as? [String: Any],
      let policies = object["policies"] as? [[String: Any]], let first = policies.first,
      let offered = first["offered"] as? Int, let attempts = first["attempts"] as? Int
    else { return nil }
    return (offered, attempts)
  }
}
