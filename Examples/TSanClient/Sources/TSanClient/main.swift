// Many tasks at once through one breaker, a group of breakers, a policy store that reloads
// under them, and URLSession requests under a policy: every lock and atomic of the package
// contended, for ThreadSanitizer to watch. Prints one line and exits 0.
import Foundation
import RetryPolicy
import RetryPolicyHTTP

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

struct Unavailable: Error {}

let policy = try compile(policy: "retry 2 immediately breaker 50% over 10s min 4 for 100ms")
let breaker = CircuitBreaker()
let hosts = CircuitBreakerGroup(maximumCount: 16)

// The breaker: failures open it, probes close it, an operator isolates and resets it.
await withTaskGroup(of: Void.self) { group in
  for index in 0..<400 {
    group.addTask {
      _ = try? await policy.run(in: RetryEnvironment(breaker: breaker)) {
        if index % 3 == 0 { throw Unavailable() }
        return index
      }
      _ = breaker.state
      if index % 97 == 0 { breaker.isolate() }
      if index % 89 == 0 { breaker.reset() }
    }
    group.addTask {
      let host = hosts.breaker(for: "host-\(index % 40)")
      _ = try? await policy.run(in: RetryEnvironment(breaker: host)) { throw Unavailable() }
      _ = hosts.keys
    }
  }
}

// The store: runs while the file changes and reloads.
let folder = FileManager.default.temporaryDirectory
  .appendingPathComponent("tsan-client-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: folder) }
let file = folder.appendingPathComponent("policies.retry")
try Data("policy a = retry 1 immediately breaker 50% for 1s\npolicy b = retry 1\n".utf8)
  .write(to: file)
let store = try PolicyStore(path: file.path)
let watcher = Task { for await _ in store.watch(every: .milliseconds(10)) {} }
await withTaskGroup(of: Void.self) { group in
  for index in 0..<400 {
    group.addTask {
      _ = try? await store.run(index % 2 == 0 ? "a" : "b") {
        if index % 2 == 0 { throw Unavailable() }
        return index
      }
      _ = store.names
      _ = store.breaker(named: "a")?.state
    }
    if index % 50 == 0 {
      group.addTask {
        let text =
          "policy a = retry \(index % 4) immediately breaker 50% for 1s\npolicy b = retry 1\n"
        try? Data(text.utf8).write(to: file, options: .atomic)
        _ = store.reload()
      }
    }
  }
}
watcher.cancel()

// RetryPolicyHTTP: requests to a port where nothing listens, one breaker per host.
let http = try compile(policy: "retry 2 on transient immediately breaker 50% min 2 for 1s")
let environment = RetryEnvironment().breakers(perHost: hosts)
await withTaskGroup(of: Void.self) { group in
  for port in [9, 9, 19, 19, 29, 29, 39, 39] {
    group.addTask {
      guard let url = URL(string: "http://127.0.0.1:\(port)/") else { return }
      _ = try? await URLSession.shared.data(from: url, policy: http, in: environment)
    }
  }
}
print("tsan-client: done, breaker \(breaker.state), \(hosts.count) hosts, store \(store.names)")
