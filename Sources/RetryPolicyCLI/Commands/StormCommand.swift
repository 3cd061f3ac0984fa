import Foundation
import RetryPolicy
import RetryPolicyEngines
import RetryPolicySimulation

/// `retry-policy storm POLICY… --clients N --outage START+LENGTH …`: simulates a fleet of
/// clients retrying against one backend through an outage, one run per policy, and compares
/// them as a table, JSON, a terminal chart and an SVG chart.
enum StormCommand: Subcommand {
  static let spec = CommandSpec(
    name: "storm",
    abstract: "simulate a fleet of clients retrying through an outage",
    usage: [
      "storm '<policy>'… [--clients <n>] [--rate <r>] [--capacity <c>] [--outage <start+length>] [options]",
      "storm --file <file> [--policy <name>] ['<policy>'…] [options]",
    ],
    discussion: """
      Simulates, on virtual time, CLIENTS clients each sending RATE requests per second
      (Poisson arrivals) to one backend that serves CAPACITY attempts per second, once
      per policy, and reports what the backend saw: attempts per request (amplification),
      overall and during the outage; the part of the requests that succeeded; latency of
      successful requests; peak load over any 100 ms as a multiple of capacity; recovery
      time after the outage (until every later second's requests succeed at 99 %).

      Every retry decision is the library's own (rules, jitter, budget, within). Each
      client has its own budget. The backend queues work; an attempt unanswered after
      the client's timeout (the policy's 'timeout', else --timeout) fails with 'timeout'
      and its work stays queued. During the outage each attempt fails fast with
      'serverError' (all of them, or --failure-rate of them; attempts in flight when it
      starts fail too), or with --slowdown F the backend is F times slower.

      Defaults: 1000 clients, 1 request/s, capacity 1.5 × clients × rate, no outage,
      duration 120s or the outage's end + 60s, latency 50ms, timeout 1s, seed 1. The
      same options and seed give the same output, byte for byte.

      '--metrics FILE' writes the metrics every simulated request's run recorded (the
      families of RetryMetrics, on virtual time) as OpenMetrics text: a dashboard can be
      built before deployment. A policy is labelled by its name; one given as text is
      'anonymous', or, when several are compared, its text.
      """,
    options: Options.optionSpecs,
    minimumArguments: 0, maximumArguments: nil, argumentName: "policy",
    examples: [
      (
        "retry-policy storm 'retry 3 immediately' 'retry 3 backoff 100ms jitter full budget 10%' --clients 1000 --outage 30s+60s",
        "Compare two policies through a one-minute outage."
      ),
      (
        "retry-policy storm 'retry 3 immediately' 'retry 3 budget 10%' --outage 30s+30s --slowdown 4 --svg storm.svg",
        "A slowdown: does the fleet recover once it ends? Also draw it."
      ),
    ],
    exitStatuses: [
      (0, "the simulation ran"),
      (1, "invalid policy, or a policy that retries without end"),
      (2, "usage error, unreadable file, or output that cannot be written"),
    ])

  static func run(_ options: Options, context: CommandContext) async -> Int32 {
    let output = context.output
    let scenario: StormScenario
    switch StormOptions.scenario(from: options) {
    case .success(let value): scenario = value
    case .failure(let error):
      context.usageError(error)
      return ExitStatus.usage
    }
    // A scenario past the simulator's limits, or whose outage it cannot measure, is refused
    // before any work.
    do {
      try scenario.check()
    } catch {
      context.usageError(.other(error.description))
      return ExitStatus.usage
    }
    var policies: [(name: String, policy: CompiledPolicy)] = []
    if options.selection.file != nil {
      switch PolicyInput.resolvePolicy(options.selection, words: [], context: context) {
      case .exit(let status): return status
      case .policy(let compiled):
        let prefix = compiled.name.map { "\($0): " } ?? ""
        policies.append((prefix + compiled.description, compiled))
      }
    }
    for text in options.arguments {
      let analysis = analyze(policy: text)
      PolicyInput.printDiagnostics(
        analysis.diagnostics, source: text, name: PolicyInput.commandLineName, context: context)
      if analysis.hasErrors { return ExitStatus.failure }
      guard let policy = analysis.policies.first else { return ExitStatus.failure }
      policies.append((text.trimmingCharacters(in: .whitespacesAndNewlines), policy))
    }
    guard !policies.isEmpty else {
      context.usageError(.missingArgument("policy (or '--file')"))
      return ExitStatus.usage
    }
    var results: [StormResult] = []
    let simulation = StormSimulation(scenario: scenario)
    let metrics = options.metricsPath.map { _ in RetryMetrics() }
    for (name, policy) in policies {
      var labelled = policy
      if labelled.name == nil, policies.count > 1 { labelled.name = name }
      do {
        var result = try simulation.run(labelled, metrics: metrics)
        result.name = name
        results.append(result)
      } catch {
        output.error("'\(name)': \(error)")
        return ExitStatus.failure
      }
    }
    if let path = options.svgPath {
      let svg = StormSVG.render(results, scenario: scenario)
      let written = context.fileReplacement.write(
        context.pathBytes(path), contents: Array(svg.utf8))
      if case .failure(let failure) = written {
        output.error("cannot write '\(path)': \(failure.reason)")
        return ExitStatus.usage
      }
    }
    if let path = options.metricsPath, let metrics {
      let written = context.fileReplacement.write(
        context.pathBytes(path), contents: Array(metrics.openMetricsText().utf8))
      if case .failure(let failure) = written {
        output.error("cannot write '\(path)': \(failure.reason)")
        return ExitStatus.usage
      }
    }
    if options.isJSON {
      output.write(JSONWriter().write(StormRendering.jsonValue(results)) + "\n")
    } else {
      output.write(
        StormRendering.text(results, scenario: scenario, usesColor: output.outputUsesColor))
    }
    return ExitStatus.success
  }
}
