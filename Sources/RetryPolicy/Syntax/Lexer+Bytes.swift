// The lexer's byte-level checks, on its slow path: what a non-ASCII byte starts (a
// character, bytes that are not UTF-8, an invisible or direction-changing character), and
// the lone CR. Well-formed ASCII tokens never come here, only bad characters and non-ASCII.

extension Lexer {
  /// What the bytes at a non-ASCII (or otherwise unexpected) position hold.
  enum ByteRun {
    /// A character that shows as itself: part of a loose word, or a bad character.
    case visible(Unicode.Scalar)
    /// A character a reader cannot see, or one that changes the text's direction.
    case invisible(Unicode.Scalar)
    /// Bytes that are not UTF-8: one maximal ill-formed part (one column).
    case invalid
  }

  /// What the character of `bytes` at `index` is, and its length in bytes.
  ///
  /// The byte-level helpers are static: called on a lexer being changed, an instance method
  /// made the compiler copy the whole lexer for each call.
  static func byteRun(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int) -> (ByteRun, length: Int)
  {
    let (scalar, length) = SourceCharacters.decode(bytes, at: index)
    guard let scalar else { return (.invalid, length) }
    if SourceCharacters.invisibleName(of: scalar) != nil { return (.invisible(scalar), length) }
    return (.visible(scalar), length)
  }

  /// Whether a non-ASCII character at `index` may continue a word that is not an identifier
  /// (`sérverError`): a visible character, not bytes that are not UTF-8 nor an invisible one.
  static func continuesWordOutsideASCII(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int)
    -> Bool
  {
    if case .visible = byteRun(bytes, at: index).0 { return true }
    return false
  }

  /// The message for bytes that are not UTF-8, from `start` up to `end`.
  func invalidUTF8(from start: SourceLocation, to end: SourceLocation) -> DiagnosticMessage {
    let shown = slice(start.offset, Swift.min(end.offset, start.offset + 8))
    return .invalidUTF8(Array(shown), isCut: end.offset - start.offset > 8)
  }

  /// Whether a character a reader cannot see is an error where it stands: always between
  /// tokens, and in a comment only when it changes the direction of the text, since it can
  /// make the line read differently from what it is ("Trojan Source").
  static func isUnexpected(_ scalar: Unicode.Scalar, isInComment: Bool) -> Bool {
    !isInComment || SourceCharacters.changesDirection(scalar)
  }

  /// Reports an error at `range`; its message is built only when it will be kept, so that
  /// millions of bad characters cost a count each, not a message each.
  mutating func reportError(at range: SourceRange, _ message: (Lexer) -> DiagnosticMessage) {
    let built = diagnostics.isKeepingErrors ? message(self) : nil
    diagnostics.appendError(built, at: range)
  }
}
