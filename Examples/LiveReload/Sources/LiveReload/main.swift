// A service whose calls run under the policy `payments` of a policy file, and which applies
// every change of that file while it runs, as a server whose file is a mounted ConfigMap does.
//
//     swift run LiveReload policies.retry [--reloads N]
//
// It prints one line when it starts and one per change of the file, each followed by what a
// call to its (always failing) backend does under the policy then in force. It stops by
// itself after N changes (3 by default) or 60 seconds.
import Foundation
import RetryPolicy

/// The backend's error: every call fails, so a call makes every attempt its policy allows.
struct Unavailable: Error {}

/// Writes a line to standard output at once (a pipe would otherwise hold it back).
func say(_ line: String) {
  FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// One call to the backend under the store's current `payments`; returns its attempts.
func call(_ store: PolicyStore) async -> Int {
  let attempts = Attempts()
  _ = try? await store.run("payments") {
    await attempts.add()
    throw Unavailable()
  }
  return await attempts.count
}

/// The attempts of one call.
actor Attempts {
  private(set) var count = 0
  func add() { count += 1 }
}

let arguments = Array(CommandLine.arguments.dropFirst())
guard let path = arguments.first else {
  say("usage: LiveReload POLICY_FILE [--reloads N]")
  exit(2)
}
let reloadsToStop =
  arguments.firstIndex(of: "--reloads").flatMap {
    arguments.indices.contains($0 + 1) ? Int(arguments[$0 + 1]) : nil
  } ?? 3

let store: PolicyStore
do {
  store = try PolicyStore(path: path)
} catch {
  say("cannot start: \(error)")
  exit(1)
}

func describe(_ store: PolicyStore) -> String {
  store["payments"].map { "payments = \($0)" } ?? "no policy 'payments'"
}

say("ready: \(describe(store)); a call made \(await call(store)) attempts")
let deadline = Task {
  try await Task.sleep(for: .seconds(60))
  say("stopping: 60 seconds passed")
  exit(1)
}
var changes = 0
for await reload in store.watch(every: .milliseconds(100)) {
  changes += 1
  if reload.isApplied {
    // Names the file and the version its links led to: `FILE → ..2026_11_27_…/FILE`.
    say("reload: \(reload)")
    say("applied: \(describe(store)); a call made \(await call(store)) attempts")
  } else {
    // What an alert would carry: every diagnostic as FILE:LINE:COL: error: MESSAGE.
    say("not applied: \(reload)")
    say("kept: \(describe(store)); a call made \(await call(store)) attempts")
  }
  if changes == reloadsToStop { break }
}
deadline.cancel()
say("stopped after \(changes) changes")
