import Foundation
import RetryPolicy
import RetryPolicyHTTP
import Synchronization

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

// Usage:
//   Overload --url http://127.0.0.1:PORT --workers N --service SECONDS
//            [--duration SECONDS] [--json FILE]
//
// The server at URL serves N requests at once, each for SECONDS, and queues the rest
// (.ci/overload/server.py): its capacity is N / SECONDS requests a second. This client
// measures the unloaded latency (one request at a time), then offers twice the capacity for
// --duration seconds (default 12) under each of `retry 0`, `retry 0 limit N` and
// `retry 0 limit adaptive`, and prints goodput (requests served a second within the window)
// and the p50 and p99 latency of each; --json writes the same figures for the script.

func argument(_ name: String) -> String? {
  let arguments = CommandLine.arguments
  guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else {
    return nil
  }
  return arguments[index + 1]
}

func fail(_ message: String) -> Never {
  FileHandle.standardError.write(Data("overload: \(message)\n".utf8))
  exit(2)
}

guard let base = argument("--url").flatMap(URL.init(string:)),
  let workers = argument("--workers").flatMap(Int.init), workers > 0,
  let service = argument("--service").flatMap(Double.init), service > 0
else {
  fail("usage: Overload --url URL --workers N --service SECONDS [--duration S] [--json FILE]")
}
let duration = argument("--duration").flatMap(Double.init) ?? 12
let capacity = Double(workers) / service
let work = base.appendingPathComponent("work")

let configuration = URLSessionConfiguration.ephemeral
// Every request its own connection when it needs one: the client must not queue them itself.
configuration.httpMaximumConnectionsPerHost = 4096
configuration.timeoutIntervalForRequest = 60
configuration.urlCache = nil
let session = URLSession(configuration: configuration)
/// The requests that control the server (`/reset`, `/stats`), apart from the load's.
let control = URLSession(configuration: .ephemeral)

/// Empties the server's line and waits until it is idle, between phases.
func settle() async {
  _ = try? await control.data(from: base.appendingPathComponent("reset"))
  for _ in 0..<500 {
    if let (data, _) = try? await control.data(from: base.appendingPathComponent("stats")),
      String(decoding: data, as: UTF8.self).hasPrefix("queued 0 busy 0")
    {
      return
    }
    try? await Task.sleep(for: .milliseconds(10))
  }
}

// The unloaded latency: one request at a time, after a few to open the connection.
let single = try compile(policy: "retry 0")
var unloaded: [Double] = []
let clock = ContinuousClock()
for index in 0..<45 {
  let start = clock.now
  let (_, response) = try await session.data(from: work, policy: single)
  guard (response as? HTTPURLResponse)?.statusCode == 200 else { fail("the server failed") }
  if index >= 5 { unloaded.append(start.duration(to: clock.now) / .seconds(1)) }
}
FileHandle.standardError.write(Data("overload: unloaded latency measured\n".utf8))
let unloadedP50 = Statistics.quantile(unloaded, 0.5)
let unloadedP99 = Statistics.quantile(unloaded, 0.99)

/// The adaptive limit's changes, from the events of the runs.
let limits = Mutex<[Int]>([])
let environment = RetryEnvironment(observer: { event in
  if case .limitChanged(_, let limit) = event { limits.withLock { $0.append(limit) } }
})

let phases = [
  LoadPhase(name: "no limit", policyText: "retry 0"),
  LoadPhase(name: "limit \(workers)", policyText: "retry 0 limit \(workers)"),
  LoadPhase(name: "limit adaptive", policyText: "retry 0 limit adaptive"),
]
var reports: [Report] = []
for var phase in phases {
  phase.rate = 2 * capacity
  phase.duration = .milliseconds(Int64(duration * 1000))
  phase.drain = .seconds(2)
  await settle()
  limits.withLock { $0.removeAll() }
  var report = try await phase.run(session: session, url: work, environment: environment) {
    _ = try? await control.data(from: base.appendingPathComponent("reset"))
  }
  report.goodputRatio = report.goodput / capacity
  let trace = limits.withLock { $0 }
  if !trace.isEmpty {
    report.finalLimit = trace.last
    let step = Swift.max(1, trace.count / 50)
    report.limitTrace = stride(from: 0, to: trace.count, by: step).map { trace[$0] }
  }
  reports.append(report)
  FileHandle.standardError.write(Data("overload: \(phase.name): done\n".utf8))
}
await settle()

func milliseconds(_ seconds: Double) -> String { String(format: "%.0f ms", seconds * 1000) }

print(
  "server: \(workers) at once, \(milliseconds(service)) each: capacity \(Int(capacity))/s; "
    + "offered \(Int(2 * capacity))/s for \(Int(duration)) s a phase")
print("unloaded latency: p50 \(milliseconds(unloadedP50)), p99 \(milliseconds(unloadedP99))")
for report in reports {
  let share = Int(((report.goodputRatio ?? 0) * 100).rounded())
  var line =
    "\(report.name.padding(toLength: 15, withPad: " ", startingAt: 0)) goodput "
    + String(format: "%5.1f/s", report.goodput) + " (\(share)% of capacity), "
    + "p50 \(milliseconds(report.p50)), p99 \(milliseconds(report.p99)) "
    + "(first half \(milliseconds(report.p99FirstHalf)), "
    + "second half \(milliseconds(report.p99SecondHalf))); served \(report.served), "
    + "refused \(report.refused), failed \(report.failed), unfinished \(report.unfinished)"
  if let limit = report.finalLimit { line += "; limit at the end \(limit)" }
  print(line)
}

struct Summary: Codable {
  var workers: Int
  var service: Double
  var capacity: Double
  var offered: Double
  var duration: Double
  var unloadedP50: Double
  var unloadedP99: Double
  var phases: [Report]
}
if let path = argument("--json") {
  let summary = Summary(
    workers: workers, service: service, capacity: capacity, offered: 2 * capacity,
    duration: duration, unloadedP50: unloadedP50, unloadedP99: unloadedP99, phases: reports)
  let encoder = JSONEncoder()
  encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
  try encoder.encode(summary).write(to: URL(fileURLWithPath: path))
}
