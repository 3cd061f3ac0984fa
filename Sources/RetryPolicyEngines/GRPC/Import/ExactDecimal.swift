/// A JSON number's value read from its text, exactly.
///
/// It says whether it is whole, and its value when
/// it fits an `Int`. `2.9` is not whole; `2.0`, `20e-1` and `1e3` are; `1e30` is whole but
/// does not fit.
struct ExactDecimal {
  /// The significant digits, without leading zeros.
  private var digits: [UInt8]
  /// Where the decimal point stands in `digits` (may be negative or past the end).
  private var point: Int
  private var isNegative: Bool

  init?(_ text: String) {
    var bytes = Array(text.utf8)[...]
    isNegative = bytes.first == UInt8(ascii: "-")
    if isNegative { bytes = bytes.dropFirst() }
    var whole: [UInt8] = []
    var fraction: [UInt8] = []
    while let byte = bytes.first, (0x30...0x39).contains(byte) {
      whole.append(byte - 0x30)
      bytes = bytes.dropFirst()
    }
    if bytes.first == UInt8(ascii: ".") {
      bytes = bytes.dropFirst()
      while let byte = bytes.first, (0x30...0x39).contains(byte) {
        fraction.append(byte - 0x30)
        bytes = bytes.dropFirst()
      }
    }
    guard !whole.isEmpty || !fraction.isEmpty else { return nil }
    var exponent = 0
    if let byte = bytes.first, byte | 0x20 == UInt8(ascii: "e") {
      bytes = bytes.dropFirst()
      var sign = 1
      if bytes.first == UInt8(ascii: "-") || bytes.first == UInt8(ascii: "+") {
        sign = bytes.first == UInt8(ascii: "-") ? -1 : 1
        bytes = bytes.dropFirst()
      }
      guard !bytes.isEmpty else { return nil }
      while let byte = bytes.first, (0x30...0x39).contains(byte) {
        // Saturates: an exponent past a million says "out of range" as well as any.
        exponent = min(exponent * 10 + Int(byte - 0x30), 1_000_000)
        bytes = bytes.dropFirst()
      }
      exponent *= sign
    }
    guard bytes.isEmpty else { return nil }
    var all = whole + fraction
    var point = whole.count + exponent
    while let first = all.first, first == 0 {
      all.removeFirst()
      point -= 1
    }
    while let last = all.last, last == 0 { all.removeLast() }
    digits = all
    self.point = all.isEmpty ? 0 : point
  }

  /// Whether the number has no fraction.
  var isIntegral: Bool { digits.isEmpty || point >= digits.count }

  /// The value when it is whole and fits an `Int` (at most 18 digits); else nil.
  var integerValue: Int? {
    guard isIntegral else { return nil }
    guard !digits.isEmpty else { return 0 }
    guard point <= 18 else { return nil }
    var value = 0
    for index in 0..<point {
      value = value * 10 + Int(index < digits.count ? digits[index] : 0)
    }
    return isNegative ? -value : value
  }
}
