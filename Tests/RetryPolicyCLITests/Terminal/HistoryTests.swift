import Foundation
import Testing

@testable import RetryPolicyCLI

@Suite("History")
struct HistoryTests {
  private func temporaryDirectory() throws -> URL {
    let url = FileManager.default.temporaryDirectory
      .appendingPathComponent("retry-policy-history-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
  }

  @Test("entries written to the file are read back in order")
  func roundTrip() throws {
    let directory = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let path = directory.appendingPathComponent("history").path
    var history = History()
    history.add("retry 3 backoff 1s")
    history.add(":json")
    history.add("policy p { é漢 }")
    try history.save(to: path)
    let loaded = History.load(from: path)
    #expect(loaded.entries == ["retry 3 backoff 1s", ":json", "policy p { é漢 }"])
  }

  @Test("the file is readable by its owner only")
  func permissions() throws {
    let directory = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let path = directory.appendingPathComponent("history").path
    try History(entries: ["retry 1"]).save(to: path)
    let attributes = try FileManager.default.attributesOfItem(atPath: path)
    #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
  }

  @Test("a history file behind a symbolic link is saved through it; the link stays")
  func savesThroughLink() throws {
    let directory = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let target = directory.appendingPathComponent("dotfiles-history").path
    let link = directory.appendingPathComponent("history").path
    try Data("retry 1\n".utf8).write(to: URL(fileURLWithPath: target))
    try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
    try History(entries: ["retry 1", "retry 2"]).save(to: link)
    #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == target)
    #expect(try String(contentsOfFile: target, encoding: .utf8) == "retry 1\nretry 2\n")
  }

  @Test("a history file past 64 MiB is an empty history, not read whole")
  func oversizedFile() throws {
    let directory = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let path = directory.appendingPathComponent("history")
    try Data().write(to: path)
    let handle = try FileHandle(forWritingTo: path)
    try handle.truncate(atOffset: UInt64(PolicyInput.sizeLimit) + 1)
    try handle.close()
    #expect(History.load(from: path.path).entries.isEmpty)
  }

  @Test("a missing file is an empty history")
  func missingFile() {
    #expect(History.load(from: "/nonexistent/retry-policy/history").entries.isEmpty)
  }

  @Test("blank lines and repeats of the newest entry are not added")
  func skipsBlankAndRepeated() {
    var history = History()
    history.add("retry 1")
    history.add("retry 1")
    history.add("   ")
    history.add("")
    history.add("retry 2")
    history.add("retry 1")
    #expect(history.entries == ["retry 1", "retry 2", "retry 1"])
  }

  @Test("the history keeps only the newest entries up to its limit, also when loaded")
  func bounded() throws {
    var history = History(limit: 3)
    for number in 1...5 { history.add("retry \(number)") }
    #expect(history.entries == ["retry 3", "retry 4", "retry 5"])
    let directory = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let path = directory.appendingPathComponent("history").path
    try History(entries: (1...10).map { "retry \($0)" }).save(to: path)
    #expect(History.load(from: path, limit: 2).entries == ["retry 9", "retry 10"])
  }

  @Test("line ends and control characters in an entry become blanks")
  func controlCharacters() {
    var history = History()
    history.add("retry 1\nretry 2\u{1B}[A")
    #expect(history.entries == ["retry 1 retry 2 [A"])
  }

  @Test(
    "the path comes from RETRY_POLICY_HISTORY, else the home folder",
    arguments: [
      (["RETRY_POLICY_HISTORY": "/tmp/h", "HOME": "/home/a"], "/tmp/h"),
      (["RETRY_POLICY_HISTORY": "", "HOME": "/home/a"], "/home/a/.retry_policy_history"),
      (["HOME": "/home/a"], "/home/a/.retry_policy_history"),
      ([:], nil),
    ] as [([String: String], String?)])
  func path(environment: [String: String], expected: String?) {
    #expect(History.defaultPath(environment: environment) == expected)
  }
}
