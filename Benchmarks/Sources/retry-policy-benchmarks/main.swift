// The benchmarks of retry-policy: `swift run -c release retry-policy-benchmarks [--quick]
// [--filter NAME] [--concurrency N]`, or `.ci/bench` to count allocations too.
// See BENCHMARKS.md for what each scenario measures and the targets.

await BenchmarkCommand.main(arguments: Array(CommandLine.arguments.dropFirst()))
