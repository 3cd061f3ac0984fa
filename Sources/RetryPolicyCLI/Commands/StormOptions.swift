import RetryPolicy
import RetryPolicySimulation

/// Reads the scenario of `retry-policy storm` from its options, checking every range.
enum StormOptions {
  static func scenario(from arguments: ParsedArguments) -> Result<StormScenario, UsageError> {
    do {
      return .success(try read(arguments))
    } catch {
      return .failure(error)
    }
  }

  private static func read(_ arguments: ParsedArguments) throws(UsageError) -> StormScenario {
    var scenario = StormScenario()
    if let text = arguments.value("clients") {
      guard let value = Int(text), (1...1_000_000).contains(value) else {
        throw invalid("--clients", text, "a whole number from 1 to 1000000")
      }
      scenario.clients = value
    }
    if let text = arguments.value("rate") {
      scenario.rate = try number("--rate", text, in: 0.001...1_000_000)
    }
    let offered = Double(scenario.clients) * scenario.rate
    scenario.capacity = offered * 1.5
    if let text = arguments.value("capacity") {
      scenario.capacity = try number("--capacity", text, in: 0.001...1_000_000_000)
    }
    var outageEnd: Int64 = 0
    if let text = arguments.value("outage") {
      let parts = text.split(separator: "+", omittingEmptySubsequences: false)
      guard parts.count == 2, let start = OutcomeScript.parseDuration(parts[0]),
        let length = OutcomeScript.parseDuration(parts[1])
      else {
        throw invalid("--outage", text, "START+LENGTH, two durations such as 30s+60s")
      }
      scenario.outageStart = nanoseconds(start)
      scenario.outageLength = nanoseconds(length)
      outageEnd = nanoseconds(start) + nanoseconds(length)
    }
    let hasSlowdown = arguments.value("slowdown") != nil
    if let text = arguments.value("slowdown") {
      scenario.slowdown = try number("--slowdown", text, in: 1...1000)
    }
    scenario.failureRate = hasSlowdown ? 0 : 1
    if let text = arguments.value("failure-rate") {
      guard text.hasSuffix("%"), let value = Double(text.dropLast()), (0...100).contains(value)
      else {
        throw invalid("--failure-rate", text, "a percentage from 0% to 100%")
      }
      scenario.failureRate = value / 100
    }
    if arguments.value("outage") == nil {
      for option in ["failure-rate", "slowdown"] where arguments.value(option) != nil {
        throw .other("'--\(option)' needs '--outage'")
      }
    }
    scenario.duration = max(120_000_000_000, outageEnd + 60_000_000_000)
    if let text = arguments.value("duration") {
      guard let value = OutcomeScript.parseDuration(Substring(text)), value > .zero else {
        throw invalid("--duration", text, "a duration such as 10m")
      }
      scenario.duration = nanoseconds(value)
    }
    if let text = arguments.value("latency") {
      guard let value = OutcomeScript.parseDuration(Substring(text)), value > .zero else {
        throw invalid("--latency", text, "a duration such as 50ms")
      }
      scenario.latency = nanoseconds(value)
    }
    if let text = arguments.value("timeout") {
      guard let value = OutcomeScript.parseDuration(Substring(text)), value > .zero else {
        throw invalid("--timeout", text, "a duration such as 1s")
      }
      scenario.timeout = nanoseconds(value)
    }
    if let text = arguments.value("seed") {
      guard let value = UInt64(text) else {
        throw invalid("--seed", text, "a whole number from 0 to \(UInt64.max)")
      }
      scenario.seed = value
    }
    return scenario
  }

  private static func number(_ option: String, _ text: String, in range: ClosedRange<Double>)
    throws(UsageError) -> Double
  {
    guard let value = Double(text), value.isFinite, range.contains(value) else {
      throw invalid(
        option, text,
        "a number from \(NumberText.decimal(range.lowerBound)) to "
          + NumberText.decimal(range.upperBound))
    }
    return value
  }

  private static func invalid(_ option: String, _ value: String, _ expected: String) -> UsageError {
    .invalidValue(option: option, value: value, expected: expected, suggestion: nil)
  }

  /// A duration of at most 10000h (what `parseDuration` accepts), in nanoseconds.
  static func nanoseconds(_ duration: Duration) -> Int64 {
    let (seconds, attoseconds) = duration.components
    return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
  }
}
