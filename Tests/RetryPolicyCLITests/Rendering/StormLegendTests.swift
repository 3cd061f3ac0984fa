import Foundation
import Testing

@testable import RetryPolicyCLI

/// The legend of `storm`'s SVG and text report (issue 23): a rule a line, long lines
/// wrapped, so that nothing is cut at the chart's 900 px.
@Suite("Command line: storm's legend")
struct StormLegendTests {
  static let file = """
    policy api {
      retry 1 on unauthorized after refreshToken
      retry 5 on serverError, timeout backoff 1s x1.5 jitter 10% max 30s
      within 2m
      timeout 10s
    }

    """
  static let long =
    "retry 5 on serverError, timeout, unauthorized, connectionLost, connectionRefused, "
    + "notConnectedToInternet backoff 1s x1.5 jitter 10% max 30s within 2m timeout 10s budget 10%"

  @Test("a policy of several rules takes a line per rule; a long one wraps within the width")
  func legendLines() async throws {
    let folder = try ToolRunner.makeFolder(["api.retry": Self.file])
    defer { try? FileManager.default.removeItem(at: folder) }
    let svgPath = folder.appendingPathComponent("storm.svg").path
    let result = await ToolRunner.run([
      "storm", "--file", folder.appendingPathComponent("api.retry").path, Self.long,
      "--clients", "10", "--duration", "10s", "--svg", svgPath,
    ])
    #expect(result.status == 0, "\(result.standardError)")
    let svg = try String(contentsOfFile: svgPath, encoding: .utf8)
    let legend = svg.split(separator: "\n").filter {
      $0.hasPrefix("<text") && !$0.contains("text-anchor") && !$0.contains("font-")
        && !$0.contains("capacity")
    }.map { line in
      String(line.split(separator: ">", maxSplits: 1).last ?? "")
        .replacingOccurrences(of: "</text>", with: "")
    }
    #expect(
      legend.suffix(5) == [
        "A  api: retry 1 on unauthorized after refreshToken",
        "retry 5 on serverError, timeout backoff 1s x1.5 jitter 10% max 30s",
        "within 2m timeout 10s",
        "B  retry 5 on serverError, timeout, unauthorized, connectionLost, connectionRefused,",
        "notConnectedToInternet backoff 1s x1.5 jitter 10% max 30s within 2m timeout 10s budget 10%",
      ])
    #expect(svg.contains("height=\"630\""))
    let text = result.standardOutput.split(separator: "\n", omittingEmptySubsequences: false)
    #expect(
      Array(text[2..<7]) == [
        "  A  api: retry 1 on unauthorized after refreshToken",
        "     retry 5 on serverError, timeout backoff 1s x1.5 jitter 10% max 30s",
        "     within 2m timeout 10s",
        "  B  retry 5 on serverError, timeout, unauthorized, connectionLost, connectionRefused,",
        "     notConnectedToInternet backoff 1s x1.5 jitter 10% max 30s within 2m timeout 10s budget 10%",
      ])
  }

  @Test("a short one-rule policy keeps its single legend line")
  func shortPolicy() {
    #expect(
      StormRendering.legendLines("retry 3 immediately", width: 100) == ["retry 3 immediately"])
    let wrapped = StormRendering.legendLines(Self.long, width: 40)
    #expect(wrapped.allSatisfy { $0.count <= 40 })
    #expect(wrapped.joined(separator: " ") == Self.long)
  }
}
