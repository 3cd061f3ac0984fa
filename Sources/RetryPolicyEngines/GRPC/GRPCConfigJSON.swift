/// A strict JSON reader for gRPC service configs (RFC 8259).
///
/// Objects keep their members in
/// order, duplicate keys included, and numbers keep their text, so that `import` can tell
/// `2` from `2.9`, and a number beyond `Int` from a small one, without rounding through a
/// `Double`. Nesting deeper than ``maximumDepth`` is refused, so no input exhausts the stack.
enum GRPCConfigJSON {
  /// The deepest nesting of arrays and objects read.
  static let maximumDepth = 128

  /// Why a text is no JSON: a lowercase phrase and the byte offset where reading stopped.
  struct Failure: Error, Equatable {
    var message: String
    var offset: Int
  }

  /// The value the text holds, or why it holds none.
  static func parse(_ bytes: [UInt8]) -> Result<JSONValue, Failure> {
    var reader = Reader(bytes: bytes)
    do throws(Failure) {
      reader.skipBlanks()
      let value = try reader.value(depth: 0)
      reader.skipBlanks()
      guard reader.index == bytes.count else { throw reader.failure("text after the JSON value") }
      return .success(value)
    } catch {
      return .failure(error)
    }
  }

  private struct Reader {
    let bytes: [UInt8]
    var index = 0

    func failure(_ message: String) -> Failure {
      Failure(message: message, offset: index)
    }

    mutating func skipBlanks() {
      while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
    }

    mutating func expect(_ word: String) throws(Failure) {
      for byte in word.utf8 {
        guard index < bytes.count, bytes[index] == byte else {
          throw failure("expected '\(word)'")
        }
        index += 1
      }
    }

    mutating func value(depth: Int) throws(Failure) -> JSONValue {
      guard index < bytes.count else { throw failure("unexpected end of the text") }
      switch bytes[index] {
      case UInt8(ascii: "{"):
        guard depth < GRPCConfigJSON.maximumDepth else { throw failure("nested too deeply") }
        return try object(depth: depth + 1)
      case UInt8(ascii: "["):
        guard depth < GRPCConfigJSON.maximumDepth else { throw failure("nested too deeply") }
        return try array(depth: depth + 1)
      case UInt8(ascii: "\""): return .string(try string())
      case UInt8(ascii: "t"):
        try expect("true")
        return .bool(true)
      case UInt8(ascii: "f"):
        try expect("false")
        return .bool(false)
      case UInt8(ascii: "n"):
        try expect("null")
        return .null
      default: return .number(try number())
      }
    }

    mutating func object(depth: Int) throws(Failure) -> JSONValue {
      index += 1
      var members: [JSONMember] = []
      skipBlanks()
      if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
        index += 1
        return .object(members)
      }
      while true {
        skipBlanks()
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
          throw failure("expected a member name in quotes")
        }
        let key = try string()
        skipBlanks()
        try expect(":")
        skipBlanks()
        members.append(JSONMember(key, try value(depth: depth)))
        skipBlanks()
        guard index < bytes.count else { throw failure("unexpected end of the text") }
        if bytes[index] == UInt8(ascii: ",") {
          index += 1
          continue
        }
        try expect("}")
        return .object(members)
      }
    }

    mutating func array(depth: Int) throws(Failure) -> JSONValue {
      index += 1
      var elements: [JSONValue] = []
      skipBlanks()
      if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
        index += 1
        return .array(elements)
      }
      while true {
        skipBlanks()
        elements.append(try value(depth: depth))
        skipBlanks()
        guard index < bytes.count else { throw failure("unexpected end of the text") }
        if bytes[index] == UInt8(ascii: ",") {
          index += 1
          continue
        }
        try expect("]")
        return .array(elements)
      }
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`, kept as text.
    mutating func number() throws(Failure) -> String {
      let start = index
      if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
      let first = index
      guard digits() > 0 else { throw failure("expected a JSON value") }
      if bytes[first] == UInt8(ascii: "0"), index - first > 1 {
        throw failure("a number has no leading zeros")
      }
      if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
        index += 1
        guard digits() > 0 else { throw failure("expected digits after '.'") }
      }
      if index < bytes.count, bytes[index] | 0x20 == UInt8(ascii: "e") {
        index += 1
        if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == 0x2D {
          index += 1
        }
        guard digits() > 0 else { throw failure("expected digits in the exponent") }
      }
      return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    private mutating func digits() -> Int {
      let start = index
      while index < bytes.count, (0x30...0x39).contains(bytes[index]) { index += 1 }
      return index - start
    }

    mutating func string() throws(Failure) -> String {
      index += 1
      var scalars = String.UnicodeScalarView()
      var runStart = index
      func flush(_ end: Int) throws(Failure) {
        guard runStart < end else { return }
        guard let run = String(validating: bytes[runStart..<end], as: UTF8.self) else {
          throw Failure(message: "a string is not valid UTF-8", offset: runStart)
        }
        scalars.append(contentsOf: run.unicodeScalars)
      }
      while index < bytes.count {
        let byte = bytes[index]
        if byte == UInt8(ascii: "\"") {
          try flush(index)
          index += 1
          return String(scalars)
        }
        if byte < 0x20 { throw failure("a control character in a string") }
        if byte != UInt8(ascii: "\\") {
          index += 1
          continue
        }
        try flush(index)
        index += 1
        guard index < bytes.count else { break }
        let escaped = bytes[index]
        index += 1
        switch escaped {
        case UInt8(ascii: "\""): scalars.append("\"")
        case UInt8(ascii: "\\"): scalars.append("\\")
        case UInt8(ascii: "/"): scalars.append("/")
        case UInt8(ascii: "b"): scalars.append("\u{8}")
        case UInt8(ascii: "f"): scalars.append("\u{C}")
        case UInt8(ascii: "n"): scalars.append("\n")
        case UInt8(ascii: "r"): scalars.append("\r")
        case UInt8(ascii: "t"): scalars.append("\t")
        case UInt8(ascii: "u"):
          var unit = try hex4()
          if (0xD800...0xDBFF).contains(unit) {
            try expect("\\u")
            let low = try hex4()
            guard (0xDC00...0xDFFF).contains(low) else { throw failure("a lone surrogate") }
            unit = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
          }
          guard let scalar = Unicode.Scalar(unit) else { throw failure("a lone surrogate") }
          scalars.append(scalar)
        default: throw failure("an unknown escape in a string")
        }
        runStart = index
      }
      throw failure("a string without its closing quote")
    }

    private mutating func hex4() throws(Failure) -> UInt32 {
      guard index + 4 <= bytes.count else { throw failure("a short \\u escape") }
      var value: UInt32 = 0
      for _ in 0..<4 {
        let byte = bytes[index]
        let digit: UInt32
        switch byte {
        case 0x30...0x39: digit = UInt32(byte - 0x30)
        case 0x41...0x46: digit = UInt32(byte - 0x41 + 10)
        case 0x61...0x66: digit = UInt32(byte - 0x61 + 10)
        default: throw failure("a bad \\u escape")
        }
        value = value * 16 + digit
        index += 1
      }
      return value
    }
  }
}
