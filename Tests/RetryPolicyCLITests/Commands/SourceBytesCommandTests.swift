import Foundation
import Testing

@testable import RetryPolicyCLI

/// `check` and `fmt` read files as bytes: what is not UTF-8 is an error, never rewritten.
@Suite("check and fmt: bytes")
struct SourceBytesCommandTests {
  /// A temporary folder holding `name` with `bytes`; returns the file's URL.
  func write(_ bytes: [UInt8], named name: String = "a.retry") throws -> URL {
    let folder = FileManager.default.temporaryDirectory
      .appendingPathComponent("retry-policy-bytes-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    let file = folder.appendingPathComponent(name)
    try Data(bytes).write(to: file)
    return file
  }

  @Test("invalid UTF-8 in a comment is an error at its line and column")
  func checkReportsInvalidUTF8() async throws {
    let file = try write(Array("policy a = retry 3\n# caf".utf8) + [0xE9] + Array("\n".utf8))
    defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
    let result = await ToolRunner.run(["check", file.path])
    #expect(result.status == 1)
    #expect(result.standardOutput.contains("a.retry:2:6: error: invalid UTF-8 (\\xE9)"))
    #expect(result.standardOutput.contains("# caf\u{FFFD}\n     ^\n"))
  }

  @Test("a lone CR ends no line: check, check --format json and export place what follows it alike")
  func loneCarriageReturnIsOneColumn() async throws {
    let file = try write(
      Array("policy a = retry 3\rdelay 1s bakoff 1s\npolicy b = retry 2 jiter 5%\n".utf8))
    defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
    let expected = [
      (1, 19, "unexpected-character"), (1, 29, "unknown-clause"), (2, 20, "unknown-clause"),
    ]
    let text = await ToolRunner.run(["check", file.path])
    #expect(text.status == 1)
    for (line, column, _) in expected {
      #expect(text.standardOutput.contains("a.retry:\(line):\(column): error: "))
    }
    #expect(
      text.standardOutput.contains(
        "policy a = retry 3<U+000D>delay 1s bakoff 1s\n" + String(repeating: " ", count: 35) + "^\n"
      ))
    let json = await ToolRunner.run(["check", "--format", "json", file.path])
    let object = try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8))
    let diagnostics = try #require((object as? [String: Any])?["diagnostics"] as? [[String: Any]])
    #expect(
      diagnostics.map { "\($0["line"] ?? "")|\($0["column"] ?? "")|\($0["id"] ?? "")" }
        == expected.map { "\($0.0)|\($0.1)|\($0.2)" })
    let export = await ToolRunner.run(["export", "--to", "grpc", "--file", file.path])
    #expect(export.status == 1)
    for (line, column, _) in expected {
      #expect(export.standardError.contains("a.retry:\(line):\(column): error: "))
    }
  }

  @Test("fmt refuses a file with invalid UTF-8 and leaves its bytes as they were")
  func formatRefusesInvalidUTF8() async throws {
    let bytes = Array("policy  a = retry 3   delay 1s  # caf".utf8) + [0xE9] + [0x0A]
    let file = try write(bytes)
    defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
    let result = await ToolRunner.run(["fmt", file.path])
    #expect(result.status == 1)
    #expect(result.standardError.contains("invalid UTF-8"))
    #expect(try [UInt8](Data(contentsOf: file)) == bytes)
  }

  @Test("fmt keeps a byte order mark at the start")
  func formatKeepsByteOrderMark() async throws {
    let file = try write([0xEF, 0xBB, 0xBF] + Array("policy  a = retry 3   delay 1s\n".utf8))
    defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
    let result = await ToolRunner.run(["fmt", file.path])
    #expect(result.status == 0)
    #expect(
      try [UInt8](Data(contentsOf: file))
        == [0xEF, 0xBB, 0xBF] + Array("policy a = retry 3 delay 1s\n".utf8))
    #expect(await ToolRunner.run(["check", file.path]).status == 0)
    #expect(await ToolRunner.run(["fmt", "--check", file.path]).status == 0)
  }

  @Test("check --format json gives every error in the counts and how many it leaves out")
  func jsonCarriesOmittedCount() async throws {
    let file = try write(Array(("policy a = retry 3" + String(repeating: " @", count: 130)).utf8))
    defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
    let result = await ToolRunner.run(["check", "--format", "json", file.path])
    #expect(result.status == 1)
    let object = try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8))
    let root = try #require(object as? [String: Any])
    #expect(root["errors"] as? Int == 130)
    #expect(root["omitted"] as? Int == 30)
    let diagnostics = try #require(root["diagnostics"] as? [[String: Any]])
    #expect(diagnostics.count == 101)
    #expect(diagnostics.last?["id"] as? String == "diagnostics-omitted")
    let text = await ToolRunner.run(["check", file.path])
    #expect(text.standardError.contains("130 errors"))
    #expect(text.standardOutput.contains("note: 30 more errors not shown"))
  }

  @Test("explain --file reads the file as bytes too")
  func explainFileReportsInvalidUTF8() async throws {
    let file = try write(Array("policy a = retry 3  # caf".utf8) + [0xE9, 0x0A])
    defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
    let result = await ToolRunner.run(["explain", "--file", file.path, "--policy", "a"])
    #expect(result.status == 1)
    #expect(result.standardError.contains(":1:26: error: invalid UTF-8 (\\xE9)"))
  }
}
