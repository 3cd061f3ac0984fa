import Foundation
import RetryPolicy
import Testing

@testable import RetryPolicyCLI

@Suite("retry-policy generate")
struct GenerateCommandTests {
  static let root = EndToEndTests.root

  /// A fresh folder with the given policy files in it.
  func makeFolder(_ files: [String: String]) throws -> URL {
    let folder = FileManager.default.temporaryDirectory
      .appendingPathComponent("generate-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    for (name, text) in files {
      try Data(text.utf8).write(to: folder.appendingPathComponent(name))
    }
    return folder
  }

  func generate(_ paths: [String], into folder: URL) async -> (CommandResult, String?) {
    let output = folder.appendingPathComponent("RetryPolicies.swift")
    let result = await CommandLineTool.run(
      arguments: ["generate", "--output", output.path] + paths)
    return (result, try? String(contentsOf: output, encoding: .utf8))
  }

  @Test("the checked-in generated file of the samples is what the generator writes today")
  func samplesFileIsUpToDate() async throws {
    let sources = ["Samples", "Tests/GeneratorFixtures"].flatMap { folder in
      ((try? FileManager.default.contentsOfDirectory(
        atPath: Self.root.appendingPathComponent(folder).path)) ?? [])
        .filter { $0.hasSuffix(".retry") }.sorted()
        .map { Self.root.appendingPathComponent(folder).appendingPathComponent($0).path }
    }
    let folder = try makeFolder([:])
    let (result, text) = await generate(sources, into: folder)
    #expect(result.status == 0, "\(result.standardError)")
    let checkedIn = try String(
      contentsOf: Self.root.appendingPathComponent(
        "Tests/RetryPolicyTests/Generated/RetryPolicies+Samples.swift"),
      encoding: .utf8)
    // To update: retry-policy generate --output \
    //   Tests/RetryPolicyTests/Generated/RetryPolicies+Samples.swift \
    //   Samples/*.retry Tests/GeneratorFixtures/*.retry
    #expect(text == checkedIn, "Generated/RetryPolicies+Samples.swift is out of date")
  }

  /// The names of a value's stored properties.
  func fields(of value: Any) -> [String] {
    Mirror(reflecting: value).children.compactMap(\.label)
  }

  @Test("the generator writes every stored property of CompiledPolicy and RetryRule")
  func generatorCoversEveryField() {
    // A new field fails here until PolicySwiftSource writes it and lists it.
    let rule = RetryRule(behavior: .immediate(maxCount: 1))
    #expect(fields(of: CompiledPolicy(rules: [rule])) == PolicySwiftSource.policyFields)
    // `matcher` is derived from the classes by the initializer the generated code calls.
    #expect(fields(of: rule).filter { $0 != "matcher" } == PolicySwiftSource.ruleFields)
    // The shedding clauses are written when present (the code of other policies is as it was).
    let expression = PolicySwiftSource.expression(
      for: CompiledPolicy(
        rules: [rule], limit: .fixed(limit: 4, queue: 0), throttle: ThrottlePolicy(factor: 2),
        rate: RatePolicy(count: 5, per: .seconds(1))))
    for field in PolicySwiftSource.policyFields + PolicySwiftSource.ruleFields {
      #expect(expression.contains("\(field): "), "\(field)")
    }
  }

  @Test(
    "durations are written exactly",
    arguments: [
      (Duration.seconds(2), ".seconds(2)"), (.milliseconds(1500), ".milliseconds(1500)"),
      (.microseconds(1), ".init(secondsComponent: 0, attosecondsComponent: 1000000000000)"),
      (
        .seconds(Int64.max), ".seconds(9223372036854775807)"
      ),
      (
        Duration(secondsComponent: Int64.max, attosecondsComponent: 5_000_000_000_000_000),
        ".init(secondsComponent: 9223372036854775807, attosecondsComponent: 5000000000000000)"
      ),
    ])
  func durationLiteral(duration: Duration, expected: String) {
    #expect(PolicySwiftSource.duration(duration) == expected)
  }

  @Test("doubles and strings are written as literals that read back the same")
  func literals() {
    #expect(PolicySwiftSource.double(0.1) == "0.1")
    #expect(Double(PolicySwiftSource.double(1.0 / 3.0)) == 1.0 / 3.0)
    #expect(PolicySwiftSource.double(.infinity) == ".infinity")
    #expect(PolicySwiftSource.double(-.infinity) == "-.infinity")
    #expect(PolicySwiftSource.double(.nan) == ".nan")
    #expect(PolicySwiftSource.string("a\"b\\c\u{e9}") == #""a\"b\\c\u{e9}""#)
    #expect(PolicySwiftSource.identifier("default") == "`default`")
    #expect(PolicySwiftSource.identifier("payments") == "payments")
  }

  @Test("an error fails with PATH:LINE:COL: error: and writes nothing")
  func errorFails() async throws {
    let folder = try makeFolder(["bad.retry": "policy payments = retry 5 delay 2d\n"])
    let path = folder.appendingPathComponent("bad.retry").path
    let (result, text) = await generate([path], into: folder)
    #expect(result.status == 1)
    #expect(result.standardError.hasPrefix("\(path):1:34: error: unknown unit 'd'"))
    #expect(text == nil)
  }

  @Test("a warning is printed as a warning and the file is still written")
  func warningPasses() async throws {
    let folder = try makeFolder(["warn.retry": "policy slow = retry 2 delay 0s\n"])
    let path = folder.appendingPathComponent("warn.retry").path
    let (result, text) = await generate([path], into: folder)
    #expect(result.status == 0)
    #expect(result.standardError.contains("\(path):1:"))
    #expect(result.standardError.contains(": warning: "))
    #expect(text?.contains("static let slow: RetryPolicy.CompiledPolicy") == true)
  }

  @Test("a name defined in two files is an error naming both places")
  func duplicateAcrossFiles() async throws {
    let folder = try makeFolder([
      "a.retry": "policy payments = retry 1\n",
      "b.retry": "# second\npolicy quick = retry 2\npolicy payments = retry 3\n",
    ])
    let a = folder.appendingPathComponent("a.retry").path
    let b = folder.appendingPathComponent("b.retry").path
    let (result, text) = await generate([a, b], into: folder)
    #expect(result.status == 1)
    #expect(
      result.standardError
        == "\(b):3:8: error: policy 'payments' is also defined in \(a):1:8\n"
        + "\(a):1:8: note: 'payments' is first defined here\n")
    #expect(text == nil)
  }

  @Test(
    "the output names each policy, with backticks for keywords, and no hook method without hooks")
  func output() async throws {
    let folder = try makeFolder([
      "p.retry": "policy default = retry 2\npolicy signIn = retry 1 on unauthorized after refresh\n"
    ])
    let (result, text) = await generate(
      [folder.appendingPathComponent("p.retry").path], into: folder)
    #expect(result.status == 0)
    let source = try #require(text)
    #expect(source.contains("static let `default`: RetryPolicy.CompiledPolicy = .init("))
    #expect(source.contains("static let signIn: RetryPolicy.CompiledPolicy = .init("))
    #expect(source.contains("static func signIn<Success>(\n    refresh hook0: @escaping"))
    #expect(!source.contains("static func `default`"))
    #expect(!source.contains("try!") && !source.contains("compile("))
  }

  @Test("a policy or hook named '_' is an error at its name; '__' is a name like any other")
  func underscoreAlone() async throws {
    let folder = try makeFolder([
      "u.retry": "policy _ = retry 1\npolicy __ = retry 1 on serverError after _\n"
    ])
    let path = folder.appendingPathComponent("u.retry").path
    let (result, text) = await generate([path], into: folder)
    #expect(result.status == 1)
    #expect(
      result.standardError
        == "\(path):1:8: error: policy name '_' is not a Swift identifier\n"
        + "policy _ = retry 1\n       ^\n"
        + "\(path):2:42: error: hook name '_' is not a Swift identifier\n"
        + "policy __ = retry 1 on serverError after _\n" + String(repeating: " ", count: 41)
        + "^\n")
    #expect(text == nil)
  }

  @Test("an output that already holds the text is not written again; a changed one is")
  func unchangedOutputIsKept() async throws {
    let folder = try makeFolder(["p.retry": "policy payments = retry 2\n"])
    let path = folder.appendingPathComponent("p.retry").path
    let output = folder.appendingPathComponent("RetryPolicies.swift")
    let old = Date(timeIntervalSince1970: 1_000_000_000)
    func modified() throws -> Date? {
      try FileManager.default.attributesOfItem(atPath: output.path)[.modificationDate] as? Date
    }
    #expect(await generate([path], into: folder).0.status == 0)
    try FileManager.default.setAttributes([.modificationDate: old], ofItemAtPath: output.path)
    #expect(await generate([path], into: folder).0.status == 0)
    #expect(try modified() == old)
    try Data("policy payments = retry 3\n".utf8).write(to: URL(fileURLWithPath: path))
    let (result, text) = await generate([path], into: folder)
    #expect(result.status == 0)
    #expect(try modified() != old)
    #expect(text?.contains("static let payments: RetryPolicy.CompiledPolicy") == true)
  }

  @Test("without --output it is a usage error")
  func missingOutput() async {
    let result = await CommandLineTool.run(arguments: ["generate", "a.retry"])
    #expect(result.status == 2)
    #expect(result.standardError.contains("--output"))
  }
}
