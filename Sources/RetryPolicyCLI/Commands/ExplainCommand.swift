import RetryPolicy

/// `retry-policy explain POLICY`: the compiled form and the table of delays, as text or
/// (`--json`) as the contract's JSON object.
enum ExplainCommand: Subcommand {
  static let spec = CommandSpec(
    name: "explain",
    abstract: "show a policy's compiled form and its table of delays",
    usage: [
      "explain [--json] '<policy>'", "explain [--json] -",
      "explain [--json] --file <file> [--policy <name>]",
    ],
    discussion: """
      Prints the policy, then for each rule its compiled behavior, the number of attempts,
      the error classes, jitter, cap, hook and retry-after handling, a table of the delay
      before each retry with the range jitter can give and the worst-case time elapsed, and
      the worst-case total; then the policy-wide clauses (within, timeout, budget, hedge
      with the timeline of its attempt starts, and breaker). A range is '-' only when jitter
      cannot move the delay. With 'honoring retry-after' a
      delay carried by the error replaces the computed one, so each range runs from 0 to
      the cap, and the worst case is the cap on every retry (unbounded without 'max'). The
      worst-case total counts the rules' delays; with 'rate' or 'limit N queue M' it says
      that an attempt may also wait for a token or in line. For
      'retry forever' the table lists the first 100 retries, as the JSON does; a long
      finite schedule shows its first 20 retries and its last.

      The policy is one argument (quote it) or several words joined with spaces; '-' reads
      it from standard input. Diagnostics name it <policy>. With '--file', '--policy'
      chooses the policy by name; it may be left out when the file has only one.

      '--json' prints one JSON object: {"rules": [{"on", "except", "behavior", "jitter",
      "max", "schedule": [{"retry", "delay", "min", "max"}], "truncated", "hook",
      "honorsRetryAfter", "worstCaseTotal"}], "within", "timeout", "budget", "hedge":
      {"count", "after"} or null, "breaker": {"ratio", "window", "minimum", "open"} or null,
      "limit": {"max", "queue"} (for 'limit adaptive': {adaptive: {min, max}}) or null,
      "throttle": {"factor", "window"} or null, "rate": {"perSecond", "burst"} or null, "name",
      "policy"}. Durations are seconds. For 'retry forever' the schedule lists the first 100
      retries and "truncated" is true.
      """,
    options: Options.optionSpecs,
    minimumArguments: 0, maximumArguments: nil, argumentName: "policy",
    examples: [
      (
        "retry-policy explain 'retry 5 on serverError backoff 1s x1.5 jitter 10%'",
        "The delays before retries 1 to 5: 1s, 1.5s, 2.25s, 3.375s, 5.0625s, each ±10%."
      ),
      ("retry-policy explain --json 'retry 3 delay 500ms'", "The same as JSON."),
      (
        "retry-policy explain --file payments.retry --policy payments",
        "Explain the policy 'payments' of a file."
      ),
      ("echo 'retry forever backoff 1s within 2m' | retry-policy explain -", "Read stdin."),
    ],
    exitStatuses: [
      (0, "the policy is valid (warnings go to standard error)"),
      (1, "invalid policy, a file with errors, or no policy of that name in the file"),
      (2, "usage error, unreadable file, or output that cannot be written"),
    ])

  /// The options of `explain`.
  struct Options: CommandOptions {
    var isJSON = false
    var selection = PolicySelection()
    var arguments: [String] = []

    static var declarations: [OptionDeclaration<Self>] {
      [.flag("json", help: "Print the explanation as JSON.", \.isJSON)] + .group(\.selection)
    }

    func validate() throws(UsageError) { try selection.validate() }
  }

  static func run(_ options: Options, context: CommandContext) async -> Int32 {
    switch PolicyInput.resolvePolicy(options.selection, words: options.arguments, context: context)
    {
    case .exit(let status):
      return status
    case .policy(let policy):
      if options.isJSON {
        context.output.write(ExplainRendering.json(policy))
      } else {
        context.output.write(
          ExplainRendering.text(policy, usesColor: context.output.outputUsesColor))
      }
      return ExitStatus.success
    }
  }
}
