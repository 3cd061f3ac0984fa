import Foundation
import RetryPolicy

/// `retry-policy lsp` answering a change of a 1,000-policy file, and opening 10 MB, measured
/// as an editor sees it: the release binary (`--tool PATH`, which `.ci/bench` passes) runs as
/// a child process, and each operation writes a framed notification to its standard input and
/// reads until the `publishDiagnostics` it answers with.
///
/// One change is what the server does for a `textDocument/didChange` (full sync): read and
/// decode the JSON-RPC message, analyze the new text, turn its diagnostics into UTF-16 ranges
/// and write the framed notification, plus the pipe both ways. The changes alternate between
/// two texts (one with an error, one without), so every change is a real one.
enum LanguageServerScenario {
  static let name = "lsp"
  static let targetSeconds = 0.025

  /// The JSON of a `didChange` (or `didOpen`) notification carrying `text`.
  static func change(_ text: String, version: Int, opening: Bool = false) -> [UInt8] {
    var document: [String: Any] = ["uri": "file:///bench.retry", "version": version]
    var params: [String: Any] = [:]
    if opening {
      document["languageId"] = "retry"
      document["text"] = text
    } else {
      params["contentChanges"] = [["text": text]]
    }
    params["textDocument"] = document
    let method = opening ? "textDocument/didOpen" : "textDocument/didChange"
    let message: [String: Any] = ["jsonrpc": "2.0", "method": method, "params": params]
    return (try? Array(JSONSerialization.data(withJSONObject: message))) ?? []
  }

  static let scenario = Scenario(
    name: name,
    summary: "retry-policy lsp (the release binary): a didChange of a 1,000-policy file "
      + "answered; a 10 MB didOpen"
  ) { benchmark in
    guard let tool = benchmark.options.toolPath else {
      benchmark.skip(name, "every variant", because: "needs --tool PATH (.ci/bench passes it)")
      return
    }
    var generator = PolicyFileGenerator()
    let file = generator.makeFile(policies: 1_000)
    let broken = file + "policy extra = retry 3 bakoff 1s\n"
    let target = "a change of a 1,000-policy file answered ≤ 25 ms"
    do {
      let server = try LanguageServerProcess(tool: tool)
      defer { server.stop() }
      try server.send(change(file, version: 1, opening: true))
      _ = try server.readDiagnostics()
      var version = 1
      let variant =
        "didChange → publishDiagnostics, 1,000 policies, \(Format.bytes(Double(file.utf8.count)))"
      let measurement = await benchmark.measure(name, variant) { iterations in
        for _ in 0..<iterations {
          version += 1
          try server.send(change(version % 2 == 0 ? broken : file, version: version))
          blackHole(try server.readDiagnostics())
        }
      }
      if let measurement {
        let seconds = measurement.nanosecondsPerOperation / 1e9
        benchmark.addFinding(
          target, measured: Format.time(nanoseconds: measurement.nanosecondsPerOperation),
          holds: seconds <= targetSeconds)
      } else {
        benchmark.addFinding(target, measured: "not measured", verdict: .notMeasured)
      }
    } catch {
      benchmark.skip(name, "didChange", because: "the server failed: \(error)")
      benchmark.addFinding(target, measured: "not measured", verdict: .notMeasured)
    }

    // The analysis alone, for the share of the protocol's work (JSON in and out, ranges).
    let texts = [Array(broken.utf8), Array(file.utf8)]
    await benchmark.measure(name, "of which analyze(policyFile:)") { iterations in
      for index in 0..<iterations {
        blackHole(analyze(policyFile: opaque(texts[index % 2]), vocabulary: .open))
      }
    }

    // 10 MB of policies with errors: opened once in a fresh server, capped at 100 errors.
    var large = ""
    var index = 0
    while large.utf8.count < 10 << 20 {
      large += "policy p\(index) = retry 3 bakoff 1s jitter 500% # 😀\n"
      index += 1
    }
    let opening = change(large, version: 1, opening: true)
    await benchmark.measure(name, "didOpen of \(Format.bytes(Double(large.utf8.count)))") {
      iterations in
      for _ in 0..<iterations {
        let fresh = try LanguageServerProcess(tool: tool)
        defer { fresh.stop() }
        try fresh.send(opening)
        blackHole(try fresh.readDiagnostics())
      }
    }
  }
}

/// A `retry-policy lsp` child process, spoken to through pipes with framed JSON-RPC messages.
final class LanguageServerProcess {
  /// What went wrong with the server.
  struct Failure: Error, CustomStringConvertible {
    var description: String
  }

  private let process = Process()
  private let input = Pipe()
  private let output = Pipe()
  private var buffer: [UInt8] = []

  /// Starts the server at `tool` and initializes it.
  init(tool: String) throws {
    process.executableURL = URL(fileURLWithPath: tool)
    process.arguments = ["lsp"]
    process.standardInput = input
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    try process.run()
    try send(Array(#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#.utf8))
    _ = try readMessage()
    try send(Array(#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#.utf8))
  }

  /// Writes one message, framed with its `Content-Length`.
  func send(_ body: [UInt8]) throws {
    let header = Array("Content-Length: \(body.count)\r\n\r\n".utf8)
    try input.fileHandleForWriting.write(contentsOf: Data(header + body))
  }

  /// Reads messages until a `publishDiagnostics` notification; returns its body.
  func readDiagnostics() throws -> [UInt8] {
    while true {
      let body = try readMessage()
      let marker = Array("textDocument/publishDiagnostics".utf8)
      if contains(body.prefix(4096) + body.suffix(4096), marker) { return body }
    }
  }

  /// Reads one framed message's body.
  func readMessage() throws -> [UInt8] {
    let separator = Array("\r\n\r\n".utf8)
    var frame: (start: Int, length: Int)?
    while true {
      if frame == nil, let end = firstIndex(of: separator, in: buffer) {
        let header = String(decoding: buffer[..<end], as: UTF8.self)
        guard let lengthText = header.split(separator: ":").last,
          let length = Int(lengthText.trimmingCharacters(in: .whitespaces))
        else { throw Failure(description: "a header without a length: \(header)") }
        frame = (end + separator.count, length)
      }
      if let (start, length) = frame, buffer.count >= start + length {
        let body = Array(buffer[start..<start + length])
        buffer.removeFirst(start + length)
        return body
      }
      let data = output.fileHandleForReading.availableData
      guard !data.isEmpty else { throw Failure(description: "the server closed its output") }
      buffer += data
    }
  }

  /// Ends the server: `shutdown`, `exit`, then waits for it.
  func stop() {
    try? send(Array(#"{"jsonrpc":"2.0","id":2,"method":"shutdown"}"#.utf8))
    try? send(Array(#"{"jsonrpc":"2.0","method":"exit"}"#.utf8))
    try? input.fileHandleForWriting.close()
    process.waitUntilExit()
  }

  private func firstIndex(of needle: [UInt8], in haystack: [UInt8]) -> Int? {
    guard haystack.count >= needle.count else { return nil }
    return (0...(haystack.count - needle.count)).first { start in
      haystack[start..<start + needle.count].elementsEqual(needle)
    }
  }

  private func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
    firstIndex(of: needle, in: haystack) != nil
  }
}
