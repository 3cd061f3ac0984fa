import Foundation
import RetryPolicy
import RetryPolicyEngines
import RetryPolicySimulation

/// `retry-policy simulate POLICY --outcomes …`: runs the policy through the real runtime on
/// virtual time against an operation that fails as scripted, and prints the timeline.
enum SimulateCommand: Subcommand {
  static let spec = CommandSpec(
    name: "simulate",
    abstract: "run a policy on virtual time against scripted failures",
    usage: [
      "simulate '<policy>' [--outcomes <list>] [--seed <n>] [--json | --metrics]",
      "simulate --file <file> [--policy <name>] [--outcomes <list>] [--seed <n>] [--json | --metrics]",
    ],
    discussion: """
      Runs the policy with the library's own runtime on a virtual clock (no real waiting)
      around an operation whose attempts end as the outcomes say, and prints a timeline:
      each attempt, when it started, its outcome, the runtime's decision and the wait before
      the next attempt; then the final result.

      Outcomes, comma-separated:
        ok            the attempt succeeds
        CLASS         the attempt fails with an error of that class (serverError, timeout…)
        cancel        the attempt throws CancellationError, never retried, even by a
                      rule naming it (also written CancellationError)
        X*N           X happens N times in a row: serverError*3
        CLASS@D       the error carries a Retry-After of D: serverError@5s
        X~D           the attempt takes D of virtual time: ok~200ms, serverError~2s
      When the list runs out, its last outcome repeats ('serverError' fails every attempt).
      Without '--outcomes', every attempt fails with the first class the first rule
      retries on ('error' when it retries any error).

      Jitter draws from a seeded generator: '--seed N' repeats a run exactly; without it
      a seed is chosen and printed.

      '--metrics' prints, instead of the timeline, the metrics the run recorded (the
      families of RetryMetrics, durations on the virtual clock) as OpenMetrics text.
      """,
    options: Options.optionSpecs,
    minimumArguments: 0, maximumArguments: nil, argumentName: "policy",
    examples: [
      (
        "retry-policy simulate 'retry 5 on serverError backoff 1s x1.5 jitter 10%' --outcomes serverError*2,ok --seed 7",
        "Two failures, then success: the waits and the time it took."
      ),
      (
        "retry-policy simulate 'retry forever backoff 1s within 30s' --outcomes serverError",
        "A server that stays down: when does 'within' stop the retries?"
      ),
      (
        "retry-policy simulate 'retry 3 on serverError' --outcomes badRequest",
        "An error no rule matches is thrown at once."
      ),
    ],
    exitStatuses: [
      (0, "the simulated operation finally succeeded"),
      (1, "the run failed (retries ran out, or an error was not retried), or invalid policy"),
      (2, "usage error, unreadable file, or output that cannot be written"),
    ])

  /// The options of `simulate`.
  struct Options: CommandOptions {
    var script: OutcomeScript?
    var seed: UInt64?
    var isJSON = false
    var isMetrics = false
    var selection = PolicySelection()
    var arguments: [String] = []

    static var declarations: [OptionDeclaration<Self>] {
      [
        .option(
          "outcomes", value: "LIST", help: "What each attempt does (see above).", \.script,
          ValueParser(expected: "a list of outcomes", reading: OutcomeScript.parseOption)),
        .option(
          "seed", value: "N", help: "Seed of the jitter's random numbers (0 or more).", \.seed,
          .seed),
        .flag("json", help: "Print the timeline as JSON.", \.isJSON),
        .flag(
          "metrics", help: "Print the run's metrics (OpenMetrics text) instead.", \.isMetrics),
      ] + .group(\.selection)
    }

    func validate() throws(UsageError) {
      if isJSON, isMetrics { throw .other("'--json' and '--metrics' cannot be used together") }
      try selection.validate()
    }
  }

  static func run(_ options: Options, context: CommandContext) async -> Int32 {
    let output = context.output
    let script = options.script
    let seed = options.seed
    let policy: CompiledPolicy
    switch PolicyInput.resolvePolicy(options.selection, words: options.arguments, context: context)
    {
    case .exit(let status): return status
    case .policy(let compiled): policy = compiled
    }
    let outcomes = script ?? defaultScript(for: policy)
    let chosenSeed = seed ?? UInt64.random(in: 0...UInt64(UInt32.max))
    var simulation = Simulation(policy: policy, script: outcomes, seed: chosenSeed)
    let metrics = options.isMetrics ? RetryMetrics() : nil
    simulation.metrics = metrics
    guard let timeline = await simulation.run() else {
      output.error("internal error: the simulation did not finish")
      return ExitStatus.failure
    }
    if let metrics {
      output.write(metrics.openMetricsText())
    } else if options.isJSON {
      output.write(JSONWriter().write(SimulationRendering.jsonValue(timeline)) + "\n")
    } else {
      output.write(SimulationRendering.text(timeline, usesColor: output.outputUsesColor))
    }
    return timeline.succeeded ? ExitStatus.success : ExitStatus.failure
  }

  /// Every attempt fails with the first class the first rule names (`error` for any).
  static func defaultScript(for policy: CompiledPolicy) -> OutcomeScript {
    let name = policy.rules.first?.errorClasses.first { $0 != "any" } ?? "error"
    return OutcomeScript(
      steps: [(OutcomeScript.Outcome(kind: .failure(errorClass: name)), 1)])
  }
}

extension OutcomeScript {
  /// Reads the `--outcomes` text; its error is a usage error with the script's message.
  static func parseOption(_ text: String) throws(UsageError) -> OutcomeScript {
    do {
      return try parse(text)
    } catch {
      throw .other(error.message)
    }
  }
}
