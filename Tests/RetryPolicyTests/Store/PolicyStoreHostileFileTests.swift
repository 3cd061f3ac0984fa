import Foundation
import RetryPolicy
import RetryPolicyTesting
import Testing

/// Makes a listening Unix socket at `path`; returns its descriptor (close it at the end).
private func makeSocket(at path: String) throws -> Int32 {
  #if canImport(Glibc)
    let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
  #else
    let descriptor = socket(AF_UNIX, SOCK_STREAM, 0)
  #endif
  try #require(descriptor >= 0)
  var address = sockaddr_un()
  address.sun_family = sa_family_t(AF_UNIX)
  let bytes = Array(path.utf8)
  try #require(bytes.count < MemoryLayout.size(ofValue: address.sun_path))
  withUnsafeMutableBytes(of: &address.sun_path) { raw in
    for (index, byte) in bytes.enumerated() { raw[index] = byte }
  }
  let bound = withUnsafePointer(to: &address) {
    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
      bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
    }
  }
  try #require(bound == 0)
  return descriptor
}

@Suite("Live policies: what a machine can put in place of the file")
struct PolicyStoreHostileFileTests {
  /// Replaces the file at `path` by a thing of `kind`; returns a descriptor to close, if any.
  private static func replace(_ path: String, by kind: String) throws -> Int32? {
    try FileManager.default.removeItem(atPath: path)
    switch kind {
    case "a named pipe":
      try #require(mkfifo(path, 0o644) == 0)
    case "a folder":
      try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
    case "a socket":
      // Unix socket paths are short: make it in /tmp and link to it.
      let short = "/tmp/rp-\(UInt32.random(in: 0...UInt32.max)).sock"
      let descriptor = try makeSocket(at: short)
      try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: short)
      return descriptor
    case "a device":
      try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: "/dev/zero")
    default:
      try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: "missing")
    }
    return nil
  }

  @Test(
    "a named pipe, folder, socket or device in place of the file is refused at once",
    arguments: ["a named pipe", "a folder", "a socket", "a device"])
  func notRegularFile(kind: String) throws {
    let folder = try StoreFolder()
    let path = try folder.write("p.retry", "policy a = retry 3\n")
    let store = try PolicyStore(path: path)
    let descriptor = try Self.replace(path, by: kind)
    defer { if let descriptor { close(descriptor) } }
    // A blocking open of the named pipe would never return: no writer comes.
    let reload = store.reload()
    #expect(!reload.isApplied)
    #expect(reload.diagnostics.map(\.id) == [.notRegularFile])
    #expect(
      "\(reload)".hasPrefix(
        "\(path):1:1: error: the policy file is \(kind), not a regular file; "
          + "the policies stay as they were"))
    #expect(!"\(reload)".contains("NSCocoaErrorDomain"))
    #expect(store["a"]?.rules.first?.behavior.maxCount == 3)
    #expect(throws: PolicyCompileError.self) { try PolicyStore(path: path) }
  }

  @Test("the watcher reports a named pipe once and never blocks on it")
  func watcherAndPipe() async throws {
    let folder = try StoreFolder()
    let path = try folder.write("p.retry", "policy a = retry 3\n")
    let store = try PolicyStore(path: path)
    let clock = ManualClock()
    var reloads = store.watch(every: .seconds(1), clock: clock).makeAsyncIterator()
    _ = try Self.replace(path, by: "a named pipe")
    for _ in 0..<2 {
      await clock.waitForSleepers()
      clock.advance(by: .seconds(1))
    }
    let reload = await reloads.next()
    #expect(reload?.diagnostics.map(\.id) == [.notRegularFile])
    #expect(store["a"] != nil)
  }

  @Test("an empty path is named, not left blank")
  func emptyPath() throws {
    do {
      _ = try PolicyStore(path: "")
      Issue.record("expected an error")
    } catch let error as PolicyCompileError {
      #expect("\(error)".hasPrefix("<empty path>:1:1: error: cannot read the policy file"))
    }
  }

  @Test("a dangling link in place of the file keeps the policies")
  func danglingLink() throws {
    let folder = try StoreFolder()
    let path = try folder.write("p.retry", "policy a = retry 3\n")
    let store = try PolicyStore(path: path)
    _ = try Self.replace(path, by: "a dangling link")
    let reload = store.reload()
    #expect(reload.diagnostics.map(\.id) == [.unreadableFile])
    #expect(store["a"] != nil)
  }
}

@Suite("Live policies: a file that would remove every policy")
struct PolicyStoreEmptyFileTests {
  @Test("an empty file, or one of comments only, changes nothing and says why")
  func emptyFile() throws {
    let folder = try StoreFolder()
    let path = try folder.write("p.retry", "policy a = retry 3 breaker 50% for 5s\n")
    let store = try PolicyStore(path: path)
    let breaker = try #require(store.breaker(named: "a"))
    breaker.isolate()
    for text in ["", "# all gone\n"] {
      try folder.write("p.retry", text)
      let reload = store.reload()
      #expect(!reload.isApplied)
      #expect(reload.diagnostics.map(\.id) == [.noPolicies])
      #expect(
        "\(reload)"
          == "\(path):1:1: error: the policy file has no policy; a file that would remove "
          + "every policy is not applied, and the policies stay as they were")
      #expect(store.names == ["a"])
    }
    // The open circuit is still open when the file comes back.
    try folder.write("p.retry", "policy a = retry 3 breaker 50% for 5s\n")
    #expect(store.reload().isApplied)
    #expect(store.breaker(named: "a") === breaker)
    #expect(breaker.state == .open)
    try folder.write("empty.retry", "")
    #expect(throws: PolicyCompileError.self) { try PolicyStore(path: folder.path("empty.retry")) }
  }

  /// A writer truncates the file and stalls longer than the window: the watcher sees the
  /// same (empty) file twice and would have applied it.
  @Test("a writer that truncates the file and stalls is not applied")
  func stalledWriter() async throws {
    let folder = try StoreFolder()
    let path = try folder.write("p.retry", "policy a = retry 3\npolicy b = retry 1\n")
    let store = try PolicyStore(path: path)
    let clock = ManualClock()
    var reloads = store.watch(every: .seconds(1), clock: clock).makeAsyncIterator()
    let handle = try #require(FileHandle(forWritingAtPath: path))
    try handle.truncate(atOffset: 0)
    for _ in 0..<2 {
      await clock.waitForSleepers()
      clock.advance(by: .seconds(1))
    }
    let reload = await reloads.next()
    #expect(reload?.diagnostics.map(\.id) == [.noPolicies])
    #expect(try await store.run("b") { 1 } == 1)
    // The writer finishes: the whole file is applied.
    try handle.write(contentsOf: Data("policy a = retry 4\npolicy b = retry 1\n".utf8))
    try handle.close()
    for _ in 0..<2 {
      await clock.waitForSleepers()
      clock.advance(by: .seconds(1))
    }
    let finished = await reloads.next()
    #expect(finished?.isApplied == true)
    #expect(finished?.changedPolicies == ["a"])
  }

  @Test("a reload that removes a name while runs of it go on is applied and says so")
  func removedWhileRunning() async throws {
    let folder = try StoreFolder()
    let path = try folder.write("p.retry", "policy a = retry 3\npolicy b = retry 1\n")
    let store = try PolicyStore(path: path)
    let clock = ManualClock()
    let run = Task {
      try await store.run("b", in: RetryEnvironment(clock: clock)) {
        try await clock.sleep(for: .seconds(1))
        return 7
      }
    }
    await clock.waitForSleepers()
    try folder.write("p.retry", "policy a = retry 3\n")
    let reload = store.reload()
    #expect(reload.isApplied)
    #expect(reload.removedWhileRunning == ["b"])
    #expect("\(reload)" == "\(path): applied (b changed; b removed while 1 run of it went on)")
    clock.advance(by: .seconds(1))
    #expect(try await run.value == 7)
  }
}

@Suite("Live policies: the watch interval")
struct PolicyStoreWatchIntervalTests {
  @Test(
    "zero, negative and the largest intervals are clamped, never spin or trap",
    arguments: [
      (Duration.zero, PolicyStore.minimumWatchInterval),
      (Duration.seconds(-5), PolicyStore.minimumWatchInterval),
      (Duration.seconds(Int64.max), PolicyStore.maximumWatchInterval),
      (Duration.seconds(Int64.min), PolicyStore.minimumWatchInterval),
      (Duration.milliseconds(250), Duration.milliseconds(250)),
    ])
  func clamped(interval: Duration, expected: Duration) async throws {
    let folder = try StoreFolder()
    let path = try folder.write("p.retry", "policy a = retry 3\n")
    let store = try PolicyStore(path: path)
    let clock = ManualClock()
    let watcher = Task {
      for await _ in store.watch(every: interval, clock: clock) {}
    }
    await clock.waitForSleepers()
    #expect(clock.nextDeadline == clock.now.advanced(by: expected))
    // One look per interval: after the next, the watcher sleeps again, once.
    clock.advance(by: expected)
    await clock.waitForSleepers()
    #expect(clock.sleeperCount == 1)
    #expect(clock.nextDeadline == clock.now.advanced(by: expected))
    watcher.cancel()
  }

  @Test("the limits are 10 ms and 24 h")
  func limits() {
    #expect(PolicyStore.minimumWatchInterval == .milliseconds(10))
    #expect(PolicyStore.maximumWatchInterval == .seconds(86_400))
  }
}

@Suite("Live policies: reloads name the version they read")
struct PolicyStoreVersionTests {
  @Test("a ConfigMap swap's reload names the ..data target it resolved to")
  func configMapVersion() throws {
    let folder = try StoreFolder()
    let manager = FileManager.default
    let v1 = "..2026_11_27_10_00_00.1"
    let v2 = "..2026_11_27_10_05_00.2"
    try manager.createDirectory(atPath: folder.path(v1), withIntermediateDirectories: true)
    try folder.write("\(v1)/policies.retry", "policy a = retry 1\n")
    try manager.createSymbolicLink(atPath: folder.path("..data"), withDestinationPath: v1)
    try manager.createSymbolicLink(
      atPath: folder.path("policies.retry"), withDestinationPath: "..data/policies.retry")
    let path = folder.path("policies.retry")
    let store = try PolicyStore(path: path)
    try manager.createDirectory(atPath: folder.path(v2), withIntermediateDirectories: true)
    try folder.write("\(v2)/policies.retry", "policy a = retry 2 delay 5d\n")
    try manager.createSymbolicLink(atPath: folder.path("..data_tmp"), withDestinationPath: v2)
    #expect(rename(folder.path("..data_tmp"), folder.path("..data")) == 0)
    let refused = store.reload()
    #expect(refused.version == "\(v2)/policies.retry")
    #expect("\(refused)".hasSuffix("\n\(path) → \(v2)/policies.retry: not applied"))
    try folder.write("\(v2)/policies.retry", "policy a = retry 2\n")
    let applied = store.reload()
    #expect("\(applied)" == "\(path) → \(v2)/policies.retry: applied (a changed)")
  }

  @Test("a plain file's reload names only the file")
  func plainFile() throws {
    let folder = try StoreFolder()
    let path = try folder.write("p.retry", "policy a = retry 1\n")
    let store = try PolicyStore(path: path)
    try folder.write("p.retry", "policy a = retry 2\n")
    let reload = store.reload()
    #expect(reload.version == nil)
    #expect("\(reload)" == "\(path): applied (a changed)")
  }
}
