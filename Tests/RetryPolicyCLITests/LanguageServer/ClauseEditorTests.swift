import RetryPolicy
import Testing

@testable import RetryPolicyCLI
@testable import RetryPolicyLanguageServer

/// Completion and hover inside a clause come from the clause table (issue 33, item 5).
@Suite("Language server: inside a clause")
struct ClauseEditorTests {
  static func completion(_ line: String) -> [String] {
    LanguageServerTests.completion(line)
  }

  @Test(
    "completion offers the words of a clause where they may stand, and what each takes",
    arguments: [
      ("retry 3 breaker 50% ", ["over", "min", "for", "after"], ["breaker"]),
      ("retry 3 breaker 50% over 30s ", ["min", "for", "timeout"], ["over"]),
      ("retry 3 breaker 50% min 20 ", ["for"], ["over", "min"]),
      ("retry 3 breaker 50% for 5s ", ["within"], ["over", "min", "for"]),
      ("retry 3 hedge 2 ", ["after"], ["on", "within", "over"]),
      ("retry 3 honoring ", ["retry-after"], ["on"]),
    ])
  func words(line: String, offered: [String], notOffered: [String]) {
    let items = Self.completion(line)
    for word in offered { #expect(items.contains(word), "'\(word)' after '\(line)': \(items)") }
    for word in notOffered {
      #expect(!items.contains(word), "'\(word)' after '\(line)': \(items)")
    }
  }

  @Test(
    "after a word of a clause: durations where a duration goes, counts where a count goes",
    arguments: [
      ("retry 3 breaker 50% over 3", ["3ms", "3s", "3m", "3h"]),
      ("retry 3 breaker 50% over 30s for 2", ["2ms", "2s", "2m", "2h"]),
      ("retry 3 breaker 50% min 5", []),
      ("retry 3 breaker 5", ["5%"]),
      ("retry 3 hedge 2", []),
      ("retry 3 hedge 2 after 1", ["1ms", "1s", "1m", "1h"]),
      ("retry 3 breaker 50% over ", []),
      ("retry 3 breaker 50% min ", []),
    ])
  func values(line: String, expected: [String]) {
    #expect(Self.completion(line) == expected)
  }

  @Test("hover answers on every line of a block, a policy-wide line with its clause")
  func hoverOnEveryLine() throws {
    var server = LanguageServerTests.initialized()
    let text = """
      policy payments {
          retry 2 on serverError
          breaker 50% over 10s
          budget 10%
          timeout 1s
          hedge 1 after 100ms
          rate 50/s burst 80
      }

      """
    _ = server.open(uri: LanguageServerTests.uri, version: 1, text: text)
    let open = try #require(server.documents[LanguageServerTests.uri])
    let document = TextDocumentIdentifier(uri: LanguageServerTests.uri)
    let expected = [
      (2, "breaker P% [over D] [min N] [for D]", "over 1s … 24h (30s)"),
      (3, "budget P%", "P above 0% and at most 100%"),
      (4, "timeout D", "D above 0, at most 10000h"),
      (5, "hedge N after D", "N 1 … 10; after at most 10000h"),
      (6, "rate N/s | N/m [burst M]", "N 1 … 1000000; burst 1 … 1000000 (N)"),
    ]
    for (line, form, limits) in expected {
      let request = HoverRequest(textDocument: document, position: .init(line: line, character: 6))
      let hover = try #require(server.hover(open, params: request), "line \(line)")
      #expect(hover.contents.value.contains("`\(form)` of policy `payments`"))
      #expect(hover.contents.value.contains(limits), "\(hover.contents.value)")
      #expect(hover.contents.value.contains("policy-wide"))
      #expect(hover.range?.start == .init(line: line, character: 4))
    }
    // A rule's line still answers with the rule's table.
    let rule = HoverRequest(textDocument: document, position: .init(line: 1, character: 6))
    #expect(
      try #require(server.hover(open, params: rule)).contents.value.contains(
        "rule 1 of policy `payments`"))
  }
}
