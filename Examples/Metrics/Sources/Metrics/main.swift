import Foundation
import RetryPolicy

// Usage:
//   Metrics --scenario [--classic]
//                                runs a fixed scenario on virtual time that exercises every
//                                family, and prints the metrics' OpenMetrics text (with
//                                --classic, Prometheus' classic text format)
//   Metrics --serve [SECONDS]    runs calls under policies and serves GET /metrics on
//                                127.0.0.1 (a port the system picks, printed first) for
//                                SECONDS (default 60), then exits

let arguments = CommandLine.arguments.dropFirst()
switch arguments.first {
case "--scenario":
  let metrics = await Scenario.run()
  print(arguments.contains("--classic") ? metrics.classic : metrics.openMetrics, terminator: "")
case "--serve":
  let seconds = arguments.dropFirst().first.flatMap(Int.init) ?? 60
  let metrics = RetryMetrics()
  guard let server = MetricsServer(metrics: metrics) else {
    FileHandle.standardError.write(Data("metrics: cannot listen on 127.0.0.1\n".utf8))
    exit(1)
  }
  FileHandle.standardOutput.write(Data("listening on 127.0.0.1:\(server.port)\n".utf8))
  server.start()
  let work = Task { try await Workload.run(into: metrics) }
  try? await Task.sleep(for: .seconds(seconds))
  work.cancel()
  server.stop()
default:
  FileHandle.standardError.write(Data("usage: Metrics --scenario | --serve [SECONDS]\n".utf8))
  exit(2)
}
