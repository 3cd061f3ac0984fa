import Testing

@testable import RetryPolicyCLI

@Suite("Argument parser")
struct ArgumentParserTests {
  static let spec = CommandSpec(
    name: "sample", abstract: "a sample", usage: ["sample"], discussion: "",
    options: [
      .flag("json", help: "JSON."),
      .flag("check", short: "c", help: "Check."),
      .option("seed", value: "N", help: "Seed."),
      .option("format", value: "FORMAT", allowed: ["text", "json"], help: "Format."),
    ],
    minimumArguments: 1, maximumArguments: 2, argumentName: "file", examples: [],
    exitStatuses: [])

  static func parse(_ arguments: [String]) throws(UsageError) -> ParsedArguments {
    try ArgumentParser.parse(arguments, for: spec)
  }

  @Test("flags, options and positional arguments mix in any order")
  func mixedOrder() throws {
    let parsed = try Self.parse(["a", "--json", "--seed", "7", "b"])
    #expect(parsed.arguments == ["a", "b"])
    #expect(parsed.has("json"))
    #expect(!parsed.has("check"))
    #expect(parsed.value("seed") == "7")
  }

  @Test("an option's value may follow an equals sign")
  func equalsValue() throws {
    let parsed = try Self.parse(["--seed=42", "--format=json", "x"])
    #expect(parsed.value("seed") == "42")
    #expect(parsed.value("format") == "json")
  }

  @Test("a short flag is the same as its long name")
  func shortFlag() throws {
    #expect(try Self.parse(["-c", "x"]).has("check"))
  }

  @Test("a lone dash is an argument: standard input")
  func dashIsArgument() throws {
    #expect(try Self.parse(["-"]).arguments == ["-"])
  }

  @Test("a double dash ends the options")
  func doubleDash() throws {
    let parsed = try Self.parse(["--", "--json", "-c"])
    #expect(parsed.arguments == ["--json", "-c"])
    #expect(parsed.flags.isEmpty)
  }

  @Test("a negative number is a value, not an option")
  func negativeNumber() throws {
    let parsed = try Self.parse(["--seed", "-3", "-5"])
    #expect(parsed.value("seed") == "-3")
    #expect(parsed.arguments == ["-5"])
  }

  @Test("--help anywhere before -- skips every other check")
  func helpWins() throws {
    #expect(try Self.parse(["--bogus", "--help"]).wantsHelp)
    #expect(try Self.parse(["-h"]).wantsHelp)
    #expect(try Self.parse(["--", "--help"]).arguments == ["--help"])
  }

  @Test(
    "mistakes are usage errors with precise messages",
    arguments: [
      (["--jsn", "x"], "unknown option '--jsn'; did you mean '--json'?"),
      (["-json", "x"], "unknown option '-json'; did you mean '--json'?"),
      (["--zzzzzz", "x"], "unknown option '--zzzzzz'"),
      (["x", "--seed"], "option '--seed' needs a value (N)"),
      (["--seed", "--json", "x"], "option '--seed' needs a value (N)"),
      (["--json=yes", "x"], "option '--json' takes no value"),
      (
        ["--format", "jsn", "x"],
        "invalid value 'jsn' for '--format'; expected 'text' or 'json'; did you mean 'json'?"
      ),
      (["--seed", "1", "--seed", "2", "x"], "option '--seed' given more than once"),
      ([], "missing file"),
      (["a", "b", "c"], "unexpected argument 'c'"),
    ])
  func usageErrors(arguments: [String], message: String) {
    #expect(throws: UsageError.self) { try Self.parse(arguments) }
    do {
      _ = try Self.parse(arguments)
    } catch {
      #expect(error.message == message)
    }
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
