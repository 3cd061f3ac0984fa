import Foundation
import RetryPolicyTestSupport
import Testing

/// The documents that describe the runtime, read from the package's sources.
private let root = packageRoot

/// The document's text, its runs of white space as single spaces and without `**`.
private func read(_ path: String) throws -> String {
  let text = try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
  return text.replacingOccurrences(of: "**", with: "")
    .split(whereSeparator: \.isWhitespace).joined(separator: " ")
}

@Suite("Runtime: the documents tell one story")
struct RuntimeDocumentationTests {
  @Test("every document says that equal policies share one default budget, as the code does")
  func budgetSharing() throws {
    let grammar = try read("Grammar/README.md")
    let guide = try read("Sources/RetryPolicy/Documentation.docc/RunningPolicies.md")
    for text in [grammar, guide] {
      #expect(!text.contains("gives two budgets"))
      #expect(text.contains("the same text compiled twice"))
    }
  }

  @Test("the grammar and the HTTP guide state the routing precedence of a block")
  func routingPrecedence() throws {
    let sentence = "a rule that names the error takes it before a rule without `on`"
    #expect(try read("Grammar/README.md").contains(sentence))
    #expect(try read("Sources/RetryPolicy/Documentation.docc/RetryingHTTP.md").contains(sentence))
  }
}
