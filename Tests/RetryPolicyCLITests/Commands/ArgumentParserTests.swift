import Foundation
import Testing

@testable import RetryPolicyCLI

@Suite("Argument parser")
struct ArgumentParserTests {
  /// The options of a sample command, one of each kind.
  struct SampleOptions: CommandOptions {
    enum Format: Equatable, Sendable { case text, json }

    var isJSON = false
    var isCheck = false
    var seed: UInt64?
    var label: String?
    var format = Format.text
    var rate: Double?
    var count: Int?
    var selection = PolicySelection()
    var arguments: [String] = []

    static var declarations: [OptionDeclaration<Self>] {
      [
        .flag("json", help: "JSON.", \.isJSON),
        .flag("check", short: "c", help: "Check.", \.isCheck),
        .option("seed", value: "N", help: "Seed.", \.seed, .seed),
        .option("label", value: "TEXT", help: "Label.", \.label, .text),
        .option(
          "format", value: "FORMAT", help: "Format.", \.format,
          .choice(["text": .text, "json": .json])),
        .option("rate", value: "R", help: "Rate.", \.rate, .decimal(in: 0.001...1000)),
        .option("count", value: "N", help: "Count.", \.count, .integer(in: 1...10)),
      ] + .group(\.selection)
    }

    func validate() throws(UsageError) { try selection.validate() }
  }

  static let spec = CommandSpec(
    name: "sample", abstract: "a sample", usage: ["sample"], discussion: "",
    options: SampleOptions.optionSpecs,
    minimumArguments: 1, maximumArguments: 2, argumentName: "file", examples: [],
    exitStatuses: [])

  static func parse(_ arguments: [String]) throws(UsageError) -> SampleOptions? {
    switch try ArgumentParser.parse(arguments, for: spec, as: SampleOptions.self) {
    case .help: nil
    case .run(let options): options
    }
  }

  static func message(_ arguments: [String]) -> String? {
    do {
      _ = try parse(arguments)
      return nil
    } catch {
      return error.message
    }
  }

  @Test("flags, options and positional arguments mix in any order, each typed")
  func mixedOrder() throws {
    let parsed = try #require(try Self.parse(["a", "--json", "--seed", "7", "b"]))
    #expect(parsed.arguments == ["a", "b"])
    #expect(parsed.isJSON)
    #expect(!parsed.isCheck)
    #expect(parsed.seed == 7)
  }

  @Test("an option's value may follow an equals sign")
  func equalsValue() throws {
    let parsed = try #require(try Self.parse(["--seed=42", "--format=json", "x"]))
    #expect(parsed.seed == 42)
    #expect(parsed.format == .json)
  }

  @Test("a short flag is the same as its long name")
  func shortFlag() throws {
    #expect(try Self.parse(["-c", "x"])?.isCheck == true)
  }

  @Test("a lone dash is an argument: standard input")
  func dashIsArgument() throws {
    #expect(try Self.parse(["-"])?.arguments == ["-"])
  }

  @Test("a double dash ends the options")
  func doubleDash() throws {
    let parsed = try #require(try Self.parse(["--", "--json", "-c"]))
    #expect(parsed.arguments == ["--json", "-c"])
    #expect(!parsed.isJSON && !parsed.isCheck)
  }

  @Test("a negative number is a value, not an option")
  func negativeNumber() throws {
    let parsed = try #require(try Self.parse(["--label", "-3", "-5"]))
    #expect(parsed.label == "-3")
    #expect(parsed.arguments == ["-5"])
  }

  @Test("--help anywhere before -- skips every other check")
  func helpWins() throws {
    #expect(try Self.parse(["--bogus", "--help"]) == nil)
    #expect(try Self.parse(["-h"]) == nil)
    #expect(try Self.parse(["--", "--help"])?.arguments == ["--help"])
  }

  @Test("a group's options reach the group's property")
  func groupOptions() throws {
    let parsed = try #require(try Self.parse(["--file", "a.retry", "--policy", "p", "x"]))
    #expect(parsed.selection.file == "a.retry")
    #expect(parsed.selection.policyName == "p")
  }

  @Test(
    "numbers are plain decimals in range: no sign, exponent, hexadecimal, inf or nan",
    arguments: [
      (["--rate", "0.5", "x"], 0.5),
      (["--rate", "12", "x"], 12.0),
      (["--rate", "1000", "x"], 1000.0),
    ] as [([String], Double)])
  func decimals(arguments: [String], value: Double) throws {
    #expect(try Self.parse(arguments)?.rate == value)
  }

  @Test(
    "a number in another notation is refused with what was expected",
    arguments: ["0x10", "1e2", "+5", "inf", "nan", ".5", "5.", "1.2.3", "", "0", "1001", "٣"])
  func notDecimal(text: String) {
    #expect(
      Self.message(["--rate", text, "x"])
        == "invalid value '\(text)' for '--rate'; expected a number from 0.001 to 1000")
  }

  @Test(
    "a whole number is digits only, in range",
    arguments: ["0x3", "3.0", "+3", "-3", "11", "0", "99999999999999999999999"])
  func notWholeNumber(text: String) {
    #expect(
      Self.message(["--count=\(text)", "x"])
        == "invalid value '\(text)' for '--count'; expected a whole number from 1 to 10")
  }

  @Test(
    "mistakes are usage errors with precise messages",
    arguments: [
      (["--jsn", "x"], "unknown option '--jsn'; did you mean '--json'?"),
      (["-json", "x"], "unknown option '-json'; did you mean '--json'?"),
      (["--zzzzzz", "x"], "unknown option '--zzzzzz'"),
      (["--polcy", "p", "x"], "unknown option '--polcy'; did you mean '--policy'?"),
      (["x", "--seed"], "option '--seed' needs a value (N)"),
      (["--seed", "--json", "x"], "option '--seed' needs a value (N)"),
      (["--json=yes", "x"], "option '--json' takes no value"),
      (
        ["--format", "jsn", "x"],
        "invalid value 'jsn' for '--format'; expected 'text' or 'json'; did you mean 'json'?"
      ),
      (["--seed", "1", "--seed", "2", "x"], "option '--seed' given more than once"),
      (["--policy", "p", "x"], "'--policy' needs '--file'"),
      ([], "missing file"),
      (["a", "b", "c"], "unexpected argument 'c'"),
    ])
  func usageErrors(arguments: [String], message: String) {
    #expect(Self.message(arguments) == message)
  }

  @Test("help lists usage, options, examples and exit statuses")
  func helpText() {
    var spec = Self.spec
    spec.examples = [("retry-policy sample x", "Does the thing.")]
    spec.exitStatuses = [(0, "fine")]
    let help = HelpRendering.help(for: spec)
    #expect(help.hasPrefix("retry-policy sample: a sample\n"))
    #expect(help.contains("  --seed N "))
    #expect(help.contains("  --format text|json "))
    #expect(help.contains("  -h, --help "))
    #expect(help.contains("EXAMPLES:\n  retry-policy sample x\n      Does the thing.\n"))
    #expect(help.contains("EXIT STATUS:\n  0  fine\n"))
  }
}

@Suite("Typed options of every command")
struct CommandOptionsTests {
  @Test(
    "a typo in a flag of any command gets a suggestion and names that command's help",
    arguments: [
      (["storm", "retry 3", "--clinets", "10"], "--clinets", "--clients", "storm"),
      (["explain", "--jsn", "retry 3"], "--jsn", "--json", "explain"),
      (["check", "--clases", "a", "x.retry"], "--clases", "--classes", "check"),
      (["fmt", "--chek", "x.retry"], "--chek", "--check", "fmt"),
      (["simulate", "retry 3", "--outcome", "ok"], "--outcome", "--outcomes", "simulate"),
      (["export", "--to", "grpc", "--strictt", "retry 3"], "--strictt", "--strict", "export"),
      (["import", "--frm", "grpc", "x.json"], "--frm", "--from", "import"),
      (["generate", "--outpt", "x.swift", "x.retry"], "--outpt", "--output", "generate"),
      (["repl", "--hlp"], "--hlp", "--help", "repl"),
    ])
  func typoInFlag(arguments: [String], typo: String, fix: String, command: String) async {
    let result = await CommandLineTool.run(arguments: arguments)
    #expect(result.status == 2)
    #expect(
      result.standardError
        == "retry-policy: error: unknown option '\(typo)'; did you mean '\(fix)'?\n"
        + "See 'retry-policy \(command) --help'.\n")
  }

  @Test(
    "a file of several policies without --policy names the command that was run",
    arguments: ["storm", "export", "simulate", "explain"])
  func severalPoliciesNamesCommand(command: String) async throws {
    let folder = FileManager.default.temporaryDirectory
      .appendingPathComponent("retry-policy-options-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let path = folder.appendingPathComponent("two.retry").path
    try Data("policy a = retry 1\npolicy b = retry 2\n".utf8).write(to: URL(fileURLWithPath: path))
    var arguments = [command, "--file", path]
    // Envoy: `export --to grpc --file` without `--policy` writes every policy (issue 27).
    if command == "export" { arguments += ["--to", "envoy"] }
    let result = await CommandLineTool.run(arguments: arguments)
    #expect(result.status == 2)
    #expect(result.standardError.contains("has several policies; choose one with '--policy'"))
    #expect(result.standardError.hasSuffix("See 'retry-policy \(command) --help'.\n"))
  }

  @Test(
    "storm reads numbers as decimals only",
    arguments: [
      ("--rate", "0x10"), ("--rate", "1e1"), ("--capacity", "inf"), ("--clients", "+5"),
      ("--slowdown", "0x2"), ("--failure-rate", "1e1%"),
    ])
  func stormDecimals(option: String, value: String) async {
    var arguments = ["storm", "retry 3", option, value]
    if option == "--slowdown" || option == "--failure-rate" { arguments += ["--outage", "1s+1s"] }
    let result = await CommandLineTool.run(arguments: arguments)
    #expect(result.status == 2)
    #expect(
      result.standardError.hasPrefix(
        "retry-policy: error: invalid value '\(value)' for '\(option)'"))
  }
}
