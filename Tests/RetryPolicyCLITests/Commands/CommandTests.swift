import Foundation
import RetryPolicy
import RetryPolicyEngines
import RetryPolicySimulation
import RetryPolicyTestSupport
import RetryPolicyTesting
import Synchronization
import Testing

@testable import RetryPolicyCLI

/// The subcommands in-process, with the real parser, compiler and runtime.
@Suite("Command line: check")
struct CheckCommandTests {
  @Test("a file with errors exits 1 and prints each diagnostic with its line and marker")
  func errors() async throws {
    let folder = try ToolRunner.makeFolder([
      "bad.retry": "policy a = retry 3 delay 2d\npolicy b = retry 2 bakoff 1s\n"
    ])
    defer { try? FileManager.default.removeItem(at: folder) }
    let path = folder.appendingPathComponent("bad.retry").path
    let result = await ToolRunner.run(["check", path])
    #expect(result.status == 1)
    #expect(
      result.standardOutput == """
        \(path):1:27: error: unknown unit 'd'; did you mean '48h'?
        policy a = retry 3 delay 2d
                                  ^
        \(path):2:20: error: unknown clause 'bakoff'; did you mean 'backoff'?
        policy b = retry 2 bakoff 1s
                           ^

        """)
    #expect(result.standardError == "checked 1 file: 2 errors\n")
  }

  @Test("warnings alone exit 0; a clean file prints nothing on standard output")
  func warningsAndClean() async throws {
    let folder = try ToolRunner.makeFolder([
      "warn.retry": "policy a = retry 3 on foo delay 0s\n",
      "sub/ok.retry": "# fine\npolicy b = retry 3 backoff 1s\n",
    ])
    defer { try? FileManager.default.removeItem(at: folder) }
    let result = await ToolRunner.run(["check", folder.path])
    #expect(result.status == 0)
    #expect(result.standardOutput.contains("warn.retry:1:"))
    #expect(result.standardOutput.contains(": warning: "))
    #expect(result.standardError == "checked 2 files: 1 warning\n")
    let clean = await ToolRunner.run(["check", folder.appendingPathComponent("sub").path])
    #expect(
      clean
        == CommandResult(
          status: 0, standardOutput: "", standardError: "checked 1 file: no problems\n"))
  }

  @Test("'-' checks standard input under the name <stdin>")
  func standardInput() async {
    let result = await ToolRunner.run(["check", "-"], input: "policy a = retry 3 delay 5\n")
    #expect(result.status == 1)
    #expect(result.standardOutput.hasPrefix("<stdin>:1:26: error: "))
  }

  @Test("invalid UTF-8 is read, not refused: the parser reports it")
  func invalidUTF8() async throws {
    let folder = try ToolRunner.makeFolder([:])
    defer { try? FileManager.default.removeItem(at: folder) }
    let url = folder.appendingPathComponent("bytes.retry")
    try Data([0x70, 0x6F, 0x6C, 0x69, 0x63, 0x79, 0x20, 0xFF, 0xFE, 0x0A]).write(to: url)
    let result = await ToolRunner.run(["check", "--format", "json", url.path])
    #expect(result.status == 1)
    let root = try #require(
      try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
    let diagnostics = try #require(root["diagnostics"] as? [[String: Any]])
    #expect(diagnostics.contains { $0["id"] as? String == "invalid-utf8" })
  }

  @Test("--format json lists every diagnostic with file, place, severity, id, message and notes")
  func json() async throws {
    let folder = try ToolRunner.makeFolder([
      "a.retry": "policy p = retry 1\npolicy p = retry 2\n", "b.retry": "policy q = retry 1\n",
    ])
    defer { try? FileManager.default.removeItem(at: folder) }
    let result = await ToolRunner.run(["check", "--format", "json", folder.path, "/nonexistent"])
    #expect(result.status == 2)
    let root = try #require(
      try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
    #expect((root["files"] as? [String])?.count == 2)
    #expect(root["errors"] as? Int == 1)
    #expect(root["warnings"] as? Int == 0)
    let diagnostic = try #require((root["diagnostics"] as? [[String: Any]])?.first)
    #expect((diagnostic["file"] as? String)?.hasSuffix("a.retry") == true)
    #expect(diagnostic["line"] as? Int == 2)
    #expect(diagnostic["column"] as? Int == 8)
    #expect(diagnostic["severity"] as? String == "error")
    #expect(diagnostic["id"] as? String == "duplicate-policy")
    #expect(diagnostic["message"] is String)
    let note = try #require((diagnostic["notes"] as? [[String: Any]])?.first)
    #expect(note["line"] as? Int == 1)
    #expect(note["severity"] as? String == "note")
    #expect((root["unreadable"] as? [[String: Any]])?.first?["file"] as? String == "/nonexistent")
  }

  @Test("--classes and --hooks check names against the host's vocabulary")
  func vocabulary() async {
    let policy = "policy a = retry 1 on unauthorised after refreshToken\n"
    let open = await ToolRunner.run(["check", "-"], input: policy)
    #expect(open.status == 0)
    let closed = await ToolRunner.run(
      ["check", "--classes", "unauthorized, serverError", "--hooks", "refreshToken", "-"],
      input: policy)
    #expect(closed.status == 1)
    #expect(
      closed.standardOutput.hasPrefix(
        "<stdin>:1:23: error: unknown error class 'unauthorised'; did you mean 'unauthorized'?\n"))
  }

  @Test("an empty folder is a warning, not an error")
  func emptyFolder() async throws {
    let folder = try ToolRunner.makeFolder(["notes.txt": "x"])
    defer { try? FileManager.default.removeItem(at: folder) }
    let result = await ToolRunner.run(["check", folder.path])
    #expect(result.status == 0)
    #expect(result.standardError.contains("warning: no .retry files in"))
  }
}

@Suite("Command line: explain")
struct ExplainCommandTests {
  static let worked = "retry 5 on serverError backoff 1s x1.5 jitter 10%"

  @Test("--json gives the contract's numbers for the worked example")
  func json() async throws {
    let result = await ToolRunner.run(["explain", "--json", Self.worked])
    #expect(result.status == 0)
    #expect(result.standardError.isEmpty)
    let root = try #require(
      try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
    let rule = try #require((root["rules"] as? [[String: Any]])?.first)
    let schedule = try #require(rule["schedule"] as? [[String: Any]])
    #expect(schedule.map { $0["delay"] as? Double } == [1.0, 1.5, 2.25, 3.375, 5.0625])
    #expect(schedule.first?["min"] as? Double == 0.9)
    #expect(schedule.first?["max"] as? Double == 1.1)
    #expect(rule["truncated"] as? Bool == false)
    #expect(
      result.standardOutput.contains(#"{"retry": 2, "delay": 1.5, "min": 1.35, "max": 1.65}"#))
  }

  @Test("the text form shows behavior, attempts, the table and the worst-case total")
  func text() async {
    let result = await ToolRunner.run(["explain", Self.worked])
    #expect(result.status == 0)
    #expect(result.standardOutput.hasPrefix("policy: \(Self.worked)\n"))
    #expect(
      result.standardOutput.contains("exponential(maxCount: 5, initial: 1s, multiplier: 1.5)"))
    #expect(result.standardOutput.contains("at most 6 (1 + 5 retries)"))
    #expect(result.standardOutput.contains("      1  1s       0.9s – 1.1s          1.1s\n"))
    #expect(result.standardOutput.contains("worst-case total: 14.50625s\n"))
  }

  @Test("'-' reads the policy from standard input, and words are joined")
  func standardInputAndWords() async {
    let fromInput = await ToolRunner.run(["explain", "--json", "-"], input: Self.worked + "\n")
    let fromWords = await ToolRunner.run(
      ["explain", "--json"] + Self.worked.split(separator: " ").map(String.init))
    let quoted = await ToolRunner.run(["explain", "--json", Self.worked])
    #expect(fromInput.status == 0)
    #expect(fromInput == quoted)
    #expect(fromWords == quoted)
  }

  @Test("an invalid policy exits 1 with diagnostics about <policy> on standard error")
  func invalid() async {
    let result = await ToolRunner.run(["explain", "retry 3 on serverError delay 2d"])
    #expect(result.status == 1)
    #expect(result.standardOutput.isEmpty)
    #expect(
      result.standardError == """
        <policy>:1:31: error: unknown unit 'd'; did you mean '48h'?
        retry 3 on serverError delay 2d
                                      ^

        """)
  }

  @Test("warnings go to standard error and the policy is still explained")
  func warnings() async {
    let result = await ToolRunner.run(["explain", "retry 3 delay 10s max 5s"])
    #expect(result.status == 0)
    #expect(result.standardError.hasPrefix("<policy>:1:19: warning: "))
    #expect(result.standardOutput.hasPrefix("policy: retry 3 delay 10s max 5s\n"))
  }

  @Test("retry forever lists the first 100 retries, truncated")
  func forever() async throws {
    let result = await ToolRunner.run(["explain", "--json", "retry forever delay 1s within 1m"])
    #expect(result.status == 0)
    let root = try #require(
      try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
    let rule = try #require((root["rules"] as? [[String: Any]])?.first)
    #expect((rule["schedule"] as? [Any])?.count == 100)
    #expect(rule["truncated"] as? Bool == true)
    #expect(root["within"] as? Double == 60.0)
    let behavior = try #require(rule["behavior"] as? [String: Any])
    #expect(behavior["maxCount"] is NSNull)
  }

  @Test("--file and --policy pick a policy; unknown names get a suggestion and exit 1")
  func file() async throws {
    let folder = try ToolRunner.makeFolder([
      "p.retry": "policy payments = retry 2 delay 1s\npolicy search = retry 1 immediately\n",
      "one.retry": "policy only = retry 4 delay 2s\n",
      "bad.retry": "policy broken = retry 2 delay 1x\n",
    ])
    defer { try? FileManager.default.removeItem(at: folder) }
    let path = folder.appendingPathComponent("p.retry").path
    let chosen = await ToolRunner.run(["explain", "--file", path, "--policy", "search"])
    #expect(chosen.status == 0)
    #expect(chosen.standardOutput.hasPrefix("policy search: retry 1 immediately\n"))
    let misspelt = await ToolRunner.run(["explain", "--file", path, "--policy", "paymnts"])
    #expect(misspelt.status == 1)
    #expect(
      misspelt.standardError
        == "retry-policy: error: no policy 'paymnts' in '\(path)'; did you mean 'payments'?\n")
    let ambiguous = await ToolRunner.run(["explain", "--file", path])
    #expect(ambiguous.status == 2)
    #expect(ambiguous.standardError.contains("choose one with '--policy': payments, search"))
    let only = await ToolRunner.run([
      "explain", "--json", "--file", folder.appendingPathComponent("one.retry").path,
    ])
    #expect(only.status == 0)
    #expect(only.standardOutput.contains(#""name": "only""#))
    let broken = await ToolRunner.run([
      "explain", "--file", folder.appendingPathComponent("bad.retry").path, "--policy", "broken",
    ])
    #expect(broken.status == 1)
    #expect(broken.standardError.contains("bad.retry:1:"))
  }
}

@Suite("Command line: fmt")
struct FormatCommandTests {
  static let messy =
    "policy  a = retry 3   on p,q delay 1s   # keep me\n\n\n# top\npolicy b {\nretry 2 backoff 1s\n  within 1m\n}\n"

  @Test("fmt rewrites files in canonical form, keeping comments, and is idempotent")
  func rewrites() async throws {
    let folder = try ToolRunner.makeFolder(["messy.retry": Self.messy])
    defer { try? FileManager.default.removeItem(at: folder) }
    let url = folder.appendingPathComponent("messy.retry")
    let check = await ToolRunner.run(["fmt", "--check", folder.path])
    #expect(check.status == 1)
    #expect(check.standardOutput == url.path + "\n")
    #expect(try String(contentsOf: url, encoding: .utf8) == Self.messy)
    let format = await ToolRunner.run(["fmt", url.path])
    #expect(format.status == 0)
    let formatted = try String(contentsOf: url, encoding: .utf8)
    #expect(formatted != Self.messy)
    #expect(formatted.contains("# keep me"))
    #expect(formatted.contains("# top"))
    let again = await ToolRunner.run(["fmt", "--check", url.path])
    #expect(again == CommandResult(status: 0, standardOutput: "", standardError: ""))
  }

  @Test("fmt - formats standard input to standard output")
  func standardInput() async {
    let result = await ToolRunner.run(["fmt", "-"], input: Self.messy)
    #expect(result.status == 0)
    #expect(result.standardOutput.hasPrefix("policy a = retry 3 on p, q delay 1s"))
    if case .formatted(let text) = FormatCommand.format(Self.messy) {
      #expect(result.standardOutput == text)
    } else {
      Issue.record("the messy text should format")
    }
  }

  @Test("a file with errors is left unchanged and exits 1")
  func refusesErrors() async throws {
    let text = "policy a =   retry 3 delay 2d\n"
    let folder = try ToolRunner.makeFolder(["bad.retry": text])
    defer { try? FileManager.default.removeItem(at: folder) }
    let url = folder.appendingPathComponent("bad.retry")
    let result = await ToolRunner.run(["fmt", url.path])
    #expect(result.status == 1)
    #expect(result.standardError.contains("error: unknown unit 'd'"))
    #expect(result.standardError.contains("has errors; not formatted"))
    #expect(try String(contentsOf: url, encoding: .utf8) == text)
    let piped = await ToolRunner.run(["fmt", "-"], input: text)
    #expect(piped.status == 1)
    #expect(piped.standardOutput.isEmpty)
  }

  @Test("formatting keeps the compiled policies of every sample")
  func samplesKeepMeaning() throws {
    let samples = packageRoot.appendingPathComponent("Samples")
    let files = PolicyInput.expand([samples.path], context: ToolRunner.context()).files
    #expect(!files.isEmpty)
    for path in files.map(\.name) where !path.contains("/mistakes/") {
      let source = try String(contentsOfFile: path, encoding: .utf8)
      guard case .formatted(let text) = FormatCommand.format(source) else {
        Issue.record("\(path) did not format")
        continue
      }
      #expect(FormatCommand.format(text) == .formatted(text), "\(path) is not idempotent")
    }
  }
}

@Suite("Command line: simulate")
struct SimulateCommandTests {
  static let worked = "retry 5 on serverError backoff 1s x1.5 jitter 10%"

  static func json(_ result: CommandResult) throws -> [String: Any] {
    try #require(
      try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
  }

  @Test("failures then success: waits within the jitter ranges, exit 0")
  func succeeds() async throws {
    let result = await ToolRunner.run([
      "simulate", Self.worked, "--outcomes", "serverError*2,ok", "--seed", "7", "--json",
    ])
    #expect(result.status == 0)
    let root = try Self.json(result)
    let attempts = try #require(root["attempts"] as? [[String: Any]])
    #expect(attempts.map { $0["outcome"] as? String } == ["serverError", "serverError", "ok"])
    #expect(attempts.map { $0["decision"] as? String } == ["retry", "retry", "succeeded"])
    let firstWait = try #require(attempts[0]["wait"] as? Double)
    let secondWait = try #require(attempts[1]["wait"] as? Double)
    #expect((0.9...1.1).contains(firstWait))
    #expect((1.35...1.65).contains(secondWait))
    let result2 = try #require(root["result"] as? [String: Any])
    #expect(result2["succeeded"] as? Bool == true)
    #expect(result2["attempts"] as? Int == 3)
    #expect(root["seed"] as? Int == 7)
  }

  @Test("the same seed gives the same timeline")
  func deterministic() async {
    let arguments = ["simulate", Self.worked, "--outcomes", "serverError", "--seed", "42"]
    let first = await ToolRunner.run(arguments)
    let second = await ToolRunner.run(arguments)
    #expect(first == second)
    #expect(first.status == 1)
    #expect(first.standardOutput.contains("gave up: retries exhausted"))
    #expect(first.standardOutput.contains("result: failed after 6 attempts"))
  }

  @Test("'rate' makes each attempt wait for its token on virtual time; past 'within' it stops")
  func rateWaits() async throws {
    let result = await ToolRunner.run([
      "simulate", "retry 4 on serverError rate 1/s burst 1 within 3s", "--outcomes",
      "serverError", "--seed", "1", "--json",
    ])
    #expect(result.status == 1)
    let root = try Self.json(result)
    let attempts = try #require(root["attempts"] as? [[String: Any]])
    #expect(attempts.map { $0["start"] as? Double } == [0, 1, 2, 3])
    // The wait for the token shows beside the rule's delay: simulate shows every wait.
    #expect(attempts.prefix(3).map { $0["admissionWait"] as? Double } == [1, 1, 1])
    let text = await ToolRunner.run([
      "simulate", "retry 4 on serverError rate 1/s burst 1 within 3s", "--outcomes",
      "serverError", "--seed", "1",
    ])
    #expect(text.standardOutput.contains("retry 4 of 4, then gave up: rate limited  0s\n"))
    #expect(text.standardOutput.contains("retry 1 of 4                              0s + 1s rate"))
  }

  @Test("an error no rule matches is thrown at once")
  func notMatched() async {
    let result = await ToolRunner.run([
      "simulate", "retry 3 on serverError delay 1s", "--outcomes", "badRequest", "--seed", "1",
    ])
    #expect(result.status == 1)
    #expect(result.standardOutput.contains("gave up: error not matched"))
    #expect(result.standardOutput.contains("failed after 1 attempt in 0s, throwing badRequest"))
  }

  @Test("HTTP statuses and URL error names script outcomes matched by 5xx, 429 and transient")
  func httpOutcomes() async {
    let result = await ToolRunner.run([
      "simulate", "retry 3 on 5xx, 429, transient backoff 1s max 30s honoring retry-after",
      "--outcomes", "503,429@5s,timedOut,ok", "--seed", "1",
    ])
    #expect(result.status == 0)
    #expect(result.standardOutput.contains("result: succeeded on attempt 4 after 10s"))
    let notMatched = await ToolRunner.run([
      "simulate", "retry 3 on 5xx", "--outcomes", "404", "--seed", "1",
    ])
    #expect(notMatched.status == 1)
    #expect(notMatched.standardOutput.contains("gave up: error not matched"))
  }

  @Test("within stops a server that stays down")
  func deadline() async throws {
    let result = await ToolRunner.run([
      "simulate", "retry forever backoff 1s within 30s", "--outcomes", "serverError", "--seed", "1",
      "--json",
    ])
    #expect(result.status == 1)
    let attempts = try #require(try Self.json(result)["attempts"] as? [[String: Any]])
    #expect(attempts.count == 5)
    #expect(attempts.last?["reason"] as? String == "deadline exceeded")
    #expect(attempts.map { $0["start"] as? Double } == [0.0, 1.0, 3.0, 7.0, 15.0])
  }

  @Test("timeouts, Retry-After and cancellation follow the runtime's rules")
  func timeoutRetryAfterCancel() async throws {
    let result = await ToolRunner.run([
      "simulate", "retry 3 on slow, timeout delay 1s honoring retry-after timeout 2s",
      "--outcomes", "slow@5s,ok~3s,cancel", "--seed", "1", "--json",
    ])
    #expect(result.status == 1)
    let attempts = try #require(try Self.json(result)["attempts"] as? [[String: Any]])
    #expect(attempts.count == 3)
    #expect(attempts[0]["wait"] as? Double == 5.0)
    #expect(attempts[1]["outcome"] as? String == "timeout")
    #expect(attempts[1]["end"] as? Double == 7.0)
    #expect(attempts[2]["outcome"] as? String == "cancel")
    #expect(attempts[2]["reason"] as? String == "cancelled")
  }

  @Test("a run that never ends on virtual time is cut short")
  func cutShort() async throws {
    // The tool stops after 10,001 attempts; 10,001 trips through the runtime made this a
    // slow test on a busy machine, so the same run is cut short after 25 here.
    let policy = try compile(policy: "retry forever immediately within 1m")
    let simulation = Simulation(
      policy: policy, script: SimulateCommand.defaultScript(for: policy), seed: 1,
      attemptLimit: 25)
    let timeline = try #require(await simulation.run())
    #expect(!timeline.succeeded)
    #expect(timeline.isCutShort)
    #expect(timeline.attempts.count == 25)
    let data = Data(JSONWriter().write(SimulationRendering.jsonValue(timeline)).utf8)
    let root = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    #expect((root["attempts"] as? [Any])?.count == 25)
    #expect((root["result"] as? [String: Any])?["cutShort"] as? Bool == true)
    let text = SimulationRendering.text(timeline, usesColor: false)
    #expect(text.contains("… (stopped after 25 attempts)\n"))
  }

  @Test("the tool cuts a run short only past the largest count the language allows")
  func toolAttemptLimit() {
    #expect(
      Simulation(policy: CompiledPolicy(rules: []), script: .init(steps: []), seed: 1)
        .attemptLimit == Simulation.attemptLimit)
    #expect(!analyze(policy: "retry \(Simulation.attemptLimit - 1)").hasErrors)
    #expect(analyze(policy: "retry \(Simulation.attemptLimit)").hasErrors)
  }
}

@Suite("check --watch")
struct CheckWatchTests {
  @Test("checks again when a file changes, and only then")
  func checksAgainOnChange() async throws {
    let folder = FileManager.default.temporaryDirectory
      .appendingPathComponent("retry-policy-watch-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let file = folder.appendingPathComponent("p.retry")
    try Data("policy a = retry 3\n".utf8).write(to: file)
    let output = Output(destination: .capture, outputUsesColor: false, errorUsesColor: false)
    let context = CommandContext(output: output, environment: [:], input: Data())
    var options = CheckCommand.Options()
    options.isWatching = true
    options.arguments = [folder.path]
    // Each look at the files comes after one sleep; the file changes before the third.
    let clock = SteppingClock { step in
      if step == 3 { try? Data("policy a = retry 3 delay 2d\n".utf8).write(to: file) }
    }
    let status = await CheckCommand.watch(options, context: context, clock: clock, rounds: 5)
    #expect(status == ExitStatus.failure)
    #expect(output.capturedError.components(separatedBy: "checked 1 file").count == 3)
    #expect(output.capturedError.contains("note: changed: \(file.path); checking again"))
    #expect(output.capturedOutput.contains("p.retry:1:27: error: unknown unit 'd'"))
  }

  @Test("--watch refuses standard input")
  func refusesStandardInput() async {
    let result = await CommandLineTool.run(arguments: ["check", "--watch", "-"])
    #expect(result.status == 2)
    #expect(result.standardError.hasPrefix("retry-policy: error: '--watch' needs files"))
  }
}
