/// The characters of a literal as written, such as the digits `1.5`.
///
/// Up to 16 ASCII bytes, as the digits of a number nearly always are, are kept inline in two
/// words: reading a literal makes no `String`, allocates nothing and leaves nothing to retain.
/// The `String` is made only when asked for (a diagnostic, the printer). Longer or non-ASCII
/// text is kept as a `String`. Each text has one representation, so the synthesized equality
/// compares texts.
struct LiteralText: Sendable, Hashable {
  /// Bytes 0 to 7, the first in the lowest byte.
  private var low: UInt64 = 0
  /// Bytes 8 to 15.
  private var high: UInt64 = 0
  /// How many bytes are inline (0 when `long` holds the text).
  private var count: UInt8 = 0
  /// The text when it does not fit inline.
  private var long: String?

  /// The text of `bytes`.
  init(_ bytes: UnsafeBufferPointer<UInt8>) {
    guard bytes.count <= 16 else {
      long = String(decoding: bytes, as: UTF8.self)
      return
    }
    var index = 0
    for byte in bytes {
      guard byte < 0x80 else {
        self = LiteralText(long: String(decoding: bytes, as: UTF8.self))
        return
      }
      if index < 8 {
        low |= UInt64(byte) << (8 * UInt64(index))
      } else {
        high |= UInt64(byte) << (8 * UInt64(index - 8))
      }
      index += 1
    }
    count = UInt8(truncatingIfNeeded: index)
  }

  private init(long: String) {
    self.long = long
  }

  /// The text of `string`.
  init(_ string: String) {
    var string = string
    let text = string.withUTF8 { LiteralText($0) }
    self = text
  }

  /// The text.
  var string: String {
    if let long { return long }
    let count = Int(count)
    return String(unsafeUninitializedCapacity: count) { buffer in
      for index in 0..<count {
        let word = index < 8 ? low : high
        buffer[index] = UInt8(truncatingIfNeeded: word >> (8 * UInt64(index % 8)))
      }
      return count
    }
  }
}
