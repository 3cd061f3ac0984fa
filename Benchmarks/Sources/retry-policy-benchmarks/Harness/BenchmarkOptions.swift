/// The command line of the benchmark executable.
struct BenchmarkOptions: Sendable {
  /// Only scenarios whose name contains this text run (`--filter NAME`).
  var filter: String?
  /// Fewer, shorter repetitions (`--quick`): quicker, noisier figures.
  var isQuick = false
  /// How many concurrent runs the concurrent-waits scenario starts (`--concurrency N`).
  var concurrency = 100_000
  /// The release `retry-policy` binary, for the scenarios that run it as a child process
  /// (`--tool PATH`); those scenarios are skipped without it.
  var toolPath: String?

  /// The number of timed repetitions of each variant; the table shows their median.
  var repetitions: Int { isQuick ? 3 : 9 }

  /// How long one repetition should last, in nanoseconds: iterations are calibrated to it.
  var repetitionNanoseconds: Double { isQuick ? 30e6 : 75e6 }

  /// The usage text of `--help`.
  static let usage = """
    usage: retry-policy-benchmarks [--filter NAME] [--quick] [--concurrency N] [--tool PATH]
                                   [--list]

      --filter NAME      run only the scenarios whose name contains NAME
      --quick            3 repetitions of ~30 ms each instead of 9 of ~75 ms
      --concurrency N    concurrent runs in the concurrent-waits scenario (default 100000)
      --tool PATH        the release retry-policy binary, for the lsp scenario
      --list             print the scenario names and exit

    Allocations are counted when the process runs under the malloc counter; `.ci/bench`
    builds it and runs the benchmarks with LD_PRELOAD. Without it they show as n/a.
    """

  /// What the command line asks for.
  enum Request: Sendable {
    case run(BenchmarkOptions)
    case list
    case help
    case usageError(String)
  }

  /// Reads the arguments (without the program name).
  static func parse(_ arguments: [String]) -> Request {
    var options = BenchmarkOptions()
    var remaining = arguments[...]
    while let argument = remaining.popFirst() {
      switch argument {
      case "--quick":
        options.isQuick = true
      case "--list":
        return .list
      case "--help", "-h":
        return .help
      case "--filter":
        guard let value = remaining.popFirst() else { return .usageError("--filter needs a name") }
        options.filter = value
      case "--concurrency":
        guard let value = remaining.popFirst(), let count = Int(value), count > 0,
          count <= 10_000_000
        else { return .usageError("--concurrency needs a whole number from 1 to 10000000") }
        options.concurrency = count
      case "--tool":
        guard let value = remaining.popFirst() else { return .usageError("--tool needs a path") }
        options.toolPath = value
      default:
        return .usageError("unknown argument '\(argument)'")
      }
    }
    return .run(options)
  }
}
