import Foundation
import RetryPolicy
import Testing

@testable import RetryPolicyCLI
@testable import RetryPolicyEngines
@testable import RetryPolicyLanguageServer

/// The language server's state machine, in-process: positions, robustness and completion.
@Suite("Language server: positions, robustness, completion")
struct LanguageServerTests {
  static let uri = "file:///t.retry"

  /// A server that answered `initialize`.
  static func initialized() -> LanguageServer {
    var server = LanguageServer(host: .tool)
    _ = server.handle(body(#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#))
    return server
  }

  static func body(_ text: String) -> [UInt8] { Array(text.utf8) }

  /// The JSON text of each reply.
  static func texts(_ replies: [OutgoingMessage]) -> [String] {
    replies.map { String(decoding: JSONRPC.encode($0), as: UTF8.self) }
  }

  /// Each reply's id and error code, as `ID CODE` (`null -32700`); `ID result` for a result.
  static func summaries(_ replies: [OutgoingMessage]) -> [String] {
    replies.map { reply in
      let data = Data(JSONRPC.encode(reply))
      guard let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
        return "not an object"
      }
      #expect(object["jsonrpc"] as? String == "2.0")
      let id = object["id"].map { $0 is NSNull ? "null" : "\($0)" } ?? "none"
      if let error = object["error"] as? [String: Any] {
        #expect(error["message"] is String)
        return "\(id) \(error["code"].map { "\($0)" } ?? "?")"
      }
      return object["result"] == nil ? "\(id) nothing" : "\(id) result"
    }
  }

  /// The diagnostics' ranges as `line:character-line:character`, from a didOpen of `text`.
  static func ranges(_ text: String) -> [String] {
    var server = initialized()
    let document = TextDocument(uri: uri, version: 1, text: text)
    _ = server.open(uri: uri, version: 1, text: text)
    return server.documents[uri]?.analysis.diagnostics.map { diagnostic in
      let start = document.position(of: diagnostic.range.start)
      let end = document.position(of: diagnostic.range.end)
      return "\(start.line):\(start.character)-\(end.line):\(end.character)"
    } ?? []
  }

  @Test("an astral character counts two UTF-16 code units, a combining mark one")
  func positions() {
    // 😀 is one scalar (one column) and two UTF-16 code units; e + U+0301 is two scalars
    // and two code units.
    #expect(Self.ranges("policy e = retry 3 😀 bakoff 1s\n") == ["0:19-0:21", "0:22-0:28"])
    #expect(
      Self.ranges("# 😀😀 e\u{301}\npolicy e = retry 3 😀 e\u{301} bakoff 1s\n") == [
        "1:19-1:21", "1:25-1:31",
      ])
    let document = TextDocument(uri: Self.uri, version: 1, text: "a😀e\u{301}😀b\r\nx")
    let columns = (1...8).map {
      document.position(of: SourceLocation(line: 1, column: $0, offset: 0)).character
    }
    // Past the line's end, a column stays at its end (before the CR LF).
    #expect(columns == [0, 1, 3, 4, 5, 7, 8, 8])
    #expect(document.offset(of: .init(line: 0, character: 3)) == 5)
    #expect(document.position(ofOffset: 5) == .init(line: 0, character: 3))
    #expect(document.offset(of: .init(line: 1, character: 9)) == document.bytes.count)
  }

  @Test("a position after a lone CR is on the next line, as the editor shows it")
  func loneCarriageReturn() {
    // The lone CR is an error at 0:18; `bakoff` stands on the editor's second line.
    #expect(
      Self.ranges("policy p = retry 3\rretry 2 bakoff 1s\n").contains("1:8-1:14"))
  }

  @Test("every diagnostic's UTF-16 column agrees with Swift's count of the line's code units")
  func positionsAgreeWithSwift() {
    let lines = [
      "policy a = retry 3 😀 on x 🇫🇷 bakoff 1s", "policy b = retry 3 é\u{301}\u{302} jitter fulll",
      "policy c = retry 2 delay 5d # ∑😀", "policy d = retry 1 👩‍👩‍👧 max 3x",
    ]
    let text = lines.joined(separator: "\n") + "\n"
    let analysis = analyze(policyFile: text)
    let document = TextDocument(uri: Self.uri, version: 1, text: text)
    #expect(analysis.diagnostics.count >= 8)
    for diagnostic in analysis.diagnostics {
      let line = lines[diagnostic.line - 1]
      let prefix = String(
        String.UnicodeScalarView(line.unicodeScalars.prefix(diagnostic.column - 1)))
      #expect(document.position(of: diagnostic.range.start).character == prefix.utf16.count)
    }
  }

  @Test("malformed messages, unknown methods and requests out of order get JSON-RPC errors")
  func robustness() {
    var server = LanguageServer(host: .tool)
    let early = Self.texts(
      server.handle(Self.body(#"{"jsonrpc":"2.0","id":1,"method":"textDocument/hover"}"#)))
    #expect(early.first?.contains(#""code":-32002"#) == true)
    _ = server.handle(Self.body(#"{"jsonrpc":"2.0","id":2,"method":"initialize"}"#))
    let cases: [(String, String)] = [
      ("{not json", "null -32700"),
      ("[1,2]", "null -32600"),
      ("17", "null -32600"),
      (
        String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000),
        "null -32700"
      ),
      (#"{"id":3}"#, "3 -32600"),
      (#"{"id":{"a":1},"method":"shutdown"}"#, "null -32600"),
      (#"{"id":4,"method":"workspace/symbol"}"#, "4 -32601"),
      (#"{"id":"five","method":"textDocument/hover","params":{}}"#, "five -32602"),
      (
        #"{"id":6,"method":"textDocument/hover","params":{"textDocument":{"uri":"file:///none"},"#
          + #""position":{"line":0,"character":0}}}"#,
        "6 -32602"
      ),
      (#"{"id":7,"method":"initialize"}"#, "7 -32600"),
      // Malformed params: each request gets -32602 with its id, and the server goes on.
      (#"{"id":10,"method":"textDocument/hover","params":[1]}"#, "10 -32602"),
      (#"{"id":11,"method":"textDocument/hover"}"#, "11 -32602"),
      (
        #"{"id":12,"method":"textDocument/completion","params":{"textDocument":{"uri":7},"#
          + #""position":{"line":0,"character":0}}}"#,
        "12 -32602"
      ),
      (
        #"{"id":13,"method":"textDocument/hover","params":{"textDocument":{"uri":"file:///t"},"#
          + #""position":{"line":1e400,"character":0}}}"#,
        "13 -32602"
      ),
      (
        #"{"id":14,"method":"textDocument/hover","params":{"textDocument":{"uri":"file:///t"},"#
          + #""position":{"line":99999999999999999999,"character":0}}}"#,
        "14 -32602"
      ),
      (
        #"{"id":15,"method":"textDocument/hover","params":{"textDocument":{"uri":"file:///t"},"#
          + #""position":{"line":1.5,"character":0}}}"#,
        "15 -32602"
      ),
      (#"{"id":16,"method":"textDocument/codeAction","params":{"textDocument":{}}}"#, "16 -32602"),
      (#"{"id":17,"method":"textDocument/formatting","params":"x"}"#, "17 -32602"),
    ]
    for (message, expected) in cases {
      let replies = Self.summaries(server.handle(Self.body(message)))
      #expect(replies == [expected], "\(message.prefix(120))")
    }
    // Malformed notifications get no answer, and the server goes on.
    var fresh = Self.initialized()
    #expect(fresh.handle(Self.body(#"{"method":"textDocument/didOpen","params":{"x":1}}"#)).isEmpty)
    #expect(
      fresh.handle(Self.body(#"{"method":"textDocument/didChange","params":[1,2]}"#)).isEmpty)
    #expect(fresh.handle(Self.body(#"{"method":"textDocument/didClose"}"#)).isEmpty)
    let open = fresh.handle(
      Self.body(
        #"{"method":"textDocument/didOpen","params":{"textDocument":{"uri":"file:///t","#
          + #""version":1,"text":"policy p = retry 1\n"}}}"#))
    #expect(Self.texts(open).first?.contains(#""diagnostics":[]"#) == true)
    // Notifications never get an answer, known or not.
    #expect(server.handle(Self.body(#"{"method":"$/cancelRequest","params":{"id":1}}"#)).isEmpty)
    #expect(server.handle(Self.body(#"{"method":"textDocument/didOpen","params":{}}"#)).isEmpty)
    let shutdown = Self.summaries(
      server.handle(Self.body(#"{"id":8,"method":"shutdown","params":{"x":1}}"#)))
    #expect(shutdown == ["8 result"])
    let late = Self.summaries(
      server.handle(Self.body(#"{"id":9,"method":"textDocument/formatting"}"#)))
    #expect(late == ["9 -32600"])
    #expect(server.exitStatus == nil)
    _ = server.handle(Self.body(#"{"method":"exit"}"#))
    #expect(server.exitStatus == 0)
  }

  @Test("a document of 10 MB is framed, parsed, analyzed and placed to its last line")
  func hugeDocument() throws {
    // Comment lines keep the debug build's analysis short; the benchmark times 10 MB of
    // policies in release (BENCHMARKS.md).
    let line = "# 😀 a comment line that only fills the document up to ten megabytes\n"
    let count = (10 << 20) / line.utf8.count + 1
    let text = String(repeating: line, count: count) + "policy p = retry 3 😀 bakoff 1s\n"
    let open = JSONValue.object([
      .init("jsonrpc", .string("2.0")), .init("method", .string("textDocument/didOpen")),
      .init(
        "params",
        .object([
          .init(
            "textDocument",
            .object([
              .init("uri", .string(Self.uri)), .init("version", .int(1)),
              .init("text", .string(text)),
            ]))
        ])),
    ])
    var framer = MessageFramer()
    let openBody = Array(JSONWriter(isPretty: false).write(open).utf8)
    framer.append(framed(openBody))
    guard case .message(let body)? = framer.next() else {
      Issue.record("the framer did not give the message back")
      return
    }
    #expect(body.count > 10 << 20)
    var server = Self.initialized()
    let replies = Self.texts(server.handle(body))
    #expect(replies.count == 1)
    #expect(replies.first?.contains(#""start":{"character":19,"line":\#(count)}"#) == true)
    #expect(replies.first?.contains(#""start":{"character":22,"line":\#(count)}"#) == true)
  }

  @Test("a document with thousands of errors gets the first 100 and a note")
  func manyErrors() {
    var server = Self.initialized()
    let text = (0..<3000).map { "policy p\($0) = retry 3 bakoff 1s\n" }.joined()
    let replies = Self.texts([server.open(uri: Self.uri, version: 1, text: text)])
    #expect(replies.first?.contains(#""code":"diagnostics-omitted""#) == true)
    #expect(server.documents[Self.uri]?.analysis.diagnostics.count == 101)
    let changed = Self.texts([server.open(uri: Self.uri, version: 2, text: "policy p = retry 1\n")])
    #expect(changed.first?.contains(#""diagnostics":[],"uri""#) == true)
  }

  @Test("the framer splits messages across reads and recovers from bad headers")
  func framing() {
    var framer = MessageFramer()
    framer.maximumLength = 10
    let stream =
      Array("Content-Length: 2\r\n\r\n{}X-Other: 1\r\n\r\ncontent-length:3\r\n\r\n[1]".utf8)
      + Array("Content-Length: 12\r\n\r\n123456789012Content-Length: 1\r\n\r\n7".utf8)
    var items: [MessageFramer.Item] = []
    for byte in stream {
      framer.append([byte])
      while let item = framer.next() { items.append(item) }
    }
    #expect(items.count == 5)
    #expect(items[0] == .message(Array("{}".utf8)))
    #expect(items[2] == .message(Array("[1]".utf8)))
    #expect(items[4] == .message(Array("7".utf8)))
    if case .framingError = items[1], case .framingError = items[3] {
    } else {
      Issue.record("expected framing errors, got \(items)")
    }
  }

  @Test("hover on a rule explains that rule; symbols list the policies with their ranges")
  func hoverOnRuleAndSymbols() throws {
    var server = Self.initialized()
    let text = """
      policy quick = retry 3 immediately
      policy payments {
          retry 1 on unauthorized after refreshToken
          retry 2 on serverError delay 2s
          within 1m
      }

      """
    _ = server.open(uri: Self.uri, version: 1, text: text)
    let open = try #require(server.documents[Self.uri])
    let document = TextDocumentIdentifier(uri: Self.uri)
    let hover = try #require(
      server.hover(
        open, params: HoverRequest(textDocument: document, position: .init(line: 3, character: 10)))
    )
    #expect(hover.contents.value.contains("rule 2 of policy `payments`"))
    #expect(hover.contents.value.contains("worst-case total: 4s"))
    #expect(!hover.contents.value.contains("unauthorized"))
    #expect(
      hover.range
        == LSPRange(start: .init(line: 3, character: 4), end: .init(line: 3, character: 35)))
    let nowhere = HoverRequest(textDocument: document, position: .init(line: 6, character: 0))
    #expect(server.hover(open, params: nowhere) == nil)
    let symbols = server.symbols(open, params: DocumentSymbolRequest(textDocument: document))
    func range(_ line: Int, _ start: Int, _ endLine: Int, _ end: Int) -> LSPRange {
      LSPRange(
        start: .init(line: line, character: start), end: .init(line: endLine, character: end))
    }
    #expect(
      symbols == [
        DocumentSymbol(
          name: "quick", detail: "1 rule", kind: 2, range: range(0, 0, 0, 34),
          selectionRange: range(0, 7, 0, 12)),
        DocumentSymbol(
          name: "payments", detail: "2 rules", kind: 2, range: range(1, 0, 5, 1),
          selectionRange: range(1, 7, 1, 15)),
      ])
    // On the wire: keys sorted, slashes as they are.
    let wire = Self.texts([.response(id: .number(1), result: symbols)])
    #expect(
      wire.first?.hasPrefix(
        #"{"id":1,"jsonrpc":"2.0","result":[{"detail":"1 rule","kind":2,"name":"quick","#
          + #""range":{"end":{"character":34,"line":0},"start":{"character":0,"line":0}}"#) == true)
  }

  @Test("hover on a rule of a hedged policy keeps the policy's 'hedge' and other clauses")
  func hoverKeepsHedge() throws {
    var server = Self.initialized()
    let text = """
      policy fast {
          retry 1 on unavailable
          retry 2 on serverError
          hedge 2 after 100ms
          timeout 1s
      }

      """
    _ = server.open(uri: Self.uri, version: 1, text: text)
    let open = try #require(server.documents[Self.uri])
    let request = HoverRequest(
      textDocument: TextDocumentIdentifier(uri: Self.uri), position: .init(line: 2, character: 10))
    let hover = try #require(server.hover(open, params: request)).contents.value
    #expect(hover.contains("rule 2 of policy `fast`"))
    #expect(hover.contains("retry 2 on serverError immediately timeout 1s hedge 2 after 100ms"))
    #expect(hover.contains("2 extra attempts (concurrent)"))
    #expect(!hover.contains("unavailable"))
  }

  @Test("quick fixes come from the fix-its: a message reworded still gives the same edit")
  func quickFixesFromFixIts() throws {
    var server = Self.initialized()
    _ = server.open(
      uri: Self.uri, version: 1, text: "policy p = retry 3 bakoff 1s\npolicy q = retry 3 delay 2d\n"
    )
    var open = try #require(server.documents[Self.uri])
    let everywhere = CodeActionRequest(
      textDocument: TextDocumentIdentifier(uri: Self.uri),
      range: LSPRange(start: .init(line: 0, character: 0), end: .init(line: 2, character: 0)))
    let before = server.codeActions(open, params: everywhere)
    #expect(before.map(\.title).contains("Replace 'bakoff' with 'backoff'"))
    // Every message reworded, with no "did you mean" left in any of them.
    open.analysis.diagnostics = open.analysis.diagnostics.map { diagnostic in
      var reworded = diagnostic
      reworded.summary = "this wording is new"
      return reworded
    }
    #expect(open.analysis.diagnostics.allSatisfy { !$0.summary.contains("did you mean") })
    let after = server.codeActions(open, params: everywhere)
    #expect(after.map(\.title) == ["Replace 'bakoff' with 'backoff'", "Replace '2d' with '48h'"])
    #expect(
      after.first?.edit.changes[Self.uri]
        == [
          TextEdit(
            range: LSPRange(
              start: .init(line: 0, character: 19), end: .init(line: 0, character: 25)),
            newText: "backoff")
        ])
    // `2d` is not a unit of the language: the fix-it replaces the whole duration.
    #expect(after.last?.edit.changes[Self.uri]?.first?.range.start.character == 25)
  }

  /// The labels completion offers at the end of `line` (the cursor is at its end).
  static func completion(_ line: String, before: String = "") -> [String] {
    var server = initialized()
    let text = before + line + "\n"
    _ = server.open(uri: uri, version: 1, text: text)
    guard let open = server.documents[uri] else { return [] }
    let lineIndex = before.split(separator: "\n", omittingEmptySubsequences: false).count - 1
    let character = line.utf16.count
    let params = CompletionRequest(
      textDocument: .init(uri: uri), position: .init(line: max(0, lineIndex), character: character))
    return server.completion(open, params: params).items.map(\.label)
  }

  @Test("completion offers what fits the cursor's place")
  func completion() {
    #expect(Self.completion("policy p = retry 3 backoff 25") == ["25ms", "25s", "25m", "25h"])
    #expect(Self.completion("policy p = retry 3 jitter ") == ["full", "equal", "decorrelated"])
    #expect(Self.completion("policy p = retry 3").isEmpty)
    #expect(Self.completion("policy p = retry 3 jitter 10") == ["10%"])
    #expect(Self.completion("policy p = retry 3 rate 50") == ["50/s", "50/m"])
    #expect(Self.completion("policy p = retry 3 rate 50/s ").first == "burst")
    #expect(Self.completion("policy p = retry 3 honoring ") == ["retry-after"])
    let clauses = Self.completion("policy p = retry 3 on a backoff 1s ")
    #expect(clauses.contains("jitter") && clauses.contains("within") && clauses.contains("max"))
    #expect(!clauses.contains("on") && !clauses.contains("delay") && !clauses.contains("backoff"))
    let names = "policy q {\n    retry 1 on unauthorized after refreshToken\n}\n"
    #expect(
      Self.completion("policy p = retry 3 on a, ", before: names)
        == Vocabulary.builtInErrorClasses.union(["unauthorized"]).sorted())
    #expect(Self.completion("policy p = retry 3 after ", before: names) == ["refreshToken"])
    #expect(Self.completion("", before: names) == ["policy"])
    let inBlock = Self.completion("    ", before: "policy b {\n")
    #expect(inBlock.first == "retry" && inBlock.contains("within") && !inBlock.contains("policy"))
    #expect(Self.completion("policy p = retry 3 # on ").isEmpty)
  }
}
