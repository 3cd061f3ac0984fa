import Foundation
import RetryPolicyTestSupport
import Testing

@testable import RetryPolicy

/// `Grammar/retry-policy.tmLanguage.json`, the TextMate grammar for editors and GitHub.
@Suite("TextMate grammar")
struct GrammarTests {
  typealias Object = [String: Any]

  static let url = packageRoot.appendingPathComponent("Grammar/retry-policy.tmLanguage.json")

  static func grammar() throws -> Object {
    let data = try Data(contentsOf: url)
    return try #require(try JSONSerialization.jsonObject(with: data) as? Object)
  }

  /// Every regular expression of the grammar (`match`, `begin`, `end`), with its path.
  static func expressions(in value: Any, path: String = "") -> [(String, String)] {
    if let object = value as? Object {
      return object.keys.sorted().flatMap { key -> [(String, String)] in
        let child = object[key] as Any
        if ["match", "begin", "end"].contains(key), let pattern = child as? String {
          return [(path + "/" + key, pattern)]
        }
        return expressions(in: child, path: path + "/" + key)
      }
    }
    if let array = value as? [Any] {
      return array.enumerated().flatMap { expressions(in: $1, path: path + "/\($0)") }
    }
    return []
  }

  static func regex(_ name: String) throws -> NSRegularExpression {
    let repository = try #require(try grammar()["repository"] as? Object)
    let rule = try #require(repository[name] as? Object)
    return try NSRegularExpression(pattern: try #require(rule["match"] as? String))
  }

  /// The captures of the first match of `regex` in `text` (0 is the whole match).
  static func captures(_ regex: NSRegularExpression, _ text: String) -> [String] {
    let range = NSRange(text.startIndex..., in: text)
    guard let match = regex.firstMatch(in: text, range: range) else { return [] }
    return (0..<match.numberOfRanges).map { index in
      Range(match.range(at: index), in: text).map { String(text[$0]) } ?? ""
    }
  }

  @Test("the grammar is JSON with a scope name, patterns and a repository")
  func shape() throws {
    let grammar = try Self.grammar()
    #expect(grammar["scopeName"] as? String == "source.retry-policy")
    #expect(grammar["fileTypes"] as? [String] == ["retry"])
    let repository = try #require(grammar["repository"] as? Object)
    let includes = try #require(grammar["patterns"] as? [Object]).compactMap {
      $0["include"] as? String
    }
    #expect(!includes.isEmpty)
    for include in includes {
      #expect(repository[String(include.dropFirst())] != nil, "\(include) is not defined")
    }
  }

  @Test("every pattern compiles as a regular expression")
  func patternsCompile() throws {
    let expressions = Self.expressions(in: try Self.grammar())
    #expect(expressions.count >= 10)
    for (path, pattern) in expressions {
      #expect(throws: Never.self, "\(path)") { _ = try NSRegularExpression(pattern: pattern) }
    }
  }

  @Test("the keyword list is the lexer's, and each keyword matches whole")
  func keywordsAreTheLexers() throws {
    let keyword = try Self.regex("keyword")
    let pattern = keyword.pattern
    let start = try #require(pattern.range(of: "(?:"))
    let end = try #require(pattern.range(of: ")(?!", range: start.upperBound..<pattern.endIndex))
    let listed = pattern[start.upperBound..<end.lowerBound].split(separator: "|").map(String.init)
    #expect(Set(listed) == Set(LanguageWords.keywords))
    #expect(listed.count == LanguageWords.keywords.count)
    for word in LanguageWords.keywords {
      #expect(Self.captures(keyword, " \(word) ").first == word)
    }
    #expect(Self.captures(keyword, "honoring retry-after").first == "honoring")
    #expect(Self.captures(keyword, "retry-after").first == "retry-after")
    #expect(Self.captures(keyword, "serverError retryable onx").isEmpty)
  }

  @Test("durations, percentages, factors, comments and policy names get their scopes")
  func scopes() throws {
    #expect(Self.captures(try Self.regex("duration"), "backoff 250ms") == ["250ms", "250", "ms"])
    #expect(Self.captures(try Self.regex("duration"), "delay 1.5s") == ["1.5s", "1.5", "s"])
    #expect(Self.captures(try Self.regex("duration"), "x2m3").isEmpty)
    #expect(Self.captures(try Self.regex("percentage"), "jitter 10%") == ["10%", "10", "%"])
    #expect(Self.captures(try Self.regex("factor"), "1s x1.5") == ["x1.5", "x", "1.5"])
    #expect(Self.captures(try Self.regex("factor"), "1s x 3") == ["x 3", "x", "3"])
    #expect(Self.captures(try Self.regex("comment"), "retry 3 # why") == ["# why"])
    #expect(
      Self.captures(try Self.regex("policy-declaration"), "policy payments {")
        == ["policy payments", "policy", "payments"])
    #expect(Self.captures(try Self.regex("status-class"), "on 5xx, 503") == ["5xx"])
    #expect(Self.captures(try Self.regex("name"), "on serverError") == ["on"])
  }
}

/// The clause table of Grammar/README.md against the clause table of the code.
@Suite("Clause table")
struct ClauseTableTests {
  static let readme = packageRoot.appendingPathComponent("Grammar/README.md")

  /// The rows of the README's clause table: the clause as written and its kind.
  static func readmeRows() throws -> [(written: String, kind: String)] {
    let text = try String(contentsOf: readme, encoding: .utf8)
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    let header = try #require(lines.firstIndex { $0.hasPrefix("| clause | kind |") })
    var rows: [(String, String)] = []
    for line in lines[(header + 2)...] {
      guard line.hasPrefix("|") else { break }
      let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
      guard cells.count >= 2 else { continue }
      rows.append((cells[0].trimmingCharacters(in: CharacterSet(charactersIn: "`")), cells[1]))
    }
    return rows
  }

  /// Where a keyword's text may stand as a string literal outside the clause table (besides
  /// `JSONMember("…"` and doc comments): names another format or the contract fixes, the
  /// `timeout` error class, and the character `x`.
  static let literalsAllowed: [String: Set<String>] = [
    // explain --json's jitter kinds (contract §5).
    "RetryPolicy/Compiler/CompiledPolicy.swift": ["full", "equal", "decorrelated"],
    // The error class of a timed-out attempt.
    "RetryPolicy/Compiler/Vocabulary.swift": ["timeout"],
    "RetryPolicy/Runtime/Classification/ErrorClassMatcher.swift": ["timeout"],
    "RetryPolicySimulation/OutcomeSimulation.swift": ["timeout"],
    // The x of a status class (5xx) and of a factor, as characters.
    "RetryPolicy/HTTP/HTTPStatusProviding.swift": ["x"],
    "RetryPolicyHTTP/URLSession+RetryPolicy.swift": ["x"],
    "RetryPolicy/Syntax/Parser+Clauses.swift": ["x"],
    // Option and argument names: --policy, --timeout, <policy>.
    "RetryPolicyCLI/Arguments/CommandOptions.swift": ["policy"],
    "RetryPolicyCLI/Commands/StormOptions.swift": ["timeout", "rate"],
    "RetryPolicyCLI/Commands/ExportCommand.swift": ["policy"],
    "RetryPolicyCLI/Commands/SimulateCommand.swift": ["policy"],
    "RetryPolicyCLI/Commands/StormCommand.swift": ["policy"],
    // gRPC's `timeout` field; Envoy's `retry-after` header.
    "RetryPolicyEngines/GRPC/Import/GRPCImport+Reader.swift": ["timeout"],
    "RetryPolicyEngines/Envoy/EnvoyExport.swift": ["retry-after"],
    // simulate --json's decision value and member.
    "RetryPolicyCLI/Rendering/SimulationRendering.swift": ["retry", "policy"],
    // The file extension.
    "RetryPolicyCLI/Support/PolicyInput.swift": ["retry"],
  ]

  /// Files whose string literals name other things, which may spell any keyword.
  ///
  /// They are explain --json's members in its help (contract §5) and the Swift properties of
  /// CompiledPolicy and RetryRule that `generate` writes: a new clause needs no entry here.
  static let filesNamingOtherThings: Set<String> = [
    "RetryPolicyCLI/Commands/ExplainCommand.swift",
    "RetryPolicyCLI/Rendering/PolicySwiftSource.swift",
  ]

  @Test("no source file but the clause table spells a keyword as a string literal")
  func keywordsAreSpelledOnce() throws {
    let sources = packageRoot.appendingPathComponent("Sources")
    let enumerator = try #require(FileManager.default.enumerator(atPath: sources.path))
    var found: [String] = []
    for case let path as String in enumerator where path.hasSuffix(".swift") {
      guard !path.hasSuffix("Syntax/ClauseTable.swift"), !Self.filesNamingOtherThings.contains(path)
      else { continue }
      let text = try String(
        contentsOf: sources.appendingPathComponent(path), encoding: .utf8)
      let allowed = Self.literalsAllowed[path] ?? []
      for line in text.split(separator: "\n") {
        let trimmed = line.drop { $0 == " " }
        guard !trimmed.hasPrefix("//") else { continue }
        for keyword in Keyword.allCases where !allowed.contains(keyword.text) {
          let literal = "\"\(keyword.text)\""
          if line.contains(literal), !line.contains("JSONMember(" + literal) {
            found.append("\(path): \(literal)")
          }
        }
      }
    }
    #expect(found == [])
  }

  @Test("the README's clause table lists exactly the table's clauses, with their scope")
  func readmeListsTheTable() throws {
    let rows = try Self.readmeRows().filter { $0.kind != "rule head" }
    for spec in ClauseTable.entries {
      let matching = rows.filter {
        $0.written == spec.text || $0.written.hasPrefix(spec.text + " ")
      }
      #expect(!matching.isEmpty, "'\(spec.text)' is missing from Grammar/README.md")
      for row in matching {
        switch spec.scope {
        case .policyWide: #expect(row.kind == "policy-wide", "\(row.written)")
        case .ruleDelay: #expect(row.kind == "rule, delay", "\(row.written)")
        case .rule: #expect(row.kind == "rule", "\(row.written)")
        }
      }
    }
    for row in rows {
      #expect(
        ClauseTable.entries.contains {
          row.written == $0.text || row.written.hasPrefix($0.text + " ")
        }, "'\(row.written)' in Grammar/README.md is no clause of the table")
    }
  }

  @Test("every clause starts with its own keyword, and the lexer knows every keyword")
  func keywordsAreUnique() {
    let starts = ClauseTable.entries.map(\.keyword)
    #expect(Set(starts).count == starts.count)
    #expect(ClauseTable.entries.map(\.clause) == Clause.allCases)
    for keyword in Keyword.allCases {
      let found = keyword.rawValue.utf8.withContiguousStorageIfAvailable {
        ClauseTable.keyword(spelledBy: $0)
      }
      #expect(found??.0 == keyword)
      #expect(found??.1 == keyword.clause)
    }
  }

  @Test("the printed compiled policy lists its clauses in the table's order")
  func printerFollowsTheTable() throws {
    let policy = try compile(
      policy: "retry 2 honoring retry-after after hook max 3s jitter full backoff 1s except a on b"
        + " budget 5% timeout 1s within 1m")
    #expect(
      policy.description
        == "retry 2 on b except a backoff 1s jitter full max 3s after hook honoring retry-after"
        + " within 1m timeout 1s budget 5%")
  }
}
