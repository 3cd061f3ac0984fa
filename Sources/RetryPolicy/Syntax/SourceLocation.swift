/// A position in policy text: a line and a column, both counted from 1.
///
/// Columns count Unicode scalars, so a policy that contains `é` before an error
/// still points at the right character. `offset` is the UTF-8 byte offset, for tools.
public struct SourceLocation: Sendable, Hashable, Comparable, CustomStringConvertible {
  // Stored in 32 bits each, so that the ranges every syntax node and token carries stay small
  // (a range is 24 bytes). Values outside 0...UInt32.max are clamped: a text longer than
  // 4 GiB has its later places clamped, and nothing traps.
  private var storedLine: UInt32
  private var storedColumn: UInt32
  private var storedOffset: UInt32

  /// The line, counted from 1.
  public var line: Int {
    get { Int(storedLine) }
    set { storedLine = UInt32(clamping: newValue) }
  }
  /// The column in Unicode scalars, counted from 1.
  public var column: Int {
    get { Int(storedColumn) }
    set { storedColumn = UInt32(clamping: newValue) }
  }
  /// The offset in UTF-8 bytes from the start of the text, counted from 0.
  public var offset: Int {
    get { Int(storedOffset) }
    set { storedOffset = UInt32(clamping: newValue) }
  }

  /// Creates a location from a line, a column and a byte offset.
  public init(line: Int, column: Int, offset: Int) {
    storedLine = UInt32(clamping: line)
    storedColumn = UInt32(clamping: column)
    storedOffset = UInt32(clamping: offset)
  }

  /// Creates a location from values already in range, as the lexer keeps them.
  @inline(__always)
  init(line: UInt32, column: UInt32, offset: UInt32) {
    storedLine = line
    storedColumn = column
    storedOffset = offset
  }

  /// The first character of a text.
  public static let start = SourceLocation(line: 1, column: 1, offset: 0)

  /// `line:column`.
  public var description: String { "\(line):\(column)" }

  /// Orders locations by their place in the text.
  public static func < (lhs: SourceLocation, rhs: SourceLocation) -> Bool {
    lhs.storedOffset < rhs.storedOffset
  }
}

/// A stretch of policy text, from `start` up to but not including `end`.
public struct SourceRange: Sendable, Hashable, CustomStringConvertible {
  /// The first character of the range.
  public var start: SourceLocation
  /// The location just past the last character of the range.
  public var end: SourceLocation

  /// Creates a range between two locations.
  public init(start: SourceLocation, end: SourceLocation) {
    self.start = start
    self.end = end
  }

  /// The range that covers both `self` and `other`.
  public func union(_ other: SourceRange) -> SourceRange {
    SourceRange(start: min(start, other.start), end: max(end, other.end))
  }

  /// `line:column-line:column`.
  public var description: String { "\(start)-\(end)" }
}
