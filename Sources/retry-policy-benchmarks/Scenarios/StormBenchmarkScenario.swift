import RetryPolicy
import RetryPolicySimulation

/// `retry-policy storm`'s simulator: a fleet at 1 request per second for 10 simulated minutes,
/// through a one-minute outage; the cost per request must not grow with the fleet.
enum StormBenchmarkScenario {
  static let name = "storm"
  static let policies = ["retry 3 backoff 100ms jitter full budget 10%", "retry 3 immediately"]

  static let scenario = Scenario(
    name: name,
    summary:
      "storm simulator: 1,000 and 10,000 clients × 1 req/s × 1 and 10 min, an outage "
      + "from a fifth of the time for a tenth of it (time/request is CPU time)"
  ) { benchmark in
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
      guard let policy = try? compile(policy: text) else {
        benchmark.addRemark("\(name): '\(text)' does not compile")
        continue
      }
      for (clients, minutes) in fleets {
        var scenario = StormScenario()
        scenario.clients = clients
        scenario.capacity = Double(clients) * 1.5
        scenario.duration = Int64(minutes) * 60_000_000_000
        scenario.outageStart = scenario.duration / 5
        scenario.outageLength = scenario.duration / 10
        let clock = ContinuousClock()
        let start = clock.now
        let processorStart = Platform.threadProcessorNanoseconds
        guard let result = try? StormSimulation(scenario: opaque(scenario)).run(policy) else {
          benchmark.addRemark("\(name): '\(text)' stopped at the limit of attempts")
          continue
        }
        let elapsed = start.duration(to: clock.now)
        let processor = Platform.threadProcessorNanoseconds.flatMap { end in
          processorStart.map { end - $0 }
        }
        let nanoseconds =
          Double(elapsed.components.seconds) * 1e9 + Double(elapsed.components.attoseconds) / 1e9
        blackHole(result)
        // The machine may be shared: the thread's processor time is what the run costs.
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
