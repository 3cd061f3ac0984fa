import Foundation
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
    policy Type = retry 1 after Success
    policy Protocol = retry 1 after hook0
    policy init = retry 1
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
}
