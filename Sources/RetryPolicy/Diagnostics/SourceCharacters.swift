// Characters of policy text as a person sees them: UTF-8 decoded byte by byte, the
// characters that are invisible or change the direction of text, and how wide each is in a
// terminal. The lexer and the renderer read text through these, so that a column, a marker
// and a message agree.

/// Reading policy text's characters from its UTF-8 bytes, and naming the ones a reader
/// cannot see.
package enum SourceCharacters {
  /// The scalar encoded at `index`, and the bytes it takes; nil for bytes that are not UTF-8.
  ///
  /// Ill-formed bytes are taken a maximal subpart at a time (the Unicode Standard's
  /// recommended practice, which `String(decoding:as:)` follows too): each such part is one
  /// U+FFFD in a decoded string, so one column. Overlong forms (`C0 AF`), encoded surrogates
  /// (`ED A0 80`) and values past U+10FFFF are ill-formed.
  @inline(__always)
  static func decode(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int) -> (
    scalar: Unicode.Scalar?, length: Int
  ) {
    let first = bytes[index]
    if first < 0x80 { return (Unicode.Scalar(first), 1) }
    var low: UInt8 = 0x80
    var high: UInt8 = 0xBF
    let count: Int
    var value: UInt32
    switch first {
    case 0xC2...0xDF: (count, value) = (2, UInt32(first & 0x1F))
    case 0xE0: (count, value, low) = (3, 0, 0xA0)
    case 0xE1...0xEC, 0xEE...0xEF: (count, value) = (3, UInt32(first & 0x0F))
    case 0xED: (count, value, high) = (3, 0x0D, 0x9F)
    case 0xF0: (count, value, low) = (4, 0, 0x90)
    case 0xF1...0xF3: (count, value) = (4, UInt32(first & 0x07))
    case 0xF4: (count, value, high) = (4, 4, 0x8F)
    default: return (nil, 1)
    }
    var length = 1
    while length < count {
      guard index + length < bytes.count else { return (nil, length) }
      let byte = bytes[index + length]
      guard byte >= low, byte <= high else { return (nil, length) }
      value = value << 6 | UInt32(byte & 0x3F)
      (low, high) = (0x80, 0xBF)
      length += 1
    }
    return (Unicode.Scalar(value), length)
  }

  /// Whether the text starts with a UTF-8 byte order mark (`EF BB BF`).
  static func hasByteOrderMark(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
    bytes.count >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF
  }

  /// Whether `scalar` changes the direction of the text around it (the characters of
  /// "Trojan Source", CVE-2021-42574): embeddings, overrides, isolates and marks.
  static func changesDirection(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.value {
    case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: true
    default: false
    }
  }

  /// The name of a character that a reader cannot see or tell apart from a space, such as
  /// `no-break space` for U+00A0; nil for a character that shows as itself.
  package static func invisibleName(of scalar: Unicode.Scalar) -> String? {
    let value = scalar.value
    if value >= 0x20 && value < 0x7F { return nil }
    if let name = names[value] { return name }
    switch value {
    case 0x00...0x1F, 0x7F...0x9F: return "control character"
    case 0x2000...0x200A: return "space"
    case 0xFE00...0xFE0F, 0xE0100...0xE01EF: return "variation selector"
    case 0xE0000...0xE007F: return "tag character"
    default: break
    }
    if scalar.properties.generalCategory == .format { return "format character" }
    if scalar.properties.isWhitespace { return "space" }
    return nil
  }

  /// The names of single characters, one `HEX name` a line.
  private static let names: [UInt32: String] = {
    let table = """
      0000 null
      0009 tab
      000A line feed
      000B line tabulation
      000C form feed
      000D carriage return
      001B escape
      007F delete
      0085 next line
      00A0 no-break space
      00AD soft hyphen
      034F combining grapheme joiner
      061C arabic letter mark
      115F hangul choseong filler
      1160 hangul jungseong filler
      1680 ogham space mark
      180E mongolian vowel separator
      200B zero width space
      200C zero width non-joiner
      200D zero width joiner
      200E left-to-right mark
      200F right-to-left mark
      2028 line separator
      2029 paragraph separator
      202A left-to-right embedding
      202B right-to-left embedding
      202C pop directional formatting
      202D left-to-right override
      202E right-to-left override
      202F narrow no-break space
      205F medium mathematical space
      2060 word joiner
      2061 function application
      2062 invisible times
      2063 invisible separator
      2064 invisible plus
      2066 left-to-right isolate
      2067 right-to-left isolate
      2068 first strong isolate
      2069 pop directional isolate
      3000 ideographic space
      3164 hangul filler
      FEFF zero width no-break space
      FFA0 halfwidth hangul filler
      """
    var names: [UInt32: String] = [:]
    for line in table.split(separator: "\n") {
      let trimmed = line.drop { $0 == " " }
      guard let space = trimmed.firstIndex(of: " "),
        let value = UInt32(trimmed[..<space], radix: 16)
      else { continue }
      names[value] = String(trimmed[trimmed.index(after: space)...])
    }
    return names
  }()

  /// `U+00A0`: the code point in the standard notation.
  package static func codePoint(_ scalar: Unicode.Scalar) -> String {
    let hex = String(scalar.value, radix: 16, uppercase: true)
    return "U+" + String(repeating: "0", count: Swift.max(0, 4 - hex.count)) + hex
  }

  /// `text` with every invisible or direction-changing character written as `<U+202E>`, so
  /// that echoing source text in a message can neither hide characters nor reorder the line.
  package static func escaped(_ text: String) -> String {
    guard text.unicodeScalars.contains(where: { invisibleName(of: $0) != nil }) else {
      return text
    }
    var result = ""
    for scalar in text.unicodeScalars {
      if invisibleName(of: scalar) != nil {
        result += "<\(codePoint(scalar))>"
      } else {
        result.unicodeScalars.append(scalar)
      }
    }
    return result
  }

  /// The cells `scalar` takes in a terminal: 0 for combining marks, 2 for wide (East Asian
  /// wide and full-width, emoji), 1 otherwise.
  static func cellWidth(_ scalar: Unicode.Scalar) -> Int {
    let value = scalar.value
    if value < 0x300 { return 1 }
    switch scalar.properties.generalCategory {
    case .nonspacingMark, .enclosingMark: return 0
    default: break
    }
    if scalar.properties.isEmojiPresentation { return 2 }
    switch value {
    case 0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF,
      0xA000...0xA4CF, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60,
      0xFFE0...0xFFE6, 0x1F300...0x1F64F, 0x1F900...0x1F9FF, 0x20000...0x2FFFD,
      0x30000...0x3FFFD:
      return 2
    default:
      return 1
    }
  }
}
