import Foundation

/// The lines typed into the REPL, oldest first, kept in a file between sessions.
///
/// The file is `~/.retry_policy_history`, or the path in the `RETRY_POLICY_HISTORY`
/// environment variable. It holds one entry a line and at most ``limit`` entries; the oldest
/// go first. Blank lines and a line equal to the one before are not added.
struct History: Sendable, Hashable {
  /// The entries, oldest first.
  private(set) var entries: [String]
  /// The most entries kept.
  let limit: Int

  /// The number of entries kept unless told otherwise.
  static let defaultLimit = 1000

  /// The environment variable that overrides the history file's path.
  static let environmentVariable = "RETRY_POLICY_HISTORY"

  /// Creates a history from entries, keeping the newest `limit` of them.
  init(entries: [String] = [], limit: Int = History.defaultLimit) {
    self.limit = max(0, limit)
    self.entries = []
    for entry in entries { add(entry) }
  }

  /// Adds a line typed in, unless it is blank or repeats the newest entry.
  ///
  /// Line ends and other control characters are turned into blanks, so an entry is always
  /// one line of the file.
  mutating func add(_ line: String) {
    let cleaned = String(
      String.UnicodeScalarView(
        line.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? " " : $0 }))
    guard !cleaned.allSatisfy(\.isWhitespace), cleaned != entries.last, limit > 0 else { return }
    entries.append(cleaned)
    if entries.count > limit { entries.removeFirst(entries.count - limit) }
  }

  /// The history file's path: `RETRY_POLICY_HISTORY` if set and not empty, else
  /// `.retry_policy_history` in the home folder (nil when there is no home folder).
  static func defaultPath(environment: [String: String]) -> String? {
    if let path = environment[environmentVariable], !path.isEmpty { return path }
    let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 }
    guard let home else { return nil }
    return URL(fileURLWithPath: home).appendingPathComponent(".retry_policy_history").path
  }

  /// Reads the history file; a missing or unreadable file, or one past
  /// ``PolicyInput/sizeLimit``, is an empty history.
  static func load(from path: String, limit: Int = History.defaultLimit) -> History {
    guard case .success(let data) = PolicyInput.readFile(Array(path.utf8), name: path) else {
      return History(limit: limit)
    }
    let text = String(decoding: data, as: UTF8.self)
    let lines = text.split(omittingEmptySubsequences: true) { $0 == "\n" || $0 == "\r\n" }
    return History(entries: lines.suffix(max(0, limit)).map(String.init), limit: limit)
  }

  /// Writes the history file, readable by its owner only, through the commands' one file
  /// writer (a symbolic link stays a link); throws when it cannot be written.
  func save(to path: String) throws {
    let text = entries.map { $0 + "\n" }.joined()
    try FileReplacement().write(Array(path.utf8), contents: Array(text.utf8)).get()
    try? FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
  }
}
