import Foundation

@testable import RetryPolicyCLI

/// Feeds lines to a session; keeps each stream's text.
struct ReplHarness {
  var session: ReplSession
  var output = ""
  var errors = ""

  init(files: [String: String] = [:], byteFiles: [String: [UInt8]] = [:]) {
    session = ReplSession(
      usesColor: false,
      readFile: { path in
        if let bytes = byteFiles[path] { return bytes }
        guard let text = files[path] else { throw CocoaError(.fileReadNoSuchFile) }
        return Array(text.utf8)
      })
  }

  /// Enters the lines; returns what they wrote to standard output.
  @discardableResult
  mutating func enter(_ lines: String...) async -> String {
    var written = ""
    for line in lines {
      for message in await session.handle(line: line) {
        switch message.stream {
        case .output:
          output += message.text
          written += message.text
        case .error: errors += message.text
        }
      }
    }
    return written
  }

  /// Clears what was collected so far.
  mutating func clear() {
    output = ""
    errors = ""
  }
}
