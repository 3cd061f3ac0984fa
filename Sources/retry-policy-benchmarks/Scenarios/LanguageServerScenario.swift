import RetryPolicy
import RetryPolicyCLI

/// `retry-policy lsp` answering a change of a 1,000-policy file, and opening 10 MB.
///
/// One operation is what the server does for a `textDocument/didChange` (full sync): parse
/// the JSON-RPC message, analyze the new text, turn its diagnostics into UTF-16 ranges and
/// write the framed `publishDiagnostics` notification. The changes alternate between two
/// texts (one with an error, one without), so every change is a real one.
enum LanguageServerScenario {
  static let name = "lsp"
  static let targetSeconds = 0.05

  /// The framed bytes of a `didChange` (or `didOpen`) notification carrying `text`.
  static func change(_ text: String, version: Int, opening: Bool = false) -> [UInt8] {
    let document = JSONValue.object(
      [.init("uri", .string("file:///bench.retry")), .init("version", .int(version))]
        + (opening ? [.init("languageId", .string("retry")), .init("text", .string(text))] : []))
    let params: [JSONMember] =
      opening
      ? [.init("textDocument", document)]
      : [
        .init("textDocument", document),
        .init("contentChanges", .array([.object([.init("text", .string(text))])])),
      ]
    let method = opening ? "textDocument/didOpen" : "textDocument/didChange"
    return Array(
      JSONWriter(isPretty: false).write(
        .object([
          .init("jsonrpc", .string("2.0")), .init("method", .string(method)),
          .init("params", .object(params)),
        ])
      ).utf8)
  }

  /// A server that has `text` open.
  static func server(with text: String) -> LanguageServer {
    var server = LanguageServer()
    _ = server.handle(Array(#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#.utf8))
    _ = server.handle(change(text, version: 1, opening: true))
    return server
  }

  static let scenario = Scenario(
    name: name,
    summary: "retry-policy lsp: a didChange of a 1,000-policy file answered; a 10 MB didOpen"
  ) { benchmark in
    var generator = PolicyFileGenerator()
    let file = generator.makeFile(policies: 1_000)
    let broken = file + "policy extra = retry 3 bakoff 1s\n"
    let changes = [change(broken, version: 2), change(file, version: 3)]
    var server = server(with: file)
    let variant =
      "didChange → publishDiagnostics, 1,000 policies, \(Format.bytes(Double(file.utf8.count)))"
    let measurement = await benchmark.measure(name, variant) { iterations in
      for index in 0..<iterations {
        for reply in server.handle(opaque(changes[index % 2])) {
          blackHole(JSONRPC.framed(reply))
        }
      }
    }
    // The analysis alone, for the share of the protocol's work (JSON in and out, ranges).
    let texts = [Array(broken.utf8), Array(file.utf8)]
    await benchmark.measure(name, "of which analyze(policyFile:) keeping the tree") {
      iterations in
      for index in 0..<iterations {
        blackHole(
          analyze(policyFile: opaque(texts[index % 2])))
      }
    }
    let target = "a change of a 1,000-policy file answered < 50 ms"
    if let measurement {
      let seconds = measurement.nanosecondsPerOperation / 1e9
      benchmark.addFinding(
        target, measured: Format.time(nanoseconds: measurement.nanosecondsPerOperation),
        holds: seconds < targetSeconds)
    } else {
      benchmark.addFinding(target, measured: "not measured", verdict: .notMeasured)
    }

    // 10 MB of policies with errors: opened once, capped at 100 errors.
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
        var fresh = LanguageServer()
        _ = fresh.handle(Array(#"{"jsonrpc":"2.0","id":1,"method":"initialize"}"#.utf8))
        for reply in fresh.handle(opaque(opening)) { blackHole(JSONRPC.framed(reply)) }
      }
    }
  }
}
