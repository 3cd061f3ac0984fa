import Foundation
import RetryPolicy
import RetryPolicyTestSupport
import Testing

@testable import RetryPolicyCLI

/// Every clause of the table reaches every tool that must know it (Grammar/README.md,
/// "Adding a clause"): a clause added to the table and missed in one of them fails here.
@Suite("Clause coverage")
struct ClauseCoverageTests {
  /// A policy that uses `clause`, written from its completion snippet: `breaker 50% over 30s
  /// min 20 for 5s`; a rule clause that needs a delay to mean something gets one.
  static func example(of clause: Clause) -> String {
    var text = clause.spec.snippet
    while let start = text.range(of: "${") {
      guard let colon = text[start.upperBound...].firstIndex(of: ":"),
        let end = text[colon...].firstIndex(of: "}")
      else { break }
      text.replaceSubrange(start.lowerBound...end, with: text[text.index(after: colon)..<end])
    }
    return (clausesNeedingDelay.contains(clause) ? "retry 3 delay 1s " : "retry 3 ") + text
  }

  /// The rule clauses that mean nothing without a delay (`jitter-without-delay`,
  /// `cap-without-delay`); a new clause needs no edit here unless it is one of them.
  static let clausesNeedingDelay: Set<Clause> = [.jitter, .max]

  /// The policy of `example(of:)` without the clause.
  static func withoutClause(_ clause: Clause) -> String {
    example(of: clause) == "retry 3 " + clause.spec.snippet ? "retry 3" : "retry 3 delay 1s"
  }

  static func repositoryFile(_ path: String) throws -> String {
    try String(contentsOf: packageRoot.appendingPathComponent(path), encoding: .utf8)
  }

  @Test("each clause's example compiles, and prints in the description and the printer")
  func descriptionAndPrinter() throws {
    for clause in Clause.allCases {
      let text = Self.example(of: clause)
      let policy = try compile(policy: text)
      #expect(policy.text(explicitDelays: true).contains(clause.text), "\(text)")
      let (body, _, _) = Parser.parsePolicy(text)
      let line = try #require(body.lines.first)
      #expect(CanonicalPrinter.print(line).contains(clause.text), "\(text)")
    }
  }

  @Test("explain (text and JSON) and generate change with each clause that changes the policy")
  func explainAndGenerate() async throws {
    for clause in Clause.allCases {
      let with = Self.example(of: clause)
      let without = Self.withoutClause(clause)
      // `immediately` is the default: the policy is the same without it.
      guard try compile(policy: with) != compile(policy: without) else { continue }
      for arguments in [["explain"], ["explain", "--json"]] {
        let first = await ToolRunner.run(arguments + [with])
        let second = await ToolRunner.run(arguments + [without])
        #expect(first.status == 0, "\(arguments) \(with): \(first.standardError)")
        #expect(first.standardOutput != second.standardOutput, "\(arguments) \(with)")
      }
      let folder = try ToolRunner.makeFolder([
        "with.retry": "policy p = \(with)\n", "without.retry": "policy p = \(without)\n",
      ])
      defer { try? FileManager.default.removeItem(at: folder) }
      var generated: [String] = []
      for name in ["with", "without"] {
        let output = folder.appendingPathComponent(name + ".swift").path
        let result = await ToolRunner.run([
          "generate", "--output", output, folder.appendingPathComponent(name + ".retry").path,
        ])
        #expect(result.status == 0, "generate \(with): \(result.standardError)")
        generated.append((try? String(contentsOfFile: output, encoding: .utf8)) ?? "")
      }
      #expect(generated[0] != generated[1], "generate \(with)")
    }
  }

  @Test("completion offers each clause after 'retry 3', and each word of a clause after it")
  func completion() {
    let offered = Set(LanguageServerTests.completion("retry 3 delay 1s "))
    for clause in Clause.allCases where clause.spec.scope != .ruleDelay {
      #expect(offered.contains(clause.keyword.text), "\(clause.keyword.text)")
    }
    for clause in Clause.allCases {
      let words = clause.spec.arguments.compactMap(\.word)
      guard let first = words.first else { continue }
      let example = Self.example(of: clause)
      guard let index = example.range(of: " \(first) ") else { continue }
      let before = String(example[..<index.lowerBound]) + " "
      #expect(
        LanguageServerTests.completion(before).contains(first), "'\(first)' after '\(before)'")
    }
  }

  @Test("the grammar files and the engines' tables name every clause and its words")
  func grammarAndEngines() throws {
    let ebnf = try Self.repositoryFile("Grammar/retry-policy.ebnf")
    let textMate = try Self.repositoryFile("Grammar/retry-policy.tmLanguage.json")
    let engines = try Self.repositoryFile("Grammar/Engines.md")
    let tables = engines.components(separatedBy: "\n## ")
    let grpc = try #require(tables.first { $0.hasPrefix("gRPC (") })
    let envoy = try #require(tables.first { $0.hasPrefix("Envoy") })
    for clause in Clause.allCases {
      let keyword = clause.keyword.text
      #expect(ebnf.contains("\"\(keyword)\""), "EBNF lacks \(keyword)")
      #expect(textMate.contains(keyword), "the TextMate grammar lacks \(keyword)")
      for word in clause.spec.arguments.compactMap(\.word) {
        #expect(ebnf.contains("\"\(word)\""), "EBNF lacks \(word) of \(keyword)")
      }
      #expect(grpc.contains("`\(keyword)"), "Engines.md's gRPC table lacks \(keyword)")
      #expect(envoy.contains("`\(keyword)"), "Engines.md's Envoy table lacks \(keyword)")
    }
  }
}
