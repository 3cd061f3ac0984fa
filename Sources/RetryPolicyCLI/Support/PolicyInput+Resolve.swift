import Foundation
import RetryPolicy

// The policy a command works on: from the command line, standard input or a policy file, with
// its diagnostics printed.
extension PolicyInput {
  /// The outcome of finding the one policy a command works on.
  enum Resolution {
    /// The compiled policy, and the warnings already printed.
    case policy(CompiledPolicy)
    /// Something went wrong and was reported; exit with this status.
    case exit(Int32)
  }

  /// A policy named on the command line with where it came from: its text and the ranges of
  /// its rules and clauses, for diagnostics about it (such as an export's warnings).
  struct ResolvedPolicy {
    /// The compiled policy and its source ranges.
    var checked: CheckedPolicy
    /// The text it was read from: a file's bytes, or the command line's text.
    var source: [UInt8]
    /// The name diagnostics give the text: the file's path, or `<policy>`.
    var sourceName: String
  }

  /// What resolving a policy with its source gives.
  enum SourcedResolution {
    /// The policy and its source, and the warnings already printed.
    case policy(ResolvedPolicy)
    /// Something went wrong and was reported; exit with this status.
    case exit(Int32)
  }

  /// ``resolveSourcedPolicy(_:words:context:)``, without the source.
  static func resolvePolicy(
    _ selection: PolicySelection, words: [String], context: CommandContext
  ) -> Resolution {
    switch resolveSourcedPolicy(selection, words: words, context: context) {
    case .policy(let resolved): .policy(resolved.checked.policy)
    case .exit(let status): .exit(status)
    }
  }

  /// The policy named on the command line: `POLICY…` (words joined with spaces, so quotes
  /// are optional), `-` for standard input, or `--file F [--policy NAME]`.
  ///
  /// Prints diagnostics (warnings too) to standard error. Exit statuses: 1 for an invalid
  /// policy, a file with errors, or an unknown `--policy` name; 2 for a usage error or an
  /// unreadable file.
  static func resolveSourcedPolicy(
    _ selection: PolicySelection, words: [String], context: CommandContext
  ) -> SourcedResolution {
    let output = context.output
    if let path = selection.file {
      if let extra = words.first {
        context.usageError(
          .other("give either a policy or '--file', not both (unexpected '\(extra)')"))
        return .exit(ExitStatus.usage)
      }
      return resolvePolicy(inFile: path, named: selection.policyName, context: context)
    }
    guard !words.isEmpty else {
      context.usageError(.missingArgument("policy (or '--file')"))
      return .exit(ExitStatus.usage)
    }
    if words.count > 1, words.contains("-") {
      context.usageError(.other("'-' (standard input) must be the only policy"))
      return .exit(ExitStatus.usage)
    }
    let source: String
    if words == ["-"] {
      switch context.standardInputText() {
      case .success(let text): source = text
      case .failure(let error):
        output.error(standardInputMessage(error))
        return .exit(ExitStatus.usage)
      }
    } else {
      source = words.joined(separator: " ")
    }
    let analysis = analyze(policy: source)
    printDiagnostics(
      analysis.diagnostics, source: source, name: commandLineName, context: context)
    if analysis.hasErrors { return .exit(ExitStatus.failure) }
    guard let checked = analysis.checked.first else {
      output.error("internal error: the policy compiled to nothing")
      return .exit(ExitStatus.failure)
    }
    return .policy(
      ResolvedPolicy(checked: checked, source: Array(source.utf8), sourceName: commandLineName))
  }

  private static func resolvePolicy(
    inFile path: String, named name: String?, context: CommandContext
  ) -> SourcedResolution {
    let output = context.output
    let source: [UInt8]
    switch readFileBytes(path, context: context) {
    case .success(let bytes): source = bytes
    case .failure(let error):
      error.report(to: output)
      return .exit(ExitStatus.usage)
    }
    // Bytes, not a string: bytes that are not UTF-8 are errors, not U+FFFD.
    let analysis = analyze(policyFile: source)
    printDiagnostics(analysis.diagnostics, bytes: source, name: path, context: context)
    if analysis.hasErrors { return .exit(ExitStatus.failure) }
    let names = analysis.policies.compactMap(\.name)
    guard let name else {
      if analysis.checked.count == 1, let only = analysis.checked.first {
        return .policy(ResolvedPolicy(checked: only, source: source, sourceName: path))
      }
      if analysis.policies.isEmpty {
        output.error("'\(path)' has no policies")
        return .exit(ExitStatus.failure)
      }
      context.usageError(
        .other(
          "'\(path)' has several policies; choose one with '--policy': "
            + names.joined(separator: ", ")))
      return .exit(ExitStatus.usage)
    }
    if let checked = analysis.checked.first(where: { $0.policy.name == name }) {
      return .policy(ResolvedPolicy(checked: checked, source: source, sourceName: path))
    }
    let suggestion = Suggestion.nearest(to: name, in: names)
    output.error(
      "no policy '\(name)' in '\(path)'"
        + (suggestion.map { "; did you mean '\($0)'?" } ?? "")
        + (suggestion == nil && !names.isEmpty
          ? " (it has " + names.map { "'\($0)'" }.joined(separator: ", ") + ")" : ""))
    return .exit(ExitStatus.failure)
  }

  /// Renders diagnostics with their source lines to standard error.
  static func printDiagnostics(
    _ diagnostics: [Diagnostic], source: String, name: String, context: CommandContext
  ) {
    guard !diagnostics.isEmpty else { return }
    let renderer = DiagnosticRenderer(
      source: source, sourceName: name, usesColor: context.output.errorUsesColor)
    context.output.writeError(renderer.render(diagnostics))
  }

  /// Renders diagnostics about a text read as bytes (which may not be UTF-8) to standard error.
  static func printDiagnostics(
    _ diagnostics: [Diagnostic], bytes: [UInt8], name: String, context: CommandContext
  ) {
    guard !diagnostics.isEmpty else { return }
    let renderer = DiagnosticRenderer(
      bytes: bytes, sourceName: name, usesColor: context.output.errorUsesColor)
    context.output.writeError(renderer.render(diagnostics))
  }
}
