import Foundation

/// What a message body is about, read without decoding it: whether it replaces a
/// document's text, or reads one, and which.
///
/// Decoding a change of a 1 MB document costs tens of milliseconds (most of it in the
/// string of its text); this reads only the top-level keys, `method`, `id` and
/// `params.textDocument.uri`, and skips every other value, strings byte by byte. So a
/// change that a later one supersedes is dropped for the cost of a scan
/// (``LanguageServerConnection``). A body that is not an object of that shape is `unknown`.
enum MessagePeek: Equatable {
  /// A `didOpen` or `didChange` notification: the whole new text of the document.
  case change(uri: String)
  /// Any other message naming a document in `params.textDocument.uri`.
  case reads(uri: String)
  /// A message that names no document, or that could not be read.
  case unknown

  init(_ body: [UInt8]) {
    self = body.withUnsafeBufferPointer { bytes in
      var scanner = Scanner(bytes: bytes)
      return scanner.message() ?? .unknown
    }
  }

  /// The methods that replace a document's whole text (the server asks for full sync).
  private static let changeMethods: Set<String> = [
    DidOpenTextDocumentNotification.method, DidChangeTextDocumentNotification.method,
  ]

  /// A reader of one body; every method returns nil when the body is not as expected.
  private struct Scanner {
    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0

    mutating func message() -> MessagePeek? {
      var method: String?
      var uri: String?
      var hasID = false
      let complete = members { scanner, key in
        switch key {
        case "method":
          method = scanner.string()
          return method != nil
        case "id":
          hasID = true
          return scanner.skipValue()
        case "params":
          guard scanner.peek() == UInt8(ascii: "{") else { return scanner.skipValue() }
          return scanner.members { scanner, key in
            guard key == "textDocument", scanner.peek() == UInt8(ascii: "{") else {
              return scanner.skipValue()
            }
            return scanner.members { scanner, key in
              guard key == "uri" else { return scanner.skipValue() }
              uri = scanner.string()
              return uri != nil
            }
          }
        default:
          return scanner.skipValue()
        }
      }
      guard complete, let uri else { return nil }
      if !hasID, let method, MessagePeek.changeMethods.contains(method) {
        return .change(uri: uri)
      }
      return .reads(uri: uri)
    }

    /// Reads an object, calling `member` at each value (after its key and colon).
    mutating func members(_ member: (inout Scanner, String) -> Bool) -> Bool {
      skipSpace()
      guard peek() == UInt8(ascii: "{") else { return false }
      index += 1
      skipSpace()
      if peek() == UInt8(ascii: "}") {
        index += 1
        return true
      }
      while true {
        skipSpace()
        guard let key = string() else { return false }
        skipSpace()
        guard peek() == UInt8(ascii: ":") else { return false }
        index += 1
        skipSpace()
        guard member(&self, key) else { return false }
        skipSpace()
        switch peek() {
        case UInt8(ascii: ","): index += 1
        case UInt8(ascii: "}"):
          index += 1
          return true
        default: return false
        }
      }
    }

    func peek() -> UInt8? {
      index < bytes.count ? bytes[index] : nil
    }

    mutating func skipSpace() {
      while let byte = peek(), byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 {
        index += 1
      }
    }

    /// Reads a string; one with escapes is decoded by `JSONDecoder`.
    mutating func string() -> String? {
      guard peek() == UInt8(ascii: "\""), let end = stringEnd(from: index + 1) else {
        return nil
      }
      let start = index
      index = end
      let contents = UnsafeBufferPointer(rebasing: bytes[(start + 1)..<(end - 1)])
      if !contents.contains(UInt8(ascii: "\\")) {
        return String(decoding: contents, as: UTF8.self)
      }
      let literal = Data(UnsafeBufferPointer(rebasing: bytes[start..<end]))
      return try? JSONDecoder().decode(String.self, from: literal)
    }

    /// The index just past the quote that closes a string whose contents start at `from`.
    func stringEnd(from: Int) -> Int? {
      var position = from
      while position < bytes.count {
        guard let quote = Self.firstQuote(in: bytes, from: position) else { return nil }
        var backslashes = 0
        var before = quote
        while before > from, bytes[before - 1] == UInt8(ascii: "\\") {
          backslashes += 1
          before -= 1
        }
        if backslashes % 2 == 0 { return quote + 1 }
        position = quote + 1
      }
      return nil
    }

    /// The index of the first `"` at or after `from`.
    static func firstQuote(in bytes: UnsafeBufferPointer<UInt8>, from: Int) -> Int? {
      guard from >= 0, from < bytes.count else { return nil }
      return bytes[from...].firstIndex(of: UInt8(ascii: "\""))
    }

    /// Skips one value: a string, an object or array (whole), or a number or literal.
    mutating func skipValue() -> Bool {
      guard let first = peek() else { return false }
      switch first {
      case UInt8(ascii: "\""):
        guard let end = stringEnd(from: index + 1) else { return false }
        index = end
        return true
      case UInt8(ascii: "{"), UInt8(ascii: "["):
        var depth = 0
        while let byte = peek() {
          switch byte {
          case UInt8(ascii: "\""):
            guard let end = stringEnd(from: index + 1) else { return false }
            index = end
            continue
          case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
          case UInt8(ascii: "}"), UInt8(ascii: "]"):
            depth -= 1
            if depth == 0 {
              index += 1
              return true
            }
          default: break
          }
          index += 1
        }
        return false
      default:
        let start = index
        while let byte = peek(), !Self.endsLiteral(byte) { index += 1 }
        return index > start
      }
    }

    static func endsLiteral(_ byte: UInt8) -> Bool {
      switch byte {
      case UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), 0x20, 0x0A, 0x0D, 0x09: true
      default: false
      }
    }
  }
}
