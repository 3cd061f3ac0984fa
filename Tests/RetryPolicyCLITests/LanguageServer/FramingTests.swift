import Foundation
import RetryPolicy
import Testing

@testable import RetryPolicyCLI
@testable import RetryPolicyLanguageServer

/// The message framer on hostile streams: it recovers after a bad header and never traps.
@Suite("Language server: framing that recovers from bad headers")
struct LanguageServerFramingTests {
  /// Ten well-formed `documentSymbol` requests, ids 1 to 10, after an open document.
  static let tenRequests: [UInt8] = (1...10).flatMap { id in
    framed(
      #"{"jsonrpc":"2.0","id":\#(id),"method":"textDocument/documentSymbol","#
        + #""params":{"textDocument":{"uri":"file:///f.retry"}}}"#)
  }

  static let opening =
    framed(#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#)
    + framed(
      #"{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":"#
        + #"{"uri":"file:///f.retry","version":1,"text":"policy p = retry 3\n"}}}"#)

  /// A body of a request that is well-formed JSON-RPC.
  static let goodBody =
    #"{"jsonrpc":"2.0","id":99,"method":"textDocument/documentSymbol","#
    + #""params":{"textDocument":{"uri":"file:///f.retry"}}}"#

  /// Each kind of bad header, as it appears on the stream.
  static let badHeaders: [(String, [UInt8])] = [
    ("a missing Content-Length", Array("Content-Type: text/plain\r\n\r\n\(goodBody)".utf8)),
    ("a negative Content-Length", Array("Content-Length: -5\r\n\r\n\(goodBody)".utf8)),
    (
      "a Content-Length five bytes short",
      Array("Content-Length: \(goodBody.utf8.count - 5)\r\n\r\n\(goodBody)".utf8)
    ),
    ("stray bytes before a header", Array("garbage".utf8) + framed(goodBody)),
    ("stray bytes on a line of their own", Array("garbage\r\n".utf8) + framed(goodBody)),
    (
      "a Content-Length that is not a number",
      Array("Content-Length: twelve\r\n\r\n\(goodBody)".utf8)
    ),
    (
      "a Content-Length near Int.max",
      Array("Content-Length: \(Int.max)\r\n\r\n\(goodBody)".utf8)
    ),
    (
      "a Content-Length beyond Int.max",
      Array("Content-Length: 92233720368547758070\r\n\r\n\(goodBody)".utf8)
    ),
    (
      "a Content-Length over the 64 MiB cap",
      Array("Content-Length: \((64 << 20) + 1)\r\n\r\n\(goodBody)".utf8)
    ),
    ("a header block that never ends", Array(repeating: UInt8(ascii: "x"), count: 9000)),
  ]

  /// The ids answered and the number of errors without an id, after `stream` is fed in
  /// pieces of `piece` bytes.
  static func run(_ stream: [UInt8], piece: Int) -> (answered: [Int], errors: Int) {
    var connection = LanguageServerConnection(host: .tool)
    var replies: [[String: Any]] = []
    var index = 0
    while index < stream.count {
      let end = min(stream.count, index + piece)
      for reply in connection.receive(Array(stream[index..<end])) {
        replies.append(Self.object(reply))
      }
      index = end
    }
    for reply in connection.flush() { replies.append(Self.object(reply)) }
    let answered = replies.compactMap { reply -> Int? in
      guard reply["result"] != nil else { return nil }
      return reply["id"] as? Int
    }
    let errors = replies.filter { $0["error"] != nil && $0["id"] is NSNull }.count
    return (answered, errors)
  }

  static func object(_ message: OutgoingMessage) -> [String: Any] {
    let data = Data(JSONRPC.encode(message))
    return (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
  }

  @Test(
    "after each kind of bad header, one error and then ten good requests answered",
    arguments: badHeaders.map(\.0))
  func recovery(kind: String) throws {
    let bad = try #require(Self.badHeaders.first { $0.0 == kind }?.1)
    for piece in [1 << 20, 7, 1] {
      let (answered, errors) = Self.run(Self.opening + bad + Self.tenRequests, piece: piece)
      // Stray bytes before a well-formed message leave that message whole: it is answered.
      let expected = kind.hasPrefix("stray") ? [0, 99] + Array(1...10) : [0] + Array(1...10)
      #expect(answered == expected, "\(kind), read \(piece) bytes at a time")
      #expect(errors == 1, "\(kind), read \(piece) bytes at a time")
    }
  }

  @Test("a Content-Length near Int.max is refused without a trap, and the stream goes on")
  func hugeLength() {
    var framer = MessageFramer()
    framer.append(Array("Content-Length: \(Int.max)\r\n\r\n{}".utf8))
    framer.append(Array("Content-Length: 2\r\n\r\n[]".utf8))
    var items: [MessageFramer.Item] = []
    while let item = framer.next() { items.append(item) }
    #expect(items.count == 2)
    if case .framingError(let reason) = items.first {
      #expect(reason.contains("over the limit"))
    } else {
      Issue.record("expected a framing error first, got \(items)")
    }
    #expect(items.last == .message(Array("[]".utf8)))
  }

  @Test("a body over the cap is skipped in constant memory, and later messages are read")
  func overTheCap() {
    var framer = MessageFramer()
    framer.maximumLength = 1000
    framer.append(Array("Content-Length: 5000\r\n\r\n".utf8))
    var items: [MessageFramer.Item] = []
    for _ in 0..<50 {
      framer.append(Array(repeating: UInt8(ascii: "a"), count: 100))
      while let item = framer.next() { items.append(item) }
      #expect(framer.bufferedByteCount < 100)
    }
    framer.append(Array("Content-Length: 2\r\n\r\n{}".utf8))
    while let item = framer.next() { items.append(item) }
    #expect(items.count == 2)
    #expect(items.last == .message(Array("{}".utf8)))
  }
}
