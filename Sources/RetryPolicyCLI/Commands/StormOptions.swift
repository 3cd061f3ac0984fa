import RetryPolicy
import RetryPolicySimulation

extension StormCommand {
  /// The options of `storm`, each checked against its range as it is read.
  struct Options: CommandOptions {
    var clients: Int?
    var rate: Double?
    var capacity: Double?
    var outage: OutageWindow?
    var failureRate: Double?
    var slowdown: Double?
    var duration: Duration?
    var latency: Duration?
    var timeout: Duration?
    var seed: UInt64?
    var isJSON = false
    var svgPath: String?
    var metricsPath: String?
    var selection = PolicySelection()
    var arguments: [String] = []

    static var declarations: [OptionDeclaration<Self>] {
      [
        .option(
          "clients", value: "N", help: "Number of clients (1 to 1000000).", \.clients,
          .integer(in: 1...1_000_000)),
        .option(
          "rate", value: "R", help: "Requests per second per client.", \.rate,
          .decimal(in: 0.001...1_000_000)),
        .option(
          "capacity", value: "C", help: "Attempts per second the backend serves.", \.capacity,
          .decimal(in: 0.001...1_000_000_000)),
        .option(
          "outage", value: "START+LENGTH", help: "The outage window: 30s+60s.", \.outage,
          .outageWindow),
        .option(
          "failure-rate", value: "P%", help: "Part of attempts failing in the outage.",
          \.failureRate, .percentage),
        .option(
          "slowdown", value: "F", help: "The backend is F times slower in the outage.",
          \.slowdown, .decimal(in: 1...1000)),
        .option(
          "duration", value: "D", help: "How long clients send requests: 10m.", \.duration,
          .duration(example: "10m")),
        .option(
          "latency", value: "D", help: "Mean service time of an attempt (50ms).", \.latency,
          .duration(example: "50ms")),
        .option(
          "timeout", value: "D", help: "Client's attempt timeout without 'timeout' (1s).",
          \.timeout, .duration(example: "1s")),
        .option("seed", value: "S", help: "Seed of every random draw (0 or more).", \.seed, .seed),
        .flag("json", help: "Print the report as JSON.", \.isJSON),
        .option("svg", value: "FILE", help: "Also write an SVG chart to FILE.", \.svgPath, .text),
        .option(
          "metrics", value: "FILE",
          help: "Also write the runs' metrics to FILE (OpenMetrics text).", \.metricsPath, .text),
      ] + .group(\.selection)
    }

    func validate() throws(UsageError) {
      if outage == nil {
        if failureRate != nil { throw .other("'--failure-rate' needs '--outage'") }
        if slowdown != nil { throw .other("'--slowdown' needs '--outage'") }
      }
      try selection.validate()
    }
  }

  /// The outage of `--outage START+LENGTH`.
  struct OutageWindow: Sendable {
    var start: Duration
    var length: Duration
  }
}

extension ValueParser where Value == StormCommand.OutageWindow {
  /// `START+LENGTH`: two durations such as `30s+60s`.
  static var outageWindow: ValueParser {
    ValueParser(expected: "START+LENGTH, two durations such as 30s+60s", choices: nil) { text in
      let parts = text.split(separator: "+", omittingEmptySubsequences: false)
      guard parts.count == 2, let start = OutcomeScript.parseDuration(parts[0]),
        let length = OutcomeScript.parseDuration(parts[1])
      else { return nil }
      return StormCommand.OutageWindow(start: start, length: length)
    }
  }
}

/// Turns the options of `retry-policy storm` into its scenario, with the defaults that
/// depend on other options.
enum StormOptions {
  static func scenario(from options: StormCommand.Options) -> Result<StormScenario, UsageError> {
    var scenario = StormScenario()
    if let clients = options.clients { scenario.clients = clients }
    if let rate = options.rate { scenario.rate = rate }
    let offered = Double(scenario.clients) * scenario.rate
    scenario.capacity = options.capacity ?? offered * 1.5
    var outageEnd: Int64 = 0
    if let outage = options.outage {
      scenario.outageStart = nanoseconds(outage.start)
      scenario.outageLength = nanoseconds(outage.length)
      outageEnd = nanoseconds(outage.start) + nanoseconds(outage.length)
    }
    if let slowdown = options.slowdown { scenario.slowdown = slowdown }
    scenario.failureRate = options.failureRate ?? (options.slowdown != nil ? 0 : 1)
    scenario.duration = max(120_000_000_000, outageEnd + 60_000_000_000)
    if let duration = options.duration { scenario.duration = nanoseconds(duration) }
    if let latency = options.latency { scenario.latency = nanoseconds(latency) }
    if let timeout = options.timeout { scenario.timeout = nanoseconds(timeout) }
    if let seed = options.seed { scenario.seed = seed }
    // The simulator's own limits and the outage window: `StormScenario.check()`, in `run`.
    return .success(scenario)
  }

  /// A duration of at most 10000h (what `parseDuration` accepts), in nanoseconds.
  static func nanoseconds(_ duration: Duration) -> Int64 {
    let (seconds, attoseconds) = duration.components
    return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
  }
}
