import Foundation

/// A JSON value as read from a client: objects are dictionaries, numbers integers when whole.
enum JSONInput: Sendable, Equatable, Decodable {
  case null
  case bool(Bool)
  case int(Int)
  case double(Double)
  case string(String)
  case array([JSONInput])
  case object([String: JSONInput])

  init(from decoder: any Decoder) throws {
    let container = try decoder.singleValueContainer()
    if container.decodeNil() {
      self = .null
    } else if let flag = try? container.decode(Bool.self) {
      self = .bool(flag)
    } else if let number = try? container.decode(Int.self) {
      self = .int(number)
    } else if let number = try? container.decode(Double.self) {
      self = .double(number)
    } else if let text = try? container.decode(String.self) {
      self = .string(text)
    } else if let elements = try? container.decode([JSONInput].self) {
      self = .array(elements)
    } else {
      self = .object(try container.decode([String: JSONInput].self))
    }
  }

  /// Parses JSON text; nil when it is not JSON.
  static func parse(_ bytes: [UInt8]) -> JSONInput? {
    try? JSONDecoder().decode(JSONInput.self, from: Data(bytes))
  }

  /// The member `key` of an object, or nil.
  subscript(key: String) -> JSONInput? {
    if case .object(let members) = self { return members[key] }
    return nil
  }

  /// The value as a string, or nil.
  var string: String? {
    if case .string(let text) = self { return text }
    return nil
  }

  /// The value as a whole number, or nil.
  var int: Int? {
    if case .int(let number) = self { return number }
    return nil
  }

  /// The value as an array, or nil.
  var array: [JSONInput]? {
    if case .array(let elements) = self { return elements }
    return nil
  }

  /// A request id (a number or a string) written back as it came.
  var asOutput: JSONValue {
    switch self {
    case .int(let number): .int(number)
    case .double(let number): .double(number)
    case .string(let text): .string(text)
    case .bool(let flag): .bool(flag)
    default: .null
    }
  }
}

/// The JSON-RPC error codes the server answers with.
enum JSONRPCError: Int {
  case parseError = -32700
  case invalidRequest = -32600
  case methodNotFound = -32601
  case invalidParams = -32602
  case serverNotInitialized = -32002
}

/// Builds JSON-RPC messages.
package enum JSONRPC {
  /// A response carrying a result.
  static func response(id: JSONValue, result: JSONValue) -> JSONValue {
    .object([.init("jsonrpc", .string("2.0")), .init("id", id), .init("result", result)])
  }

  /// A response carrying an error.
  static func error(id: JSONValue, _ code: JSONRPCError, _ message: String) -> JSONValue {
    let error = JSONValue.object([
      .init("code", .int(code.rawValue)), .init("message", .string(message)),
    ])
    return .object([.init("jsonrpc", .string("2.0")), .init("id", id), .init("error", error)])
  }

  /// A notification from the server.
  static func notification(_ method: String, _ params: JSONValue) -> JSONValue {
    .object([
      .init("jsonrpc", .string("2.0")), .init("method", .string(method)), .init("params", params),
    ])
  }

  /// A message with its `Content-Length` header, as it goes on the wire.
  package static func framed(_ message: JSONValue) -> [UInt8] {
    let body = Array(JSONWriter(isPretty: false).write(message).utf8)
    return Array("Content-Length: \(body.count)\r\n\r\n".utf8) + body
  }
}

/// Splits a byte stream into JSON-RPC message bodies by their `Content-Length` headers.
///
/// A header block without a usable `Content-Length` is a framing error: it is dropped and
/// reported, and reading goes on after it. A body longer than `maximumLength` is skipped
/// as it arrives (and reported), never held.
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
  private var buffer: [UInt8] = []
  private var start = 0
  private var skipping = 0

  /// Adds bytes read from the stream.
  mutating func append(_ bytes: [UInt8]) {
    if skipping > 0 {
      let skipped = min(skipping, bytes.count)
      skipping -= skipped
      buffer.append(contentsOf: bytes[skipped...])
    } else {
      buffer.append(contentsOf: bytes)
    }
  }

  /// The next whole message or framing error, or nil when more bytes are needed.
  mutating func next() -> Item? {
    guard let headerEnd = headerEnd() else {
      if buffer.count - start > Self.maximumHeaderLength {
        buffer.removeAll()
        start = 0
        return .framingError("no message header in the last \(Self.maximumHeaderLength) bytes")
      }
      compact()
      return nil
    }
    let header = String(decoding: buffer[start..<headerEnd], as: UTF8.self)
    let bodyStart = headerEnd + 4
    guard let length = Self.contentLength(header) else {
      start = bodyStart
      return .framingError("a message header without a valid Content-Length")
    }
    if length > maximumLength {
      let available = buffer.count - bodyStart
      skipping = max(0, length - available)
      start = min(buffer.count, bodyStart + length)
      compact()
      return .framingError("a message of \(length) bytes, over the limit of \(maximumLength)")
    }
    guard buffer.count - bodyStart >= length else { return nil }
    let body = Array(buffer[bodyStart..<(bodyStart + length)])
    start = bodyStart + length
    compact()
    return .message(body)
  }

  /// The longest header block looked for.
  static let maximumHeaderLength = 8192

  private func headerEnd() -> Int? {
    var index = start
    let limit = min(buffer.count, start + Self.maximumHeaderLength + 4)
    while index + 3 < limit {
      if buffer[index] == 13, buffer[index + 1] == 10, buffer[index + 2] == 13,
        buffer[index + 3] == 10
      {
        return index
      }
      index += 1
    }
    return nil
  }

  private mutating func compact() {
    if start > 0, start >= buffer.count / 2 {
      buffer.removeFirst(start)
      start = 0
    }
  }

  private static func contentLength(_ header: String) -> Int? {
    for line in header.split(separator: "\r\n") {
      let parts = line.split(separator: ":", maxSplits: 1)
      guard parts.count == 2,
        parts[0].trimmingCharacters(in: .whitespaces).lowercased() == "content-length"
      else { continue }
      guard let length = Int(parts[1].trimmingCharacters(in: .whitespaces)), length >= 0 else {
        return nil
      }
      return length
    }
    return nil
  }
}
