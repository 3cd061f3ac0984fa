import Foundation
import RetryPolicyTestSupport
import Testing

/// Golden files: expected output stored under `Tests/RetryPolicyCLITests/Golden/`.
///
/// Run the tests with `UPDATE_GOLDEN=1` to write the files from the current output (then
/// review the diff).
enum Golden {
  /// The folder of the golden files.
  static let folder = packageRoot.appendingPathComponent("Tests/RetryPolicyCLITests/Golden")

  /// Compares `actual` with the golden file `name`, or writes it when updating.
  static func check(
    _ actual: String, against name: String, sourceLocation: SourceLocation = #_sourceLocation
  ) {
    check(actual, against: folder.appendingPathComponent(name), sourceLocation: sourceLocation)
  }

  /// Compares `actual` with the golden file at `url`, or writes it when updating.
  static func check(
    _ actual: String, against url: URL, sourceLocation: SourceLocation = #_sourceLocation
  ) {
    let name = url.lastPathComponent
    let folder = url.deletingLastPathComponent()
    if ProcessInfo.processInfo.environment["UPDATE_GOLDEN"] == "1" {
      try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
      try? Data(actual.utf8).write(to: url)
      return
    }
    guard let data = FileManager.default.contents(atPath: url.path) else {
      Issue.record(
        "missing golden file \(name); run with UPDATE_GOLDEN=1", sourceLocation: sourceLocation)
      return
    }
    let expected = String(decoding: data, as: UTF8.self)
    #expect(
      actual == expected, "output differs from \(url.path)", sourceLocation: sourceLocation)
  }
}
