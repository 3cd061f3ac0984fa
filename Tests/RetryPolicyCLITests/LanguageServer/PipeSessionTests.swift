import Foundation
import RetryPolicy
import Testing

/// Drives the built `retry-policy lsp` through pipes, as an editor does, and checks every
/// answer against the protocol's shapes.
@Suite("Language server: a whole session over pipes")
struct LanguageServerSessionTests {
  typealias Object = [String: Any]

  static let uri = "file:///tmp/session.retry"
  /// Three errors, each with a suggestion: `bakoff`, `2d`, `ful`.
  static let broken = """
    policy quick = retry 3 bakoff 1s
    policy payments {
        retry 5 on serverError backoff 2d jitter ful
    }

    """

  static func request(_ id: Int, _ method: String, _ params: Object) -> Object {
    ["jsonrpc": "2.0", "id": id, "method": method, "params": params]
  }

  static func notification(_ method: String, _ params: Object) -> Object {
    ["jsonrpc": "2.0", "method": method, "params": params]
  }

  static func position(_ line: Int, _ character: Int) -> Object {
    ["line": line, "character": character]
  }

  /// Runs the server with the messages on a pipe; returns its status and every message it
  /// sent, in order.
  static func session(_ messages: [Object]) throws -> (status: Int32, replies: [Object]) {
    let process = Process()
    process.executableURL = try ToolRunner.binary()
    process.arguments = ["lsp"]
    let input = Pipe()
    let output = Pipe()
    process.standardInput = input
    process.standardOutput = output
    try process.run()
    // The input is a few kilobytes: it fits in the pipe before anything is read back.
    for message in messages { input.fileHandleForWriting.write(Data(try framed(message))) }
    try input.fileHandleForWriting.close()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, try unframed(Array(data)))
  }

  /// Splits the server's output into messages, checking each header.
  static func unframed(_ bytes: [UInt8]) throws -> [Object] {
    var messages: [Object] = []
    var rest = bytes[...]
    let separator = Array("\r\n\r\n".utf8)
    while !rest.isEmpty {
      guard let end = rest.indices.first(where: { rest[$0...].starts(with: separator) }) else {
        Issue.record("a header without its blank line")
        break
      }
      let header = String(decoding: rest[..<end], as: UTF8.self)
      let length = try #require(Int(header.replacingOccurrences(of: "Content-Length: ", with: "")))
      let bodyStart = end + 4
      let body = Data(rest[bodyStart..<(bodyStart + length)])
      messages.append(try #require(try JSONSerialization.jsonObject(with: body) as? Object))
      rest = rest[(bodyStart + length)...]
    }
    return messages
  }

  /// Checks an LSP range's shape and returns it as (line, character, line, character).
  static func range(_ value: Any?) throws -> [Int] {
    let range = try #require(value as? Object)
    let start = try #require(range["start"] as? Object)
    let end = try #require(range["end"] as? Object)
    return try [start["line"], start["character"], end["line"], end["character"]].map {
      try #require($0 as? Int)
    }
  }

  /// The diagnostics of a `publishDiagnostics` notification, shapes checked.
  static func diagnostics(_ message: Object, version: Int) throws -> [(
    range: [Int], code: String, message: String
  )] {
    #expect(message["jsonrpc"] as? String == "2.0")
    #expect(message["id"] == nil)
    #expect(message["method"] as? String == "textDocument/publishDiagnostics")
    let params = try #require(message["params"] as? Object)
    #expect(params["uri"] as? String == uri)
    #expect(params["version"] as? Int == version)
    let list = try #require(params["diagnostics"] as? [Object])
    return try list.map { diagnostic in
      #expect(diagnostic["severity"] as? Int == 1)
      #expect(diagnostic["source"] as? String == "retry-policy")
      return (
        try range(diagnostic["range"]), try #require(diagnostic["code"] as? String),
        try #require(diagnostic["message"] as? String)
      )
    }
  }

  /// The result of the response to request `id`, its shape checked.
  static func result(_ replies: [Object], id: Int) throws -> Any {
    let response = try #require(replies.first { $0["id"] as? Int == id })
    #expect(response["jsonrpc"] as? String == "2.0")
    #expect(response["error"] == nil)
    return try #require(response["result"], "response \(id) has no result")
  }

  @Test("initialize, open with three errors, change, hover, completion, quick fixes, format, exit")
  func wholeSession() throws {
    let fixed = Self.broken.replacingOccurrences(of: "bakoff", with: "backoff")
    let clean = "policy   quick =  retry 3   backoff 1s\n"
    let document: Object = ["uri": Self.uri]
    let (status, replies) = try Self.session([
      Self.request(
        1, "initialize", ["processId": NSNull(), "rootUri": NSNull(), "capabilities": [:]]),
      Self.notification("initialized", [:]),
      Self.notification(
        "textDocument/didOpen",
        [
          "textDocument": [
            "uri": Self.uri, "languageId": "retry", "version": 1, "text": Self.broken,
          ]
        ]),
      // A request on the document: the first version is analyzed before the change that
      // follows (a change that nothing reads before the next one is coalesced away).
      Self.request(8, "textDocument/documentSymbol", ["textDocument": document]),
      Self.notification(
        "textDocument/didChange",
        ["textDocument": ["uri": Self.uri, "version": 2], "contentChanges": [["text": fixed]]]),
      Self.request(
        2, "textDocument/hover", ["textDocument": document, "position": Self.position(0, 9)]),
      Self.request(
        3, "textDocument/completion", ["textDocument": document, "position": Self.position(2, 15)]),
      Self.request(
        4, "textDocument/codeAction",
        [
          "textDocument": document, "context": ["diagnostics": []],
          "range": ["start": Self.position(0, 0), "end": Self.position(4, 0)],
        ]),
      Self.request(
        5, "textDocument/formatting",
        ["textDocument": document, "options": ["tabSize": 4, "insertSpaces": true]]),
      Self.notification(
        "textDocument/didChange",
        ["textDocument": ["uri": Self.uri, "version": 3], "contentChanges": [["text": clean]]]),
      Self.request(
        6, "textDocument/formatting",
        ["textDocument": document, "options": ["tabSize": 4, "insertSpaces": true]]),
      Self.request(7, "shutdown", [:]),
      Self.notification("exit", [:]),
    ])
    #expect(status == 0)
    #expect(replies.count == 11)

    let initialize = try #require(try Self.result(replies, id: 1) as? Object)
    let capabilities = try #require(initialize["capabilities"] as? Object)
    let sync = try #require(capabilities["textDocumentSync"] as? Object)
    #expect(sync["change"] as? Int == 1)
    #expect(sync["openClose"] as? Bool == true)
    for provider in ["hoverProvider", "documentFormattingProvider", "documentSymbolProvider"] {
      #expect(capabilities[provider] as? Bool == true)
    }
    #expect(capabilities["completionProvider"] is Object)
    #expect(capabilities["codeActionProvider"] is Object)

    let published = replies.filter { $0["method"] != nil }
    #expect(published.count == 3)
    let opened = try Self.diagnostics(published[0], version: 1)
    #expect(opened.map(\.code) == ["unknown-clause", "unknown-unit", "expected-jitter"])
    #expect(opened.map(\.range) == [[0, 23, 0, 29], [2, 36, 2, 37], [2, 45, 2, 48]])
    #expect(opened[0].message == "unknown clause 'bakoff'; did you mean 'backoff'?")
    let changed = try Self.diagnostics(published[1], version: 2)
    #expect(changed.map(\.code) == ["unknown-unit", "expected-jitter"])
    #expect(try Self.diagnostics(published[2], version: 3).isEmpty)

    let hover = try #require(try Self.result(replies, id: 2) as? Object)
    let contents = try #require(hover["contents"] as? Object)
    #expect(contents["kind"] as? String == "markdown")
    let markdown = try #require(contents["value"] as? String)
    #expect(markdown.hasPrefix("**policy `quick`**\n\n```text\n"))
    #expect(markdown.contains("worst-case total: 7s"))
    #expect(try Self.range(hover["range"]) == [0, 7, 0, 12])

    let completion = try #require(try Self.result(replies, id: 3) as? Object)
    #expect(completion["isIncomplete"] as? Bool == false)
    let items = try #require(completion["items"] as? [Object])
    // The file's class, then the built-in ones (`any`, `timeout`, `transient`, URL errors).
    #expect(
      items.compactMap { $0["label"] as? String }
        == Vocabulary.builtInErrorClasses.union(["serverError"]).sorted())
    #expect(items.allSatisfy { $0["kind"] is Int })

    let actions = try #require(try Self.result(replies, id: 4) as? [Object])
    #expect(
      actions.map { $0["title"] as? String } == [
        "Replace '2d' with '48h'", "Replace 'ful' with 'full'",
      ])
    var replacements: [String] = []
    for action in actions {
      #expect(action["kind"] as? String == "quickfix")
      #expect((action["diagnostics"] as? [Object])?.count == 1)
      let edit = try #require(action["edit"] as? Object)
      let changes = try #require(edit["changes"] as? [String: [Object]])
      let edits = try #require(changes[Self.uri])
      #expect(edits.count == 1)
      _ = try Self.range(edits.first?["range"])
      replacements.append(try #require(edits.first?["newText"] as? String))
    }
    #expect(replacements == ["48h", "full"])

    // A file with errors is not formatted: an empty list of edits.
    #expect((try Self.result(replies, id: 5) as? [Any])?.isEmpty == true)
    let edits = try #require(try Self.result(replies, id: 6) as? [Object])
    #expect(edits.count == 1)
    #expect(try Self.range(edits.first?["range"]) == [0, 0, 1, 0])
    #expect(edits.first?["newText"] as? String == "policy quick = retry 3 backoff 1s\n")

    let shutdown = try #require(replies.first { $0["id"] as? Int == 7 })
    #expect(shutdown["result"] is NSNull)
    #expect(shutdown["error"] == nil)
  }

  @Test("exit without shutdown ends with status 1, and the end of the input too")
  func exitWithoutShutdown() throws {
    let (status, replies) = try Self.session([
      Self.request(1, "initialize", ["capabilities": [:]]), Self.notification("exit", [:]),
    ])
    #expect(status == 1)
    #expect(replies.count == 1)
    let (ended, _) = try Self.session([Self.request(1, "initialize", ["capabilities": [:]])])
    #expect(ended == 1)
  }
}
