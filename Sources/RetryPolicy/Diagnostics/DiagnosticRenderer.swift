/// Turns diagnostics into the text a person reads, in the compiler's form.
///
///     payments.retry:3:14: error: unknown unit 'd'; did you mean 's'?
///         retry 5 delay 2d
///                       ^
///
/// Color (ANSI escapes) is used only when asked for; callers decide from the terminal and
/// `NO_COLOR`.
///
/// The line and column printed are the `SourceLocationConverter`'s, made once per text:
/// the same count of lines (LF or CR LF; a lone CR ends none) and columns (Unicode scalars)
/// as every other tool's.
///
/// Each diagnostic costs time in proportion to the stretch of its line that is shown (at most
/// `maximumShownColumns` characters), found from the diagnostic's byte offset: never the
/// whole line, so many diagnostics on one long line render in linear time. In the shown line
/// a tab is a space, bytes that are not UTF-8 are U+FFFD, invisible and direction-changing
/// characters are written `<U+202E>`, and the marker lands under the right cell after wide
/// (CJK, emoji) and combining characters.
public struct DiagnosticRenderer: Sendable {
  /// The name the text is reported under: a file path, or `<policy>`.
  public var sourceName: String
  /// Whether to color severities and the marker with ANSI escapes.
  public var usesColor: Bool
  private let bytes: [UInt8]
  /// Lines and columns of the text's byte offsets.
  package let converter: SourceLocationConverter

  /// The widest stretch of a source line shown; longer lines are cut around the column.
  static let maximumShownColumns = 120

  /// Creates a renderer for the diagnostics of one text.
  public init(source: String, sourceName: String, usesColor: Bool = false) {
    self.init(bytes: Array(source.utf8), sourceName: sourceName, usesColor: usesColor)
  }

  /// Creates a renderer for the diagnostics of a text read as bytes, as
  /// ``analyze(policyFile:vocabulary:)-([UInt8],_)`` reads them.
  public init(bytes: [UInt8], sourceName: String, usesColor: Bool = false) {
    self.sourceName = sourceName
    self.usesColor = usesColor
    self.bytes = bytes
    self.converter = SourceLocationConverter(bytes: bytes)
  }

  /// The diagnostic, its source line and marker, then its notes the same way.
  public func render(_ diagnostic: Diagnostic) -> String {
    var output = ""
    bytes.withUnsafeBufferPointer { text in
      append(diagnostic, of: text, to: &output)
      for note in diagnostic.notes {
        append(note, of: text, to: &output)
      }
    }
    return output
  }

  /// Every diagnostic rendered, in order.
  public func render(_ diagnostics: [Diagnostic]) -> String {
    var output = ""
    bytes.withUnsafeBufferPointer { text in
      for diagnostic in diagnostics {
        append(diagnostic, of: text, to: &output)
        for note in diagnostic.notes {
          append(note, of: text, to: &output)
        }
      }
    }
    return output
  }

  private func append(
    _ diagnostic: Diagnostic, of text: UnsafeBufferPointer<UInt8>, to output: inout String
  ) {
    let severity = diagnostic.severity.rawValue
    let label =
      usesColor ? color(for: diagnostic.severity) + severity + ":\u{1B}[0m" : severity + ":"
    let offset = diagnostic.range.start.offset
    let place = converter.location(ofOffset: offset)
    let location = "\(sourceName):\(place.line):\(place.column):"
    let head = usesColor ? "\u{1B}[1m\(location)\u{1B}[0m" : location
    let message = usesColor ? "\u{1B}[1m\(diagnostic.message)\u{1B}[0m" : diagnostic.message
    output += "\(head) \(label) \(message)\n"
    guard offset >= 0, offset <= text.count else { return }
    let (shown, markerCells) = Self.window(of: text, at: offset)
    output += shown + "\n"
    let marker = usesColor ? "\u{1B}[1;32m^\u{1B}[0m" : "^"
    output += String(repeating: " ", count: markerCells) + marker + "\n"
  }

  /// The part of the line around byte `offset` to show, and the cells before the marker.
  ///
  /// At most `maximumShownColumns` cells (a wide character takes two, an escaped one its
  /// `<U+XXXX>`): half of them before the marker when the line goes on long enough after it,
  /// more before when it ends sooner.
  static func window(of text: UnsafeBufferPointer<UInt8>, at offset: Int) -> (String, Int) {
    let limit = maximumShownColumns
    // Cells after the marker, up to the limit or the line's end.
    var end = offset
    var after = 0
    while end < text.count, after < limit, !isLineEnd(text, at: end) {
      let (scalar, length) = SourceCharacters.decode(text, at: end)
      after += cells(scalar)
      end += length
    }
    // Cells before it, back to the line's start or as many as are left to show.
    var start = offset
    var before = 0
    let lineStart = SourceCharacters.hasByteOrderMark(text) ? 3 : 0
    while start > lineStart, before < max(limit / 2, limit - after), text[start - 1] != 0x0A {
      start -= 1
      // Back to the first byte of the character (at most three continuation bytes).
      var back = 0
      while start > lineStart, back < 3, text[start] & 0xC0 == 0x80 {
        start -= 1
        back += 1
      }
      // Ill-formed bytes read as several characters: step back one byte at a time.
      let (scalar, length) = SourceCharacters.decode(text, at: start)
      if length != back + 1 {
        start += back
        before += 1
      } else {
        before += cells(scalar)
      }
    }
    let isCutBefore = start > lineStart && text[start - 1] != 0x0A
    if before + after > limit {
      // Shorten the tail so the line stays at the limit.
      end = offset
      var cells = before
      while end < text.count, !isLineEnd(text, at: end) {
        let (scalar, length) = SourceCharacters.decode(text, at: end)
        cells += self.cells(scalar)
        if cells > limit, end > offset { break }
        end += length
      }
    }
    var shownBytes: [UInt8] = isCutBefore ? Array("…".utf8) : []
    shownBytes.reserveCapacity(end - start + 8)
    var markerCells = isCutBefore ? 1 : 0
    var index = start
    while index < end {
      let byte = text[index]
      if byte >= 0x20 && byte < 0x7F {
        // Printable ASCII, most of any line: shown as it is, one cell.
        if index < offset { markerCells += 1 }
        shownBytes.append(byte)
        index += 1
        continue
      }
      let (scalar, length) = SourceCharacters.decode(text, at: index)
      let piece = shown(scalar)
      if index < offset { markerCells += piece.cells }
      shownBytes.append(contentsOf: piece.text.utf8)
      index += length
    }
    if end < text.count, !isLineEnd(text, at: end) { shownBytes.append(contentsOf: "…".utf8) }
    return (String(decoding: shownBytes, as: UTF8.self), markerCells)
  }

  /// Whether a line ends at `index`: LF, or CR LF.
  private static func isLineEnd(_ text: UnsafeBufferPointer<UInt8>, at index: Int) -> Bool {
    text[index] == 0x0A
      || (text[index] == 0x0D && index + 1 < text.count && text[index + 1] == 0x0A)
  }

  /// The cells a character of the source line takes when shown, without building its text.
  private static func cells(_ scalar: Unicode.Scalar?) -> Int {
    guard let scalar else { return 1 }
    let value = scalar.value
    if value >= 0x20 && value < 0x7F || value == 0x09 { return 1 }
    if SourceCharacters.invisibleName(of: scalar) != nil {
      // `<U+XXXX>`: four hex digits at least, as `SourceCharacters.codePoint` writes them.
      let digits = (32 - value.leadingZeroBitCount + 3) / 4
      return 4 + max(4, digits)
    }
    return SourceCharacters.cellWidth(scalar)
  }

  /// How a character of the source line is shown, and the cells it takes.
  private static func shown(_ scalar: Unicode.Scalar?) -> (text: String, cells: Int) {
    guard let scalar else { return ("\u{FFFD}", 1) }
    if scalar == "\t" { return (" ", 1) }
    if SourceCharacters.invisibleName(of: scalar) != nil {
      let text = "<\(SourceCharacters.codePoint(scalar))>"
      return (text, text.utf8.count)
    }
    return (String(scalar), SourceCharacters.cellWidth(scalar))
  }

  private func color(for severity: Diagnostic.Severity) -> String {
    switch severity {
    case .error: "\u{1B}[1;31m"
    case .warning: "\u{1B}[1;35m"
    case .note: "\u{1B}[1;36m"
    }
  }
}
