import Foundation
import RetryPolicy
import Testing

@testable import RetryPolicyCLI

/// The Swift of `generate` compiles for every name the language accepts (issues 21, 23).
///
/// Swift keywords, the package's own type names, names of the generated code's own
/// parameters, names differing only by case. Checked by compiling the output against the
/// built `RetryPolicy` module.
@Suite("generate: hostile policy names")
struct GenerateHostileNamesTests {
  /// Policies named to break code that names types or its own parameters unqualified; hooks
  /// named after the generated function's parameters.
  static let policies = """
    policy class = retry 1 after in
    policy self = retry 1 after environment
    policy Self = retry 1 after isolation
    policy init = retry 1 after hook0
    policy default = retry 1 after operation
    policy CompiledPolicy = retry 2 backoff 1s max 1.5s within 10s timeout 1s budget 10% after RetryPolicies
    policy RetryRule = retry 2 delays 1ms, 1.000000001s jitter full
    policy RetryEnvironment = retry 1 after RetryEnvironment
    policy RetryHookContext = retry 1 after RetryHookContext
    policy Duration = retry 1 hedge 1 after 10ms
    policy RetryPolicies = retry 1 after Self
    policy RetryPolicy = retry 1 after RetryPolicy
    policy Swift = retry 1 after Swift
    policy HedgePolicy = retry 1
    policy Double = retry 1 backoff 1s x1.5 jitter 10%
    policy Success = retry 1 after Success
    policy environment = retry 1 after environment
    policy isolation = retry 1
    policy operation = retry 1
    policy hook0 = retry 1 after hook1
    policy Success_ = retry 1
    policy a = retry 1
    policy A = retry 1
    policy __ = retry 1
    policy Actor = retry 1
    policy Sendable = retry 1
    policy Any = retry 1
    policy nil = retry 1
    policy true = retry 1
    policy run = retry 1 after run

    """

  @Test("the output for hostile names type-checks against the built RetryPolicy module")
  func hostileNamesCompile() async throws {
    let folder = try ToolRunner.makeFolder(["hostile.retry": Self.policies])
    defer { try? FileManager.default.removeItem(at: folder) }
    let output = folder.appendingPathComponent("RetryPolicies.swift")
    let result = await ToolRunner.run([
      "generate", "--output", output.path, folder.appendingPathComponent("hostile.retry").path,
    ])
    #expect(result.status == 0, "\(result.standardError)")
    let text = try String(contentsOf: output, encoding: .utf8)
    #expect(!text.contains(" CompiledPolicy("))
    let modules = try ToolRunner.binary().deletingLastPathComponent()
      .appendingPathComponent("Modules")
    #expect(
      FileManager.default.fileExists(
        atPath: modules.appendingPathComponent("RetryPolicy.swiftmodule").path))
    let compile = try ToolRunner.runScript(
      "swiftc -typecheck -swift-version 6 -I '\(modules.path)' '\(output.path)' 2>&1")
    #expect(compile.status == 0, "\(compile.standardOutput)")
  }

  @Test("a folder without policy files is a warning, as in check")
  func emptyFolderWarns() async throws {
    let folder = try ToolRunner.makeFolder(["empty/.keep": ""])
    defer { try? FileManager.default.removeItem(at: folder) }
    let empty = folder.appendingPathComponent("empty").path
    let result = await ToolRunner.run([
      "generate", "--output", folder.appendingPathComponent("out.swift").path, empty,
    ])
    #expect(result.standardError == "retry-policy: warning: no .retry files in '\(empty)'\n")
    let check = await ToolRunner.run(["check", empty])
    #expect(check.standardError.hasPrefix(result.standardError))
  }

  /// Swift's keywords and contextual words that are also policy names (not words of the
  /// policy language), and what code writes after `RetryPolicies.` to refer to each.
  static var swiftWordPolicies: [(name: String, reference: String)] {
    let words =
      PolicySwiftSource.swiftKeywords.union([
        "some", "any", "macro", "package", "actor", "async", "consume", "copy", "discard", "each",
        "isolated", "lazy", "mutating", "optional", "required", "override", "convenience",
        "dynamic", "final", "weak", "unowned", "indirect", "prefix", "postfix", "infix", "get",
        "set", "willSet", "didSet", "sending", "then", "yield", "dynamicType", "Never",
      ])
      .subtracting(LanguageWords.keywords).subtracting(["Type", "Protocol"])
    // Written by hand, not taken from the generator: `init` and `self` only in backticks.
    return words.sorted().map { ($0, ["init", "self"].contains($0) ? "`\($0)`" : $0) }
  }

  @Test("code refers to every policy the generator declares, Swift's words included, by name")
  func everyNameCanBeReferredTo() async throws {
    let names = Self.swiftWordPolicies
    #expect(names.contains { $0.name == "init" } && names.contains { $0.name == "default" })
    let policies = names.map { "policy \($0.name) = retry 1\n" }.joined()
    let hostile = analyze(policyFile: Self.policies).policies.compactMap(\.name)
    let uses =
      names.map { "  _ = RetryPolicies.\($0.reference) as RetryPolicy.CompiledPolicy\n" }
      + hostile.map {
        "  _ = Hostile.\(["init", "self"].contains($0) ? "`\($0)`" : $0) as CompiledPolicy\n"
      }
    let folder = try ToolRunner.makeFolder([
      "words.retry": policies,
      "hostile/hostile.retry": Self.policies,
      "uses.swift": """
      import RetryPolicy

      func uses() async throws {
      \(uses.joined())  // Hooked methods of the reserved and contextual names.
        _ = try await Hostile.`init`(hook0: { _ in }) { 1 }
        _ = try await Hostile.`self`(environment: { _ in }) { 1 }
        _ = try await Hostile.Self(isolation: { _ in }) { 1 }
        _ = try await Hostile.default(operation: { _ in }) { 1 }
        _ = try await Hostile.class(in: { _ in }) { 1 }
      }
      """,
    ])
    defer { try? FileManager.default.removeItem(at: folder) }
    let words = folder.appendingPathComponent("RetryPolicies.swift")
    let result = await ToolRunner.run([
      "generate", "--output", words.path, folder.appendingPathComponent("words.retry").path,
    ])
    try #require(result.status == 0, "\(result.standardError)")
    let hostileOutput = folder.appendingPathComponent("Hostile.swift")
    let second = await ToolRunner.run([
      "generate", "--output", hostileOutput.path,
      folder.appendingPathComponent("hostile/hostile.retry").path,
    ])
    try #require(second.status == 0, "\(second.standardError)")
    // The second file's enum is renamed, so that both can be compiled together.
    let renamed = try String(contentsOf: hostileOutput, encoding: .utf8)
      .replacingOccurrences(of: "enum RetryPolicies", with: "enum Hostile")
      .replacingOccurrences(of: "extension RetryPolicies", with: "extension Hostile")
    try renamed.write(to: hostileOutput, atomically: true, encoding: .utf8)
    let text = try String(contentsOf: words, encoding: .utf8)
    #expect(text.contains("Code refers to it in backticks: ``RetryPolicies.`init` ``."))
    let modules = try ToolRunner.binary().deletingLastPathComponent()
      .appendingPathComponent("Modules")
    let compile = try ToolRunner.runScript(
      "swiftc -typecheck -swift-version 6 -I '\(modules.path)' '\(words.path)'"
        + " '\(hostileOutput.path)' '\(folder.appendingPathComponent("uses.swift").path)' 2>&1")
    #expect(compile.status == 0, "\(compile.standardOutput)")
  }

  @Test(
    "Type, Protocol and _ are the same error from generate and check",
    arguments: [
      (
        "policy Type = retry 1\n", "1:8",
        "policy name 'Type' cannot be referred to in Swift: 'RetryPolicies.Type' is the metatype"
          + " of 'RetryPolicies'; rename the policy"
      ),
      (
        "policy Protocol {\n    retry 1\n}\n", "1:8",
        "policy name 'Protocol' cannot be referred to in Swift: 'RetryPolicies.Protocol' is the"
          + " metatype of a protocol; rename the policy"
      ),
      ("policy _ = retry 1\n", "1:8", "policy name '_' is not a Swift identifier"),
      ("policy p {\n    retry 1 after _\n}\n", "2:19", "hook name '_' is not a Swift identifier"),
    ])
  func unusableNames(source: String, place: String, message: String) async throws {
    let folder = try ToolRunner.makeFolder(["n.retry": source])
    defer { try? FileManager.default.removeItem(at: folder) }
    let path = folder.appendingPathComponent("n.retry").path
    let output = folder.appendingPathComponent("out.swift")
    let generate = await ToolRunner.run(["generate", "--output", output.path, path])
    let check = await ToolRunner.run(["check", path])
    #expect(generate.status == 1 && check.status == 1)
    #expect(generate.standardError.hasPrefix("\(path):\(place): error: \(message)\n"))
    #expect(check.standardOutput == generate.standardError)
    #expect(!FileManager.default.fileExists(atPath: output.path))
    let json = await ToolRunner.run(["check", "--format", "json", path])
    #expect(json.standardOutput.contains(#""id": "swift-name""#))
    // The library accepts the name: only the Swift the build writes cannot use it.
    #expect(!analyze(policyFile: source).hasErrors)
  }
}
