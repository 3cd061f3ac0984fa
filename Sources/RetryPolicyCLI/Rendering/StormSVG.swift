import Foundation
import RetryPolicy
import RetryPolicyEngines
import RetryPolicySimulation

/// The SVG chart of `retry-policy storm --svg FILE`: self-contained (no scripts, fonts or
/// links), two panels over one time axis, the outage shaded in both: the backend's load per
/// second against its capacity, and the success ratio of each second's requests; one line
/// per policy.
enum StormSVG {
  /// The colours of the policies' lines, in order (then again).
  static let palette = ["#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf"]
  /// The colour of the outage's shading.
  static let outageColor = "#f6d5d5"

  static let width = 900.0
  static let left = 70.0
  static let right = 870.0
  static let loadPanel = (top: 90.0, bottom: 290.0)
  static let successPanel = (top: 330.0, bottom: 490.0)
  /// The characters of a legend line before it wraps: what fits in the chart's width at
  /// the font's size.
  static let legendWidth = 100

  static func render(_ results: [StormResult], scenario: StormScenario) -> String {
    let seconds = results.first?.seconds.count ?? 0
    let span = Double(max(seconds, 1))
    let loads = results.map { Double($0.seconds.maximumAttempts) / scenario.capacity }
    let top = niceCeiling(max(1.2, (loads.max() ?? 1) * 1.05))
    let legends = results.map { result in
      StormRendering.legendLines(result.name, width: legendWidth)
        + (StormRendering.refusalLegend(result).map { [$0 + " (dashed)"] } ?? [])
    }
    let height = successPanel.bottom + 50 + Double(legends.joined().count) * 18
    var svg = """
      <svg xmlns="http://www.w3.org/2000/svg" width="\(number(width))" \
      height="\(number(height))" viewBox="0 0 \(number(width)) \(number(height))" \
      font-family="sans-serif" font-size="12">

      """
    svg += "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n"
    svg +=
      "<text x=\"\(number(left))\" y=\"24\" font-size=\"15\" font-weight=\"bold\">"
      + "Retry storm: \(escape(StormRendering.summary(scenario)))</text>\n"
    func x(_ second: Double) -> Double { left + (right - left) * second / span }
    func loadY(_ value: Double) -> Double {
      loadPanel.bottom - (loadPanel.bottom - loadPanel.top) * min(value, top) / top
    }
    func successY(_ ratio: Double) -> Double {
      successPanel.bottom - (successPanel.bottom - successPanel.top) * ratio
    }
    if let start = scenario.outageStart, let end = scenario.outageEnd {
      let from = x(Double(start) / 1e9)
      let to = x(min(Double(end) / 1e9, span))
      for panel in [loadPanel, successPanel] {
        svg +=
          "<rect x=\"\(number(from))\" y=\"\(number(panel.top))\" "
          + "width=\"\(number(max(to - from, 1)))\" height=\"\(number(panel.bottom - panel.top))\" "
          + "fill=\"\(outageColor)\"/>\n"
      }
      svg +=
        "<text x=\"\(number(from + 4))\" y=\"\(number(loadPanel.top + 14))\" "
        + "fill=\"#a33\">outage</text>\n"
      if scenario.slowdown > 1 {
        let y = number(loadY(1 / scenario.slowdown))
        svg +=
          "<line x1=\"\(number(from))\" y1=\"\(y)\" x2=\"\(number(to))\" y2=\"\(y)\" "
          + "stroke=\"#000000\" stroke-width=\"1\" stroke-dasharray=\"2 3\"/>\n"
          + "<text x=\"\(number(to - 4))\" y=\"\(number(loadY(1 / scenario.slowdown) - 5))\" "
          + "text-anchor=\"end\" fill=\"#a33\">capacity in the outage</text>\n"
      }
    }
    // Axes, grid and labels.
    svg += panelFrame(loadPanel, title: "backend load ÷ capacity (attempts per second)")
    svg += panelFrame(successPanel, title: "success ratio of each second's requests")
    for step in 0...4 {
      let value = top * Double(step) / 4
      svg += gridLine(
        y: loadY(value), label: NumberText.decimal((value * 100).rounded() / 100) + "×")
      svg += gridLine(y: successY(Double(step) / 4), label: "\(step * 25)%")
    }
    svg +=
      "<line x1=\"\(number(left))\" y1=\"\(number(loadY(1)))\" x2=\"\(number(right))\" "
      + "y2=\"\(number(loadY(1)))\" stroke=\"#000000\" stroke-width=\"1.5\" "
      + "stroke-dasharray=\"6 4\"/>\n"
      + "<text x=\"\(number(right - 4))\" y=\"\(number(loadY(1) - 5))\" text-anchor=\"end\">"
      + "capacity</text>\n"
    for tick in timeTicks(seconds) {
      svg +=
        "<text x=\"\(number(x(Double(tick))))\" y=\"\(number(successPanel.bottom + 16))\" "
        + "text-anchor=\"middle\">\(tick)s</text>\n"
    }
    // One line per policy in each panel.
    var legendLine = 0
    for (index, result) in results.enumerated() {
      let color = palette[index % palette.count]
      // A point per second, or per column of seconds when there are more seconds than
      // pixels: the most attempts and the lowest success of the column's seconds.
      let columns = Self.columns(seconds)
      let extremes = result.seconds.extremes(columns)
      let load = zip(columns, extremes).map { range, value in
        point(
          x(Double(range.lowerBound + range.upperBound) / 2),
          loadY(Double(value.attempts) / scenario.capacity))
      }
      let success = zip(columns, extremes).map { range, value in
        point(x(Double(range.lowerBound + range.upperBound) / 2), successY(value.successRatio))
      }
      for points in [load, success] {
        svg +=
          "<polyline fill=\"none\" stroke=\"\(color)\" stroke-width=\"2\" "
          + "stroke-linejoin=\"round\" points=\"\(points.joined(separator: " "))\"/>\n"
      }
      if result.canRefuse {
        // The attempts the breakers and shedding stages refused each second, on the load's scale: load the
        // backend was spared.
        let refused = columns.map { range in
          let most = range.map { result.seconds[$0].refused }.max() ?? 0
          return point(
            x(Double(range.lowerBound + range.upperBound) / 2),
            loadY(Double(most) / scenario.capacity))
        }
        svg +=
          "<polyline fill=\"none\" stroke=\"\(color)\" stroke-width=\"1.5\" "
          + "stroke-dasharray=\"5 3\" stroke-linejoin=\"round\" "
          + "points=\"\(refused.joined(separator: " "))\"/>\n"
      }
      // The legend: a line per rule, long lines wrapped, further lines under the first.
      let y = successPanel.bottom + 40 + Double(legendLine) * 18
      svg +=
        "<rect x=\"\(number(left))\" y=\"\(number(y - 10))\" width=\"14\" height=\"10\" "
        + "fill=\"\(color)\"/>\n"
      for (line, text) in legends[index].enumerated() {
        let label = line == 0 ? "\(StormRendering.label(index))  " : ""
        let indent = line == 0 ? 20.0 : 44.0
        svg +=
          "<text x=\"\(number(left + indent))\" y=\"\(number(y + Double(line) * 18))\">"
          + label + escape(text) + "</text>\n"
      }
      legendLine += legends[index].count
    }
    svg += "</svg>\n"
    return svg
  }

  private static func panelFrame(_ panel: (top: Double, bottom: Double), title: String)
    -> String
  {
    "<text x=\"\(number(left))\" y=\"\(number(panel.top - 8))\" font-weight=\"bold\">"
      + "\(escape(title))</text>\n"
      + "<rect x=\"\(number(left))\" y=\"\(number(panel.top))\" width=\"\(number(right - left))\" "
      + "height=\"\(number(panel.bottom - panel.top))\" fill=\"none\" stroke=\"#888888\"/>\n"
  }

  private static func gridLine(y: Double, label: String) -> String {
    "<line x1=\"\(number(left))\" y1=\"\(number(y))\" x2=\"\(number(right))\" "
      + "y2=\"\(number(y))\" stroke=\"#e0e0e0\"/>\n"
      + "<text x=\"\(number(left - 6))\" y=\"\(number(y + 4))\" text-anchor=\"end\">"
      + "\(label)</text>\n"
  }

  /// The most points of one line: one per pixel of the panels' width.
  static let maximumPoints = 800

  /// The seconds each point of a line covers: one each, or as many as make
  /// ``maximumPoints`` columns.
  static func columns(_ seconds: Int) -> [Range<Int>] {
    guard seconds > maximumPoints else { return (0..<seconds).map { $0..<($0 + 1) } }
    return (0..<maximumPoints).map { column in
      (column * seconds / maximumPoints)..<((column + 1) * seconds / maximumPoints)
    }
  }

  /// About eight round ticks over `seconds`.
  private static func timeTicks(_ seconds: Int) -> [Int] {
    let steps = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 1800, 3600, 7200, 18000, 36000]
    let step = steps.first { seconds / $0 <= 8 } ?? max(1, seconds / 8)
    return Array(stride(from: 0, through: seconds, by: step))
  }

  /// A round number at or above `value`: 1, 1.5, 2, 3, 4, 5, 6, 8 or 10 times a power of ten.
  private static func niceCeiling(_ value: Double) -> Double {
    let power = pow(10, (log10(value)).rounded(.down))
    let steps = [1, 1.5, 2, 3, 4, 5, 6, 8, 10]
    return (steps.first { $0 * power >= value } ?? 10) * power
  }

  private static func point(_ x: Double, _ y: Double) -> String {
    number(x) + "," + number(y)
  }

  /// One decimal at most: short and the same on every run.
  private static func number(_ value: Double) -> String {
    NumberText.decimal((value * 10).rounded() / 10)
  }

  private static func escape(_ text: String) -> String {
    text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
      .replacingOccurrences(of: ">", with: "&gt;")
  }
}
