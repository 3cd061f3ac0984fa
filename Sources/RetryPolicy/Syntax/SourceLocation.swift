/// A position in policy text: a line and a column, both counted from 1.
///
/// Columns count Unicode scalars, so a policy that contains `é` before an error
/// still points at the right character. `offset` is the UTF-8 byte offset, for tools.
public struct SourceLocation: Sendable, Hashable, Comparable, CustomStringConvertible {
  /// The line, counted from 1.
  public var line: Int
  /// The column in Unicode scalars, counted from 1.
  public var column: Int
  /// The offset in UTF-8 bytes from the start of the text, counted from 0.
  public var offset: Int

  /// Creates a location from a line, a column and a byte offset.
  public init(line: Int, column: Int, offset: Int) {
    self.line = line
    self.column = column
    self.offset = offset
  }

  /// The first character of a text.
  public static let start = SourceLocation(line: 1, column: 1, offset: 0)

  /// `line:column`.
  public var description: String { "\(line):\(column)" }

  /// Orders locations by their place in the text.
  public static func < (lhs: SourceLocation, rhs: SourceLocation) -> Bool {
    lhs.offset < rhs.offset
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
