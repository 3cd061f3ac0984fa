import Foundation
import RetryPolicy
import RetryPolicyTesting
import Synchronization
import Testing

/// A temporary folder for one test, removed at the end.
final class StoreFolder {
  let url: URL

  init() throws {
    url = FileManager.default.temporaryDirectory
      .appendingPathComponent("retry-policy-store-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
  }

  deinit { try? FileManager.default.removeItem(at: url) }

  func path(_ name: String) -> String { url.appendingPathComponent(name).path }

  /// Writes `text` to `name` in place (the same file, truncated).
  @discardableResult
  func write(_ name: String, _ text: String) throws -> String {
    let path = path(name)
    try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    return path
  }
}

private struct Failure: Error {}

@Suite("Live policies: PolicyStore")
struct PolicyStoreTests {
  @Test("a store reads its file; names are looked up, and an unknown name throws with a hint")
  func reads() throws {
    let folder = try StoreFolder()
    let path = try folder.write("policies.retry", "policy payments = retry 3 delay 1s\n")
    let store = try PolicyStore(path: path)
    #expect(store["payments"]?.rules.first?.behavior == .delayed(maxCount: 3, delay: .seconds(1)))
    #expect(store["nope"] == nil)
    #expect(store.names == ["payments"])
    #expect(store.generation == 0)
    #expect(throws: PolicyStoreError.unknownPolicy("paymnts", suggestion: "payments")) {
      try store.policy(named: "paymnts")
    }
    #expect(
      "\(PolicyStoreError.unknownPolicy("paymnts", suggestion: "payments"))"
        == "no policy 'paymnts' in the store; did you mean 'payments'?")
  }

  @Test("a store whose first read has an error throws every diagnostic, naming the file")
  func firstReadFails() throws {
    let folder = try StoreFolder()
    let path = try folder.write("bad.retry", "policy a = retry 3 delay 2d\n")
    do {
      _ = try PolicyStore(path: path)
      Issue.record("expected an error")
    } catch let error as PolicyCompileError {
      #expect(error.sourceName == path)
      #expect("\(error)".hasPrefix("\(path):1:27: error: unknown unit 'd'"))
    }
    #expect(throws: PolicyCompileError.self) { try PolicyStore(path: folder.path("missing")) }
  }

  @Test("an edit in place is applied by reload, which names what changed")
  func editInPlace() throws {
    let folder = try StoreFolder()
    let path = try folder.write("p.retry", "policy a = retry 3\npolicy b = retry 1\n")
    let store = try PolicyStore(path: path)
    try folder.write("p.retry", "policy a = retry 5\npolicy b = retry 1\npolicy c = retry 2\n")
    let reload = store.reload()
    #expect(reload.isApplied)
    #expect(reload.diagnostics.isEmpty)
    #expect(reload.changedPolicies == ["a", "c"])
    #expect(store["a"]?.rules.first?.behavior.maxCount == 5)
    #expect(store["c"] != nil)
    #expect(store.generation == 1)
    #expect("\(reload)" == "\(path): applied (a, c changed)")
  }

  @Test("an atomic rename over the file is applied")
  func atomicRename() throws {
    let folder = try StoreFolder()
    let path = try folder.write("p.retry", "policy a = retry 3\n")
    let store = try PolicyStore(path: path)
    let staged = try folder.write(".p.retry.tmp", "policy a = retry 7\n")
    #expect(rename(staged, path) == 0)
    #expect(store.reload().isApplied)
    #expect(store["a"]?.rules.first?.behavior.maxCount == 7)
  }

  /// A ConfigMap volume: `policies.retry -> ..data/policies.retry`, `..data -> ..v1`; an
  /// update writes `..v2` and renames a new link over `..data`.
  @Test("a ConfigMap-style swap of the ..data link is a change, seen by reload and watch")
  func configMapSwap() async throws {
    let folder = try StoreFolder()
    let manager = FileManager.default
    try manager.createDirectory(atPath: folder.path("..v1"), withIntermediateDirectories: true)
    try folder.write("..v1/policies.retry", "policy a = retry 1\n")
    try manager.createSymbolicLink(atPath: folder.path("..data"), withDestinationPath: "..v1")
    try manager.createSymbolicLink(
      atPath: folder.path("policies.retry"), withDestinationPath: "..data/policies.retry")
    let store = try PolicyStore(path: folder.path("policies.retry"))
    let clock = ManualClock()
    var reloads = store.watch(every: .seconds(1), clock: clock).makeAsyncIterator()

    try manager.createDirectory(atPath: folder.path("..v2"), withIntermediateDirectories: true)
    try folder.write("..v2/policies.retry", "policy a = retry 2\n")
    try manager.createSymbolicLink(atPath: folder.path("..data_tmp"), withDestinationPath: "..v2")
    #expect(rename(folder.path("..data_tmp"), folder.path("..data")) == 0)

    // Seen at the first look, applied at the second: the file stayed the same meanwhile.
    await clock.waitForSleepers()
    clock.advance(by: .seconds(1))
    await clock.waitForSleepers()
    #expect(store["a"]?.rules.first?.behavior.maxCount == 1)
    clock.advance(by: .seconds(1))
    let reload = await reloads.next()
    #expect(reload?.isApplied == true)
    #expect(reload?.changedPolicies == ["a"])
    #expect(store["a"]?.rules.first?.behavior.maxCount == 2)
  }

  @Test("watch yields nothing while the file stays the same")
  func watchQuiet() async throws {
    let folder = try StoreFolder()
    let path = try folder.write("p.retry", "policy a = retry 1\n")
    let store = try PolicyStore(path: path)
    let clock = ManualClock()
    var reloads = store.watch(every: .seconds(1), clock: clock).makeAsyncIterator()
    for _ in 0..<3 {
      await clock.waitForSleepers()
      clock.advance(by: .seconds(1))
    }
    await clock.waitForSleepers()
    try folder.write("p.retry", "policy a = retry 4\n")
    for _ in 0..<2 {
      clock.advance(by: .seconds(1))
      await clock.waitForSleepers()
    }
    clock.advance(by: .seconds(1))
    let reload = await reloads.next()
    #expect(reload?.generation == 1)
    #expect(reload?.changedPolicies == ["a"])
    #expect(store["a"]?.rules.first?.behavior.maxCount == 4)
  }

  @Test("a deleted file keeps the policies and says so; made again, it is applied")
  func deletedAndRecreated() throws {
    let folder = try StoreFolder()
    let path = try folder.write("p.retry", "policy a = retry 3\n")
    let store = try PolicyStore(path: path)
    try FileManager.default.removeItem(atPath: path)
    let missing = store.reload()
    #expect(!missing.isApplied)
    #expect(missing.diagnostics.map(\.id) == [.unreadableFile])
    #expect(
      "\(missing)"
        == "\(path):1:1: error: cannot read the policy file: no such file; "
        + "the policies stay as they were")
    #expect(store["a"]?.rules.first?.behavior.maxCount == 3)
    try folder.write("p.retry", "policy a = retry 6\n")
    #expect(store.reload().isApplied)
    #expect(store["a"]?.rules.first?.behavior.maxCount == 6)
  }

  @Test("a file with an error changes nothing and reports FILE:LINE:COL")
  func errorKeepsOldPolicies() throws {
    let folder = try StoreFolder()
    let path = try folder.write("p.retry", "policy a = retry 3\npolicy b = retry 1\n")
    let store = try PolicyStore(path: path)
    try folder.write("p.retry", "policy a = retry 9\npolicy b = retry 1 delay 5d\n")
    let reload = store.reload()
    #expect(!reload.isApplied)
    #expect(reload.changedPolicies.isEmpty)
    #expect("\(reload)".hasPrefix("\(path):2:27: error: unknown unit 'd'"))
    #expect(store["a"]?.rules.first?.behavior.maxCount == 3)
    #expect(store.generation == 0)
  }

  @Test("a file past the input cap is refused without reading it whole")
  func pastTheCap() throws {
    let folder = try StoreFolder()
    let path = try folder.write("p.retry", "policy a = retry 3\n")
    let store = try PolicyStore(path: path)
    let handle = try #require(FileHandle(forWritingAtPath: path))
    try handle.truncate(atOffset: UInt64(PolicyStore.maximumFileSize) + 1)
    try handle.close()
    let reload = store.reload()
    #expect(reload.diagnostics.map(\.id) == [.fileTooLarge])
    #expect(
      reload.diagnostics.first?.message.hasPrefix("the policy file is larger than 64 MiB") == true)
    #expect(store["a"]?.rules.first?.behavior.maxCount == 3)
  }

  @Test("a run finishes under the policy it started with")
  func runKeepsItsPolicy() async throws {
    let folder = try StoreFolder()
    let path = try folder.write("p.retry", "policy a = retry 2 delay 1s\n")
    let store = try PolicyStore(path: path)
    let clock = ManualClock()
    let attempts = Counter()
    let run = Task {
      try await store.run("a", in: RetryEnvironment(clock: clock)) {
        attempts.increment()
        throw Failure()
      }
    }
    await clock.waitForSleepers()
    try folder.write("p.retry", "policy a = retry 9 delay 1s\n")
    #expect(store.reload().isApplied)
    for _ in 0..<2 {
      await clock.waitForSleepers()
      clock.advance(by: .seconds(1))
    }
    await #expect(throws: Failure.self) { try await run.value }
    #expect(attempts.value == 3)
    await #expect(throws: PolicyStoreError.self) {
      try await store.run("b") { 1 }
    }
  }

  @Test("a reload that changes a delay keeps the budget; one that changes 'budget' starts fresh")
  func budgetOutlivesReload() async throws {
    let folder = try StoreFolder()
    let path = try folder.write("p.retry", "policy a = retry 3 immediately budget 10%\n")
    let store = try PolicyStore(path: path)
    let environment = RetryEnvironment(clock: ImmediateClock())
    let attempts = Counter()
    // 1,000 concurrent runs of a failing call, with a reload of a changed delay among them.
    await withTaskGroup(of: Void.self) { group in
      for index in 0..<1_000 {
        if index == 500 {
          _ = try? folder.write("p.retry", "policy a = retry 3 delay 1ms budget 10%\n")
          #expect(store.reload().changedPolicies == ["a"])
        }
        group.addTask {
          _ = try? await store.run("a", in: environment) {
            attempts.increment()
            await Task.yield()
            throw Failure()
          }
        }
      }
    }
    // One budget for all: retries ≤ 10 + 10% of 1,000 first attempts.
    #expect(attempts.value <= 1_000 + 110)
    #expect(attempts.value >= 1_000 + 100)
    let kept = try #require(store.budget(named: "a"))
    #expect(kept.tokens < 1)
    try folder.write("p.retry", "policy a = retry 3 delay 1ms budget 20%\n")
    #expect(store.reload().isApplied)
    #expect(store.budget(named: "a") !== kept)
    #expect(store.budget(named: "a")?.tokens == Double(RetryBudget.initialTokens))
  }
}

/// A thread-safe counter.
private final class Counter: Sendable {
  private let count = Mutex(0)
  func increment() { count.withLock { $0 += 1 } }
  var value: Int { count.withLock { $0 } }
}

@Suite("Live policies: breakers across reloads")
struct PolicyStoreBreakerTests {
  @Test("a reload that changes a delay keeps the circuit; one that changes 'breaker' starts fresh")
  func breakerOutlivesReload() throws {
    let folder = try StoreFolder()
    let path = try folder.write("p.retry", "policy a = retry 3 delay 1s breaker 50% for 5s\n")
    let store = try PolicyStore(path: path)
    let first = try #require(store.breaker(named: "a"))
    first.isolate()
    try folder.write("p.retry", "policy a = retry 3 delay 2s breaker 50% for 5s\n")
    #expect(store.reload().changedPolicies == ["a"])
    let kept = try #require(store.breaker(named: "a"))
    #expect(kept === first)
    #expect(kept.state == .open)
    try folder.write("p.retry", "policy a = retry 3 delay 2s breaker 25% for 5s\n")
    #expect(store.reload().isApplied)
    let fresh = try #require(store.breaker(named: "a"))
    #expect(fresh !== first)
    #expect(fresh.state == .closed)
    try folder.write("p.retry", "policy a = retry 3 delay 2s\n")
    #expect(store.reload().isApplied)
    #expect(store.breaker(named: "a") == nil)
  }
}

@Suite("Live policies: reading a policy by name without the lock")
struct PolicyStoreLookupTests {
  /// A file of the policies `name0` … `name(count - 1)`, each `retry N` with N its number plus
  /// `offset`.
  private static func file(_ names: Range<Int>, offset: Int = 0) -> String {
    names.map { "policy name\($0) = retry \($0 + offset)\n" }.joined()
  }

  @Test("names are found past the in-order search and past a growth; removed names read nil")
  func manyNames() throws {
    let folder = try StoreFolder()
    let path = try folder.write("p.retry", Self.file(0..<3))
    let store = try PolicyStore(path: path)
    #expect(store["name2"]?.rules.first?.behavior.maxCount == 2)
    #expect(store["name3"] == nil)
    // 40 names: beyond the 8 searched in order and the first storage's capacity.
    try folder.write("p.retry", Self.file(0..<40, offset: 1))
    #expect(store.reload().isApplied)
    for number in 0..<40 {
      #expect(store["name\(number)"]?.rules.first?.behavior.maxCount == number + 1)
    }
    #expect(store["name40"] == nil)
    #expect(store["name"] == nil)
    // A reload that removes names: they read nil, throw, and come back with the file.
    try folder.write("p.retry", Self.file(10..<20))
    #expect(store.reload().isApplied)
    #expect(store["name5"] == nil)
    #expect(store["name15"]?.rules.first?.behavior.maxCount == 15)
    #expect(throws: PolicyStoreError.self) { try store.policy(named: "name5") }
    try folder.write("p.retry", Self.file(0..<12, offset: 7))
    #expect(store.reload().isApplied)
    #expect(store["name5"]?.rules.first?.behavior.maxCount == 12)
    #expect(try store.policy(named: "name11").rules.first?.behavior.maxCount == 18)
    #expect(store["name15"] == nil)
  }

  @Test("readers by name see a whole policy of one version or another while reloads add names")
  func readsDuringReloads() async throws {
    let folder = try StoreFolder()
    let path = try folder.write("p.retry", "policy a = retry 1\n")
    let store = try PolicyStore(path: path)
    await withTaskGroup(of: Void.self) { group in
      for _ in 0..<4 {
        group.addTask {
          for _ in 0..<2_000 {
            // `a` is in every version of the file, with 1 or 2 retries.
            let count = store["a"]?.rules.first?.behavior.maxCount
            #expect(count == 1 || count == 2)
            if let other = store["n30"] { #expect(other.rules.first?.behavior.maxCount == 30) }
          }
        }
      }
      group.addTask {
        for version in 1...30 {
          let others = (1...version).map { "policy n\($0) = retry \($0)\n" }.joined()
          let text = "policy a = retry \(version % 2 + 1)\n" + others
          try? Data(text.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
          #expect(store.reload().isApplied)
        }
      }
    }
    #expect(store["n30"]?.rules.first?.behavior.maxCount == 30)
  }
}
