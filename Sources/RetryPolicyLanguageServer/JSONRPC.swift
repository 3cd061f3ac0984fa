import Foundation

/// A request id: a number or a string, written back as it came.
package enum RequestID: Codable, Sendable, Hashable {
  case number(Int)
  case string(String)

  package init(from decoder: any Decoder) throws {
    let container = try decoder.singleValueContainer()
    if let number = try? container.decode(Int.self) {
      self = .number(number)
    } else {
      self = .string(try container.decode(String.self))
    }
  }

  package func encode(to encoder: any Encoder) throws {
    var container = encoder.singleValueContainer()
    switch self {
    case .number(let number): try container.encode(number)
    case .string(let text): try container.encode(text)
    }
  }
}

/// A JSON-RPC error: its code and message.
package struct ResponseError: Error, Codable, Sendable, Equatable {
  /// The codes the server answers with.
  enum Code: Int, Codable, Sendable {
    case parseError = -32700
    case invalidRequest = -32600
    case methodNotFound = -32601
    case invalidParams = -32602
    case serverNotInitialized = -32002
  }

  var code: Code
  var message: String

  init(_ code: Code, _ message: String) {
    self.code = code
    self.message = message
  }
}

/// A message the server sends: a response, an error response or a notification.
package enum OutgoingMessage: Encodable, Sendable {
  case response(id: RequestID, result: any Encodable & Sendable)
  case error(id: RequestID?, ResponseError)
  case notification(method: String, params: any Encodable & Sendable)

  private enum Key: String, CodingKey {
    case jsonrpc, id, result, error, method, params
  }

  package func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: Key.self)
    try container.encode("2.0", forKey: .jsonrpc)
    switch self {
    case .response(let id, let result):
      try container.encode(id, forKey: .id)
      try container.encode(result, forKey: .result)
    case .error(let id, let error):
      // An error without a request's id (a parse error) carries `"id": null`.
      try container.encode(id, forKey: .id)
      try container.encode(error, forKey: .error)
    case .notification(let method, let params):
      try container.encode(method, forKey: .method)
      try container.encode(params, forKey: .params)
    }
  }
}

/// The members of a JSON-RPC message that the server reads.
enum MessageKey: String, CodingKey {
  case id, method, params, result, error
}

/// A message from the client, decoded in one pass: its params are decoded with the type
/// that the handler table (``LanguageServer/requestHandlers``) gives for its method.
enum IncomingMessage: Decodable, Sendable {
  /// A request, its params decoded and bound to its handler, or the error to answer.
  case request(id: RequestID, method: String, Result<LanguageServer.BoundRequest, ResponseError>)
  /// A notification bound to its handler; nil when its method is unknown or its params
  /// are malformed (a notification is never answered).
  case notification(method: String, LanguageServer.BoundNotification?)
  /// A response to a request of the server's (it sends none): dropped.
  case response
  /// A message that is no request: the error to answer, with the id when there is one.
  case invalid(id: RequestID?, ResponseError)

  init(from decoder: any Decoder) throws {
    // Not an object: a type mismatch, answered by ``decode(_:)`` as an invalid request.
    let container = try decoder.container(keyedBy: MessageKey.self)
    var id: RequestID?
    var hasBadID = false
    if container.contains(.id) {
      id = try? container.decode(RequestID.self, forKey: .id)
      hasBadID = id == nil
    }
    guard let method = try? container.decode(String.self, forKey: .method) else {
      if container.contains(.id), container.contains(.result) || container.contains(.error) {
        self = .response
      } else {
        self = .invalid(id: id, ResponseError(.invalidRequest, "a request needs a 'method'"))
      }
      return
    }
    if hasBadID {
      self = .invalid(
        id: nil, ResponseError(.invalidRequest, "a request id is a number or a string"))
      return
    }
    let hasParams =
      container.contains(.params) && !((try? container.decodeNil(forKey: .params)) ?? false)
    if let id {
      guard let handler = LanguageServer.requestHandlers[method] else {
        self = .request(
          id: id, method: method,
          .failure(ResponseError(.methodNotFound, "unknown method '\(method)'")))
        return
      }
      do {
        self = .request(
          id: id, method: method, .success(try handler.bind(container, hasParams)))
      } catch {
        self = .request(
          id: id, method: method,
          .failure(ResponseError(.invalidParams, Self.describe(error))))
      }
    } else {
      let handler = LanguageServer.notificationHandlers[method]
      self = .notification(
        method: method, try? handler?.bind(container, hasParams))
    }
  }

  /// Decodes one message body; a body that is not JSON, or not an object, is an error.
  static func decode(_ body: [UInt8]) -> IncomingMessage {
    do {
      return try JSONDecoder().decode(IncomingMessage.self, from: Data(body))
    } catch DecodingError.typeMismatch {
      return .invalid(id: nil, ResponseError(.invalidRequest, "a message must be a JSON object"))
    } catch {
      return .invalid(id: nil, ResponseError(.parseError, "the message is not JSON"))
    }
  }

  /// Says what is wrong in a request's params, naming the member: `'params.position' is
  /// missing`.
  static func describe(_ error: any Error) -> String {
    func path(_ keys: [any CodingKey]) -> String {
      keys.reduce(into: "") { text, key in
        if let index = key.intValue {
          text += "[\(index)]"
        } else {
          text += text.isEmpty ? key.stringValue : "." + key.stringValue
        }
      }
    }
    guard let error = error as? DecodingError else { return "the params are malformed" }
    switch error {
    case .keyNotFound(let key, let context):
      return "'\(path(context.codingPath + [key]))' is missing"
    case .valueNotFound(_, let context):
      return "'\(path(context.codingPath))' is missing"
    case .typeMismatch(let type, let context):
      return "'\(path(context.codingPath))' is not \(Self.typeName(type))"
    case .dataCorrupted(let context):
      return "'\(path(context.codingPath))' is invalid"
    @unknown default:
      return "the params are malformed"
    }
  }

  private static func typeName(_ type: Any.Type) -> String {
    switch type {
    case is Int.Type: "a whole number"
    case is String.Type: "a string"
    case is Bool.Type: "a boolean"
    case is [Any].Type: "an array"
    default: "an object"
    }
  }
}

/// Writes JSON-RPC messages.
package enum JSONRPC {
  /// The encoder of every outgoing message: keys sorted, so the output is the same on
  /// every run, and slashes as they are (URIs stay readable).
  private static func makeEncoder() -> JSONEncoder {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    return encoder
  }

  /// A message's JSON text.
  static func encode(_ message: OutgoingMessage) -> [UInt8] {
    do {
      return Array(try makeEncoder().encode(message))
    } catch {
      // The messages are plain values (no floating-point numbers): encoding cannot fail,
      // but if it did, the client still gets an answer.
      return Array(
        #"{"error":{"code":-32603,"message":"the answer could not be encoded"},"id":null,"jsonrpc":"2.0"}"#
          .utf8)
    }
  }

  /// A message with its `Content-Length` header, as it goes on the wire.
  package static func framed(_ message: OutgoingMessage) -> [UInt8] {
    let body = encode(message)
    return Array("Content-Length: \(body.count)\r\n\r\n".utf8) + body
  }
}

/// Splits a byte stream into JSON-RPC message bodies by their `Content-Length` headers.
///
/// A header block is lines of `Name: value`, ended by an empty line, with a `Content-Length`
/// of decimal digits. A header block that is not one (stray bytes, no or a bad length, a
/// body over `maximumLength`, no end within 8 KiB) is a framing error: it is reported once,
/// then the framer skips to the next `Content-Length:` (in any case, anywhere, so a header
/// glued to a body that was shorter than its length says is found) and reads on from
/// there. Errors met while skipping are not reported again until a message is read. The
/// framer holds at most one header block and one body, never a body over the cap.
struct MessageFramer {
  /// What the next call of `next()` found.
  enum Item: Equatable {
    /// A whole message body.
    case message([UInt8])
    /// A header block that could not be used, and why.
    case framingError(String)
  }

  /// The longest body accepted: 64 MiB.
  var maximumLength = 64 << 20
  /// The longest header block looked for.
  static let maximumHeaderLength = 8192

  private var buffer: [UInt8] = []
  private var start = 0
  /// Whether bytes are skipped up to the next `Content-Length:`.
  private var isSkippingToHeader = false
  /// Whether an error was reported since the last message read.
  private var hasReportedError = false

  /// Adds bytes read from the stream.
  mutating func append(_ bytes: [UInt8]) {
    buffer.append(contentsOf: bytes)
  }

  /// The number of bytes held and not yet given out.
  var bufferedByteCount: Int { buffer.count - start }

  /// Whether part of a message is held: the rest is on its way. (Bytes kept while
  /// skipping to a header do not count.)
  var isWithinMessage: Bool { bufferedByteCount > 0 && !isSkippingToHeader }

  /// Skips to the next `Content-Length:` without a report: the last body was not JSON, so
  /// its length was probably wrong and what follows it is the rest of it.
  mutating func skipToNextHeader() {
    isSkippingToHeader = true
    hasReportedError = true
  }

  /// The next whole message or framing error, or nil when more bytes are needed.
  mutating func next() -> Item? {
    while true {
      if isSkippingToHeader {
        guard let found = Self.find(Self.headerName, in: buffer, from: start) else {
          // Keep the bytes that may begin the name, drop the rest.
          start = max(start, buffer.count - (Self.headerName.count - 1))
          compact()
          return nil
        }
        start = found
        isSkippingToHeader = false
      }
      switch header() {
      case .incomplete:
        compact()
        return nil
      case .invalid(let reason):
        // Skip from the next byte: a `Content-Length:` after stray bytes is then found.
        start += 1
        isSkippingToHeader = true
        if hasReportedError { continue }
        hasReportedError = true
        compact()
        return .framingError(reason)
      case .valid(let bodyStart, let length):
        // `bodyStart` is at most `buffer.count`, `length` at most the cap: no overflow.
        guard buffer.count - bodyStart >= length else {
          compact()
          return nil
        }
        let body = Array(buffer[bodyStart..<(bodyStart + length)])
        start = bodyStart + length
        hasReportedError = false
        compact()
        return .message(body)
      }
    }
  }

  /// What the bytes at `start` hold.
  private enum Header {
    case incomplete
    case invalid(String)
    case valid(bodyStart: Int, length: Int)
  }

  private func header() -> Header {
    guard let end = headerEnd() else {
      if buffer.count - start > Self.maximumHeaderLength + 3 {
        return .invalid("no end of a message header in \(Self.maximumHeaderLength) bytes")
      }
      return .incomplete
    }
    var length: Int?
    var lineStart = start
    while lineStart < end {
      let lineEnd = Self.find([13, 10], in: buffer, from: lineStart, before: end) ?? end
      let line = buffer[lineStart..<lineEnd]
      guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > lineStart,
        line[lineStart..<colon].allSatisfy(Self.isTokenByte)
      else {
        return .invalid("bytes that are no message header")
      }
      let name = String(decoding: line[lineStart..<colon], as: UTF8.self)
      if name.lowercased() == "content-length" {
        let value = line[(colon + 1)...].drop { $0 == 32 || $0 == 9 }
        let digits = value.reversed().drop { $0 == 32 || $0 == 9 }.reversed()
        guard !digits.isEmpty, digits.allSatisfy({ (48...57).contains($0) }) else {
          return .invalid("a message header without a valid 'Content-Length'")
        }
        // More digits than the cap has: over it, whatever the value (no overflow).
        guard digits.count <= 18, let value = Int(String(decoding: digits, as: UTF8.self)),
          value <= maximumLength
        else {
          return .invalid("a message over the limit of \(maximumLength) bytes")
        }
        length = value
      }
      lineStart = lineEnd + 2
    }
    guard let length else {
      return .invalid("a message header without a valid 'Content-Length'")
    }
    return .valid(bodyStart: end + 4, length: length)
  }

  /// The `Content-Length:` a header starts with, lowercase.
  private static let headerName = Array("content-length:".utf8)

  /// Whether a byte may be part of a header's name (RFC 7230's token characters).
  private static func isTokenByte(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
      UInt8(ascii: "0")...UInt8(ascii: "9"):
      true
    default: tokenPunctuation.contains(byte)
    }
  }

  private static let tokenPunctuation = Array("!#$%&'*+-.^_`|~".utf8)

  /// Where the header block at `start` ends (its CR LF CR LF), if within the limit.
  private func headerEnd() -> Int? {
    let limit = min(buffer.count, start + Self.maximumHeaderLength + 4)
    return Self.find([13, 10, 13, 10], in: buffer, from: start, before: limit)
  }

  /// The first index from `from` where `needle` occurs, ASCII letters in any case.
  ///
  /// The match ends before `limit` (the buffer's end by default). `needle` is written in
  /// small letters.
  private static func find(
    _ needle: [UInt8], in bytes: [UInt8], from: Int, before limit: Int? = nil
  ) -> Int? {
    let limit = limit ?? bytes.count
    guard let first = needle.first, limit - from >= needle.count else { return nil }
    var index = from
    let last = limit - needle.count
    while index <= last {
      if folded(bytes[index]) == first {
        var matched = 1
        while matched < needle.count, folded(bytes[index + matched]) == needle[matched] {
          matched += 1
        }
        if matched == needle.count { return index }
      }
      index += 1
    }
    return nil
  }

  /// An ASCII capital letter as its small letter; any other byte as it is.
  private static func folded(_ byte: UInt8) -> UInt8 {
    (65...90).contains(byte) ? byte | 0x20 : byte
  }

  private mutating func compact() {
    if start > 0, start >= buffer.count / 2 {
      buffer.removeFirst(start)
      start = 0
    }
  }
}
