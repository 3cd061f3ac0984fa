import Foundation
import RetryPolicy
import RetryPolicyEngines
import RetryPolicySimulation

/// The report of `retry-policy storm`: JSON, and the text table with a chart per policy.
enum StormRendering {
  /// The JSON form (contract §11): `{"policies": [{"policy": …, "offered": …, …}]}`.
  static func jsonValue(_ results: [StormResult]) -> JSONValue {
    .object([
      JSONMember(
        "policies",
        .array(
          results.map { result in
            // `refused` and `refusedBy` (contract §14) only for a policy with `breaker`,
            // `limit`, `throttle` or `rate`: the others' bytes stay as they were.
            .object(
              [
                JSONMember("policy", .string(result.name)),
                JSONMember("offered", .int(result.offered)),
                JSONMember("attempts", .int(result.attempts)),
              ]
                + (result.canRefuse
                  ? [
                    JSONMember("refused", .int(result.refused)),
                    JSONMember(
                      "refusedBy",
                      .object(
                        StormRefusal.allCases.map {
                          JSONMember($0.name, .int(result.refused(by: $0)))
                        })),
                  ] : [])
                + [
                  JSONMember("amplification", .double(rounded(result.amplification))),
                  JSONMember(
                    "outageAmplification",
                    result.outageAmplification.map { .double(rounded($0)) } ?? .null),
                  JSONMember("successRatio", .double(rounded(result.successRatio))),
                  JSONMember("p50", result.p50.map { .double($0) } ?? .null),
                  JSONMember("p99", result.p99.map { .double($0) } ?? .null),
                  JSONMember("peakLoad", .double(rounded(result.peakLoad))),
                  JSONMember(
                    "recoverySeconds", result.recoverySeconds.map { .double($0) } ?? .null),
                ])
          }))
    ])
  }

  /// What refused the policy's attempts, for a legend: nil for a policy that refuses none.
  ///
  /// A policy with only `breaker` keeps the line the breaker's storms always had.
  static func refusalLegend(_ result: StormResult) -> String? {
    guard result.canRefuse else { return nil }
    let policy = result.policy
    guard policy.limit != nil || policy.throttle != nil || policy.rate != nil else {
      return "refused by the clients' breakers: \(result.refused) attempts"
    }
    let causes = StormRefusal.allCases.filter { cause in
      switch cause {
      case .breaker: policy.breaker != nil
      case .limit: policy.limit != nil
      case .throttle: policy.throttle != nil
      case .rate: policy.rate != nil
      }
    }
    return "refused: \(result.refused) attempts ("
      + causes.map { "\($0.name) \(result.refused(by: $0))" }.joined(separator: ", ") + ")"
  }

  /// Four decimals: enough for the comparison, and short.
  static func rounded(_ value: Double) -> Double {
    (value * 10_000).rounded() / 10_000
  }

  /// The letter that names policy `index` in the table and charts (A, B and so on).
  static func label(_ index: Int) -> String {
    index < 26 ? String(UnicodeScalar(UInt8(65 + index))) : "P\(index + 1)"
  }

  /// One line describing the scenario.
  static func summary(_ scenario: StormScenario) -> String {
    var text =
      "\(scenario.clients) clients × \(NumberText.decimal(scenario.rate)) req/s, capacity "
      + "\(NumberText.decimal(rounded(scenario.capacity)))/s, \(seconds(scenario.duration)), "
      + "seed \(scenario.seed)"
    if let start = scenario.outageStart {
      var what: [String] = []
      if scenario.failureRate > 0 {
        what.append(
          scenario.failureRate >= 1
            ? "every attempt fails"
            : "\(NumberText.decimal(rounded(scenario.failureRate * 100)))% of attempts fail")
      }
      if scenario.slowdown > 1 { what.append("\(NumberText.decimal(scenario.slowdown))× slower") }
      text +=
        "; outage \(seconds(start))+\(seconds(scenario.outageLength)): "
        + what.joined(separator: ", ")
    }
    return text
  }

  static func seconds(_ nanoseconds: Int64) -> String {
    NumberText.decimal(rounded(Double(nanoseconds) / 1e9)) + "s"
  }

  /// The table, then a chart per policy.
  static func text(_ results: [StormResult], scenario: StormScenario, usesColor: Bool) -> String {
    var lines = ["storm: " + summary(scenario), ""]
    for (index, result) in results.enumerated() {
      lines += labeled(index, result.name)
    }
    lines.append("")
    // The attempts clients' breakers and shedding stages refused, when a policy has one.
    let showsRefused = results.contains(where: \.canRefuse)
    var header = [
      "", "offered", "attempts", "amplif.", "in outage", "success", "p50", "p99", "peak load",
      "recovery",
    ]
    if showsRefused { header.insert("refused", at: 3) }
    var rows = [header]
    for (index, result) in results.enumerated() {
      var row = [
        label(index), String(result.offered), String(result.attempts),
        fixed(result.amplification, 2), result.outageAmplification.map { fixed($0, 2) } ?? "-",
        fixed(result.successRatio * 100, 1) + "%", latency(result.p50), latency(result.p99),
        fixed(result.peakLoad, 2) + "×",
        scenario.outageStart == nil
          ? "-" : result.recoverySeconds.map { fixed($0, 0) + "s" } ?? "did not recover",
      ]
      if showsRefused {
        row.insert(result.canRefuse ? String(result.refused) : "-", at: 3)
      }
      rows.append(row)
    }
    let widths = header.indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
    for row in rows {
      let cells = row.enumerated().map { column, cell in
        let pad = String(repeating: " ", count: widths[column] - cell.count)
        return column == 0 ? "  " + cell + pad : pad + cell
      }
      lines.append(cells.joined(separator: "  "))
    }
    // A legend line for each policy that sheds load: its refusals by cause.
    for (index, result) in results.enumerated()
    where result.policy.limit != nil
      || result.policy.throttle != nil || result.policy.rate != nil
    {
      lines.append("  \(label(index))  " + (refusalLegend(result) ?? ""))
    }
    lines.append("")
    let chart = StormChart(results: results, scenario: scenario, usesColor: usesColor)
    for index in results.indices {
      lines.append(contentsOf: chart.lines(for: index))
      lines.append("")
    }
    return lines.joined(separator: "\n")
  }

  /// `  A  NAME`, a policy of several rules a rule a line, long lines wrapped, each further
  /// line indented under the first.
  static func labeled(_ index: Int, _ name: String) -> [String] {
    let prefix = "  \(label(index))  "
    let indent = String(repeating: " ", count: prefix.count)
    return legendLines(name, width: 100).enumerated().map { line, text in
      (line == 0 ? prefix : indent) + text
    }
  }

  /// A policy's name for a legend: a line per line of its text (a rule a line for a policy
  /// of several rules), each wrapped at spaces to at most `width` characters where it can be.
  static func legendLines(_ name: String, width: Int) -> [String] {
    var lines: [String] = []
    for part in name.split(whereSeparator: \.isNewline) {
      var line = ""
      for word in part.split(separator: " ") {
        if !line.isEmpty, line.count + 1 + word.count > width {
          lines.append(line)
          line = ""
        }
        line += (line.isEmpty ? "" : " ") + word
      }
      if !line.isEmpty { lines.append(line) }
    }
    return lines.isEmpty ? [name] : lines
  }

  static func fixed(_ value: Double, _ decimals: Int) -> String {
    String(format: "%.\(decimals)f", value)
  }

  static func latency(_ seconds: Double?) -> String {
    guard let seconds else { return "-" }
    return seconds < 1 ? fixed(seconds * 1000, 0) + "ms" : fixed(seconds, 2) + "s"
  }
}

/// The terminal chart of each policy: backend load per second against capacity, and the
/// success ratio of each second's requests, over the same time axis, on a common scale.
struct StormChart {
  static let width = 60
  static let height = 6
  let results: [StormResult]
  let scenario: StormScenario
  let usesColor: Bool

  /// The seconds each column covers.
  var columns: [Range<Int>] {
    let count = results.first?.seconds.count ?? 0
    let width = min(Self.width, max(count, 1))
    return (0..<width).map { column in
      (column * count / width)..<max((column + 1) * count / width, column * count / width + 1)
    }
  }

  /// The top of the load scale: the largest load of any policy, at least capacity.
  var top: Double {
    let loads = results.map { Double($0.seconds.maximumAttempts) / scenario.capacity }
    return max(1, loads.max() ?? 1)
  }

  func lines(for index: Int) -> [String] {
    let result = results[index]
    let columns = self.columns.map { $0.clamped(to: 0..<result.seconds.count) }
    let extremes = result.seconds.extremes(columns)
    let loads = extremes.map { Double($0.attempts) / scenario.capacity }
    let ratios = extremes.map(\.successRatio)
    let top = self.top
    let capacityRow = Int((1 / top * Double(Self.height)).rounded(.up)) - 1
    var lines = StormRendering.labeled(index, result.name)
    for row in (0..<Self.height).reversed() {
      let threshold = (Double(row) + 0.5) / Double(Self.height) * top
      let axis =
        row == Self.height - 1
        ? StormRendering.fixed(top, 1) + "×" : row == capacityRow ? "1.0×" : ""
      var cells = ""
      for load in loads {
        if load >= threshold {
          cells += paint("#", load > 1 ? "31" : "36")
        } else {
          cells += row == capacityRow ? "-" : " "
        }
      }
      lines.append(pad(row == Self.height - 1 ? "load " + axis : axis) + " |" + cells)
    }
    let levels = Array(" ▁▂▃▄▅▆▇█")
    let spark = ratios.map { ratio -> String in
      let level = Int((ratio * 8).rounded(.down))
      let cell = String(levels[min(8, max(0, level))])
      return paint(cell, ratio >= 0.99 ? "32" : "33")
    }
    lines.append(pad("success") + " |" + spark.joined())
    let outage = columns.map { range -> Character in
      scenario.isOutage(seconds: range) ? "~" : " "
    }
    lines.append(pad("outage") + " |" + String(outage))
    let end = StormRendering.seconds(Int64(result.seconds.count) * 1_000_000_000)
    let gap = max(1, columns.count - 2 - end.count)
    lines.append(pad("") + "  0s" + String(repeating: " ", count: gap) + end)
    return lines
  }

  private func pad(_ text: String) -> String {
    String(repeating: " ", count: max(0, 12 - text.count)) + text
  }

  private func paint(_ text: String, _ color: String) -> String {
    usesColor ? "\u{1B}[\(color)m" + text + "\u{1B}[0m" : text
  }
}

extension StormScenario {
  /// Whether any of the seconds `range` of the simulation overlaps the outage.
  func isOutage(seconds range: Range<Int>) -> Bool {
    guard let start = outageStart, let end = outageEnd, !range.isEmpty else { return false }
    let from = Int64(range.lowerBound) * 1_000_000_000
    let to = Int64(range.upperBound) * 1_000_000_000
    return from < end && to > start
  }
}
