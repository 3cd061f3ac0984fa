/// The characters of a literal as written, such as the digits `1.5`.
///
/// Up to 15 ASCII bytes, as the digits of a number nearly always are, are kept inline in two
/// words (the length in the last byte): reading a literal makes no `String`, allocates nothing
/// and leaves nothing to retain. The `String` is made only when asked for (a diagnostic, the
/// printer). Longer or non-ASCII text is kept as a `String`. Each text has one
/// representation, so the synthesized equality compares texts.
struct LiteralText: Sendable, Hashable {
  private enum Storage: Sendable, Hashable {
    /// Bytes 0 to 7 in the first word, the first in the lowest byte; bytes 8 to 14 in the
    /// second, and the length in its highest byte.
    case inline(UInt64, UInt64)
    /// Text too long, or not ASCII.
    case long(String)
  }

  private var storage: Storage

  /// The text of `bytes`.
  init(_ bytes: UnsafeBufferPointer<UInt8>) {
    guard bytes.count <= 15 else {
      storage = .long(String(decoding: bytes, as: UTF8.self))
      return
    }
    var low: UInt64 = 0
    var high = UInt64(bytes.count) << 56
    var index = 0
    for byte in bytes {
      guard byte < 0x80 else {
        storage = .long(String(decoding: bytes, as: UTF8.self))
        return
      }
      if index < 8 {
        low |= UInt64(byte) << (8 * UInt64(index))
      } else {
        high |= UInt64(byte) << (8 * UInt64(index - 8))
      }
      index += 1
    }
    storage = .inline(low, high)
  }

  /// The text of `string`.
  init(_ string: String) {
    var string = string
    self = string.withUTF8 { LiteralText($0) }
  }

  /// Calls `body` with the text's UTF-8 bytes, read in place: no `String` is made for inline
  /// text.
  func withUTF8<Result>(_ body: (UnsafeRawBufferPointer) -> Result) -> Result {
    switch storage {
    case .long(let text):
      var text = text
      return text.withUTF8 { body(UnsafeRawBufferPointer($0)) }
    case .inline(let low, let high):
      let count = Int(high >> 56)
      // Little-endian words hold byte 0 first in memory, then bytes 1 to 14 in order.
      return withUnsafeBytes(of: (low.littleEndian, high.littleEndian)) { words in
        body(UnsafeRawBufferPointer(rebasing: words[0..<count]))
      }
    }
  }

  /// The text.
  var string: String {
    switch storage {
    case .long(let text):
      return text
    case .inline(let low, let high):
      let count = Int(high >> 56)
      return String(unsafeUninitializedCapacity: count) { buffer in
        for index in 0..<count {
          let word = index < 8 ? low : high
          buffer[index] = UInt8(truncatingIfNeeded: word >> (8 * UInt64(index % 8)))
        }
        return count
      }
    }
  }
}
