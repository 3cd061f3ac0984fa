import Foundation
import RetryPolicy
import RetryPolicySimulation

/// A complaint about a REPL command's argument, shown as `error: TEXT`.
struct ReplFailure: Error, Sendable, Hashable {
  /// The message: a lowercase phrase without a final period.
  var text: String
}

/// How the REPL shows a compiled policy: its explanation, its JSON and a simulated run.
///
/// These are the renderers of `explain`, `explain --json` and `simulate`, so the REPL shows
/// exactly what those commands show.
enum ReplRendering {
  /// The seed of `:simulate`'s jitter: fixed, so the same command gives the same timeline.
  static let simulationSeed: UInt64 = 1

  /// The policy's compiled form and its table of delays, as `explain` shows it.
  static func explain(_ policy: CompiledPolicy, usesColor: Bool) -> String {
    ExplainRendering.text(policy, usesColor: usesColor)
  }

  /// The policy as `explain --json` writes it.
  static func json(_ policy: CompiledPolicy) -> String {
    ExplainRendering.json(policy)
  }

  /// Runs the policy on virtual time against scripted outcomes, as `simulate --outcomes`
  /// does; the outcomes may be separated by commas or blanks: `serverError*2, ok`.
  static func simulate(
    _ policy: CompiledPolicy, outcomes text: String, usesColor: Bool
  ) async -> Result<String, ReplFailure> {
    let items = text.split { $0 == "," || $0 == " " || $0 == "\t" }
    let script: OutcomeScript
    do {
      script = try OutcomeScript.parse(items.joined(separator: ","))
    } catch {
      let message = error.message.replacingOccurrences(of: "'--outcomes ", with: "':simulate ")
      return .failure(ReplFailure(text: message))
    }
    let simulation = Simulation(policy: policy, script: script, seed: simulationSeed)
    guard let timeline = await simulation.run() else {
      return .failure(ReplFailure(text: "the simulation did not finish"))
    }
    return .success(SimulationRendering.text(timeline, usesColor: usesColor))
  }
}
