import Foundation
import RetryPolicy
import Testing

@testable import RetryPolicyCLI
@testable import RetryPolicyLanguageServer

/// Changes waiting on the input are coalesced: only the latest text of a document is
/// decoded and analyzed.
@Suite("Language server: coalesced changes")
struct LanguageServerCoalescingTests {
  static let uri = "file:///big.retry"

  static func change(_ text: String, version: Int, uri: String = uri) throws -> [UInt8] {
    try framed([
      "jsonrpc": "2.0", "method": "textDocument/didChange",
      "params": [
        "textDocument": ["uri": uri, "version": version], "contentChanges": [["text": text]],
      ],
    ])
  }

  static func hover(_ id: Int, uri: String = uri) throws -> [UInt8] {
    try framed([
      "jsonrpc": "2.0", "id": id, "method": "textDocument/hover",
      "params": ["textDocument": ["uri": uri], "position": ["line": 0, "character": 8]],
    ])
  }

  static func objects(_ replies: [OutgoingMessage]) -> [[String: Any]] {
    replies.compactMap {
      (try? JSONSerialization.jsonObject(with: Data(JSONRPC.encode($0)))) as? [String: Any]
    }
  }

  /// The versions of the `publishDiagnostics` notifications among `replies`.
  static func publishedVersions(_ replies: [[String: Any]]) -> [Int] {
    replies.compactMap { reply in
      guard reply["method"] as? String == "textDocument/publishDiagnostics" else { return nil }
      return (reply["params"] as? [String: Any])?["version"] as? Int
    }
  }

  static func initialized() throws -> LanguageServerConnection {
    var connection = LanguageServerConnection(host: .tool)
    let replies = connection.receive(
      try framed(["jsonrpc": "2.0", "id": 0, "method": "initialize", "params": [:]]))
    #expect(replies.count == 1)
    return connection
  }

  /// The policies every version of the document shares: 16 KiB of them, one with an error.
  ///
  /// Built once. The assertions count analyses and published versions, so the size only has
  /// to make a needless decode or analysis of a superseded version a real one; a megabyte
  /// made this the slowest test of the package (15 s idle, 50 s on a busy machine), and the
  /// language server's speed on large documents is the benchmarks' business.
  static let sharedPolicies: String = {
    var text = ""
    var index = 0
    while text.utf8.count < 1 << 14 {
      text += "policy p\(index) = retry 3 on serverError backoff 1s x1.5 jitter 10% # \"😀\"\n"
      index += 1
    }
    return text + "policy broken = retry 3 bakoff 1s\n"
  }()

  /// A document of about 16 KiB: its first policy names the version.
  static func document(version: Int) -> String {
    "policy v\(version) = retry 3 backoff 1s\n" + sharedPolicies
  }

  @Test("100 changes of a 16 KiB document waiting, then a hover: one analysis, of the last")
  func hundredChanges() throws {
    var connection = try Self.initialized()
    var stream = try framed([
      "jsonrpc": "2.0", "method": "textDocument/didOpen",
      "params": [
        "textDocument": [
          "uri": Self.uri, "languageId": "retry", "version": 0, "text": Self.document(version: 0),
        ]
      ],
    ])
    for version in 1...100 {
      stream += try Self.change(Self.document(version: version), version: version)
    }
    stream += try Self.hover(1)
    let replies = Self.objects(connection.receive(stream) + connection.flush())
    #expect(connection.server.analysisCount == 1)
    #expect(connection.supersededChangeCount == 100)
    #expect(Self.publishedVersions(replies) == [100])
    let hover = try #require(replies.first { $0["id"] as? Int == 1 })
    let result = try #require(hover["result"] as? [String: Any])
    let contents = try #require(result["contents"] as? [String: Any])
    #expect((contents["value"] as? String)?.contains("policy `v100`") == true)
  }

  @Test("a change read before the next one arrives is analyzed; changes of two documents apart")
  func ordering() throws {
    var connection = try Self.initialized()
    let other = "file:///other.retry"
    let texts = (1...3).map { "policy v\($0) = retry \($0)\n" }
    // Each change alone, the input pausing after it: each is analyzed and published.
    var replies: [[String: Any]] = []
    for (index, text) in texts.enumerated() {
      replies += Self.objects(
        connection.receive(try Self.change(text, version: index + 1)) + connection.flush())
    }
    #expect(Self.publishedVersions(replies) == [1, 2, 3])
    #expect(connection.server.analysisCount == 3)
    // Interleaved changes of two documents, a hover on the first between them: the first
    // document's change before the hover is analyzed for it; the other's last change only.
    var stream = try Self.change(texts[0], version: 4)
    stream += try Self.change(texts[0], version: 5, uri: other)
    stream += try Self.change(texts[1], version: 6, uri: other)
    stream += try Self.hover(7)
    stream += try Self.change(texts[2], version: 8)
    let batch = Self.objects(connection.receive(stream) + connection.flush())
    #expect(Self.publishedVersions(batch) == [4, 6, 8])
    let hover = try #require(batch.first { $0["id"] as? Int == 7 })
    let value = ((hover["result"] as? [String: Any])?["contents"] as? [String: Any])?["value"]
    #expect((value as? String)?.contains("policy `v1`") == true)
    // A message that names no document releases every held change first.
    let held = try Self.change(texts[1], version: 9)
    var ordered = Self.objects(connection.receive(held))
    #expect(ordered.isEmpty)
    ordered = Self.objects(
      connection.receive(try framed(["jsonrpc": "2.0", "id": 10, "method": "shutdown"])))
    #expect(Self.publishedVersions(ordered) == [9])
    #expect(ordered.last?["id"] as? Int == 10)
  }

  @Test("the peek reads method and document from bodies of any key order and escapes")
  func peek() {
    let cases: [(String, MessagePeek)] = [
      (
        #"{"params":{"contentChanges":[{"text":"a\"}]\\"}],"textDocument":{"version":2,"#
          + #""uri":"file:\/\/\/a.retry"}},"method":"textDocument\/didChange","jsonrpc":"2.0"}"#,
        .change(uri: "file:///a.retry")
      ),
      (
        #"{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"#
          + #""uri":"file:///b","text":"x","version":1}}}"#,
        .change(uri: "file:///b")
      ),
      (
        #"{"id":3,"method":"textDocument/didChange","params":{"textDocument":{"uri":"u"}}}"#,
        .reads(uri: "u")
      ),
      (
        #" { "id" : 1 , "method" : "textDocument/hover" , "params" : { "position" : "#
          + #"{ "line" : 1 } , "textDocument" : { "uri" : "u" } } } "#,
        .reads(uri: "u")
      ),
      (#"{"id":1,"method":"shutdown"}"#, .unknown),
      (#"{"method":"textDocument/didChange","params":{"textDocument":{"uri":"u"}"#, .unknown),
      (#"{"method":"textDocument/didChange","params":{"textDocument":{"uri":3}}}"#, .unknown),
      (#"[1,2]"#, .unknown),
      ("", .unknown),
      (#"{"a":"\"#, .unknown),
    ]
    for (body, expected) in cases {
      #expect(MessagePeek(Array(body.utf8)) == expected, "\(body)")
    }
  }
}
