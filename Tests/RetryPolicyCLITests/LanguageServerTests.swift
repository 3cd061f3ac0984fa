import Foundation
import RetryPolicy
import Testing

@testable import RetryPolicyCLI

/// The language server's state machine, in-process: positions, robustness and completion.
@Suite("Language server: positions, robustness, completion")
struct LanguageServerTests {
  static let uri = "file:///t.retry"

  /// A server that answered `initialize`.
  static func initialized() -> LanguageServer {
    var server = LanguageServer()
    _ = server.handle(body(#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#))
    return server
  }

  static func body(_ text: String) -> [UInt8] { Array(text.utf8) }

  /// The JSON text of each reply.
  static func texts(_ replies: [JSONValue]) -> [String] {
    replies.map { JSONWriter(isPretty: false).write($0) }
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
    var server = LanguageServer()
    let early = Self.texts(
      server.handle(Self.body(#"{"jsonrpc":"2.0","id":1,"method":"textDocument/hover"}"#)))
    #expect(early.first?.contains(#""code":-32002"#) == true)
    _ = server.handle(Self.body(#"{"jsonrpc":"2.0","id":2,"method":"initialize"}"#))
    let cases: [(String, String)] = [
      ("{not json", #"{"jsonrpc":"2.0","id":null,"error":{"code":-32700"#),
      ("[1,2]", #"{"jsonrpc":"2.0","id":null,"error":{"code":-32600"#),
      (
        String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000),
        #"{"jsonrpc":"2.0","id":null,"error":{"code":-327"#
      ),
      (#"{"id":3}"#, #"{"jsonrpc":"2.0","id":3,"error":{"code":-32600"#),
      (#"{"id":{"a":1},"method":"shutdown"}"#, #""error":{"code":-32600"#),
      (
        #"{"id":4,"method":"workspace/symbol"}"#, #"{"jsonrpc":"2.0","id":4,"error":{"code":-32601"#
      ),
      (
        #"{"id":"five","method":"textDocument/hover","params":{}}"#,
        #""id":"five","error":{"code":-32602"#
      ),
      (
        #"{"id":6,"method":"textDocument/hover","params":{"textDocument":{"uri":"file:///none"}}}"#,
        #""error":{"code":-32602"#
      ),
      (#"{"id":7,"method":"initialize"}"#, #""error":{"code":-32600"#),
    ]
    for (message, expected) in cases {
      let replies = Self.texts(server.handle(Self.body(message)))
      #expect(replies.count == 1)
      #expect(replies.first?.contains(expected) == true, "\(message) → \(replies)")
    }
    // Notifications never get an answer, known or not.
    #expect(server.handle(Self.body(#"{"method":"$/cancelRequest","params":{"id":1}}"#)).isEmpty)
    #expect(server.handle(Self.body(#"{"method":"textDocument/didOpen","params":{}}"#)).isEmpty)
    _ = server.handle(Self.body(#"{"id":8,"method":"shutdown"}"#))
    let late = Self.texts(server.handle(Self.body(#"{"id":9,"method":"textDocument/formatting"}"#)))
    #expect(late.first?.contains(#""id":9,"error":{"code":-32600"#) == true)
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
    framer.append(JSONRPC.framed(open))
    guard case .message(let body)? = framer.next() else {
      Issue.record("the framer did not give the message back")
      return
    }
    #expect(body.count > 10 << 20)
    var server = Self.initialized()
    let replies = Self.texts(server.handle(body))
    #expect(replies.count == 1)
    #expect(replies.first?.contains(#""start":{"line":\#(count),"character":19}"#) == true)
    #expect(replies.first?.contains(#""start":{"line":\#(count),"character":22}"#) == true)
  }

  @Test("a document with thousands of errors gets the first 100 and a note")
  func manyErrors() {
    var server = Self.initialized()
    let text = (0..<3000).map { "policy p\($0) = retry 3 bakoff 1s\n" }.joined()
    let replies = Self.texts([server.open(uri: Self.uri, version: 1, text: text)])
    #expect(replies.first?.contains(#""code":"diagnostics-omitted""#) == true)
    #expect(server.documents[Self.uri]?.analysis.diagnostics.count == 101)
    let changed = Self.texts([server.open(uri: Self.uri, version: 2, text: "policy p = retry 1\n")])
    #expect(changed.first?.hasSuffix(#""diagnostics":[]}}"#) == true)
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
    let position = JSONInput.object([
      "position": .object(["line": .int(3), "character": .int(10)])
    ])
    let hover = JSONWriter(isPretty: false).write(server.hover(open, params: position))
    #expect(hover.contains("rule 2 of policy `payments`"))
    #expect(hover.contains("worst-case total: 4s"))
    #expect(!hover.contains("unauthorized"))
    #expect(
      hover.contains(#""range":{"start":{"line":3,"character":4},"end":{"line":3,"character":35}}"#)
    )
    let nowhere = JSONInput.object(["position": .object(["line": .int(6), "character": .int(0)])])
    #expect(server.hover(open, params: nowhere) == .null)
    let symbols = JSONWriter(isPretty: false).write(server.symbols(open, params: .null))
    #expect(
      symbols
        == #"[{"name":"quick","detail":"1 rule","kind":2,"#
        + #""range":{"start":{"line":0,"character":0},"end":{"line":0,"character":34}},"#
        + #""selectionRange":{"start":{"line":0,"character":7},"end":{"line":0,"character":12}}},"#
        + #"{"name":"payments","detail":"2 rules","kind":2,"#
        + #""range":{"start":{"line":1,"character":0},"end":{"line":5,"character":1}},"#
        + #""selectionRange":{"start":{"line":1,"character":7},"end":{"line":1,"character":15}}}]"#)
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
    let position = JSONInput.object([
      "position": .object(["line": .int(2), "character": .int(10)])
    ])
    let hover = JSONWriter(isPretty: false).write(server.hover(open, params: position))
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
    let everywhere = JSONInput.object([
      "range": .object([
        "start": .object(["line": .int(0), "character": .int(0)]),
        "end": .object(["line": .int(2), "character": .int(0)]),
      ])
    ])
    let before = JSONWriter(isPretty: false).write(server.codeActions(open, params: everywhere))
    #expect(before.contains("Replace 'bakoff' with 'backoff'"))
    // Every message reworded, with no "did you mean" left in any of them.
    open.analysis.diagnostics = open.analysis.diagnostics.map { diagnostic in
      var reworded = diagnostic
      reworded.summary = "this wording is new"
      return reworded
    }
    #expect(open.analysis.diagnostics.allSatisfy { !$0.summary.contains("did you mean") })
    let after = JSONWriter(isPretty: false).write(server.codeActions(open, params: everywhere))
    #expect(after.contains("Replace 'bakoff' with 'backoff'"))
    #expect(
      after.contains(
        #""range":{"start":{"line":0,"character":19},"end":{"line":0,"character":25}},"#
          + #""newText":"backoff""#))
    // `2d` is not a unit of the language: the fix-it replaces the whole duration.
    #expect(after.contains("Replace '2d' with '48h'"))
  }

  /// The labels completion offers at the end of `line` (the cursor is at its end).
  static func completion(_ line: String, before: String = "") -> [String] {
    var server = initialized()
    let text = before + line + "\n"
    _ = server.open(uri: uri, version: 1, text: text)
    guard let open = server.documents[uri] else { return [] }
    let lineIndex = before.split(separator: "\n", omittingEmptySubsequences: false).count - 1
    let character = line.utf16.count
    let params = JSONInput.object([
      "position": .object(["line": .int(max(0, lineIndex)), "character": .int(character)])
    ])
    let reply = JSONWriter(isPretty: false).write(server.completion(open, params: params))
    guard let items = JSONInput.parse(Array(reply.utf8))?["items"]?.array else { return [] }
    return items.compactMap { $0["label"]?.string }
  }

  @Test("completion offers what fits the cursor's place")
  func completion() {
    #expect(Self.completion("policy p = retry 3 backoff 25") == ["25ms", "25s", "25m", "25h"])
    #expect(Self.completion("policy p = retry 3 jitter ") == ["full", "equal", "decorrelated"])
    #expect(Self.completion("policy p = retry 3").isEmpty)
    #expect(Self.completion("policy p = retry 3 jitter 10") == ["10%"])
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
