import Foundation

/// A plain-text table in Markdown pipe syntax, so it can be pasted into BENCHMARKS.md.
struct ReportTable: Sendable {
  /// How a column's cells line up.
  enum Alignment: Sendable {
    case left
    case right
  }

  var headers: [String]
  var alignments: [Alignment]
  var rows: [[String]] = []

  init(headers: [String], alignments: [Alignment]) {
    self.headers = headers
    self.alignments = alignments
  }

  /// Appends a row; missing cells are empty.
  mutating func append(_ cells: [String]) {
    rows.append(cells)
  }

  /// The table as lines of text, columns padded to their widest cell.
  func render() -> String {
    let columns = headers.count
    var widths = headers.map(\.count)
    for row in rows {
      for (column, cell) in row.prefix(columns).enumerated() {
        widths[column] = max(widths[column], cell.count)
      }
    }
    func line(_ cells: [String]) -> String {
      let padded = (0..<columns).map { column -> String in
        let cell = column < cells.count ? cells[column] : ""
        let padding = String(repeating: " ", count: widths[column] - cell.count)
        return alignments[column] == .left ? cell + padding : padding + cell
      }
      return "| " + padded.joined(separator: " | ") + " |"
    }
    let rule = (0..<columns).map { column -> String in
      let dashes = String(repeating: "-", count: max(widths[column], 3))
      return alignments[column] == .left ? dashes : String(dashes.dropLast()) + ":"
    }
    let separator = "| " + rule.joined(separator: " | ") + " |"
    return ([line(headers), separator] + rows.map(line)).joined(separator: "\n")
  }
}

/// Formats numbers for the tables.
enum Format {
  /// A time given in nanoseconds, with a unit that keeps 3 or 4 significant digits.
  static func time(nanoseconds: Double) -> String {
    let magnitude = abs(nanoseconds)
    if magnitude < 1_000 { return String(format: "%.1f ns", nanoseconds) }
    if magnitude < 1_000_000 { return String(format: "%.2f µs", nanoseconds / 1e3) }
    if magnitude < 1_000_000_000 { return String(format: "%.2f ms", nanoseconds / 1e6) }
    return String(format: "%.3f s", nanoseconds / 1e9)
  }

  /// A count per operation: whole numbers plainly, others with two decimals.
  static func count(_ value: Double) -> String {
    value == value.rounded() ? String(format: "%.0f", value) : String(format: "%.2f", value)
  }

  /// A whole number with thousands separators: `100,000`.
  static func integer(_ value: Int) -> String {
    let digits = String(value.magnitude)
    var grouped = ""
    for (index, digit) in digits.enumerated() {
      if index > 0 && (digits.count - index) % 3 == 0 { grouped.append(",") }
      grouped.append(digit)
    }
    return value < 0 ? "-" + grouped : grouped
  }

  /// A ratio such as `1.23×`.
  static func ratio(_ value: Double) -> String {
    value < 0.01 ? String(format: "%.4f×", value) : String(format: "%.2f×", value)
  }

  /// A size in bytes, as B, KiB or MiB.
  static func bytes(_ value: Double) -> String {
    if abs(value) < 10_240 { return String(format: "%.0f B", value) }
    if abs(value) < 10_485_760 { return String(format: "%.1f KiB", value / 1024) }
    return String(format: "%.1f MiB", value / 1_048_576)
  }
}
