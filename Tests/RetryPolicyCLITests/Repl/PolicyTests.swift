import Foundation
import Testing

@testable import RetryPolicyCLI

/// The `:json` object of the session's last policy.
private func json(_ harness: inout ReplHarness) async throws -> [String: Any] {
  let text = await harness.enter(":json")
  let object = try JSONSerialization.jsonObject(with: Data(text.utf8))
  return try #require(object as? [String: Any])
}

private func delays(_ object: [String: Any], rule: Int = 0) throws -> [Double] {
  let rules = try #require(object["rules"] as? [[String: Any]])
  let schedule = try #require(rules[rule]["schedule"] as? [[String: Any]])
  return schedule.compactMap { $0["delay"] as? Double }
}

@Suite("REPL policies")
struct ReplPolicyTests {
  @Test("a policy typed in is compiled and explained at once")
  func explainTyped() async throws {
    var harness = ReplHarness()
    let output = await harness.enter("retry 3 backoff 1s")
    #expect(!output.isEmpty)
    #expect(harness.errors.isEmpty)
    #expect(harness.session.errorCount == 0)
    var object = try await json(&harness)
    #expect(try delays(object) == [1, 2, 4])
    let rules = try #require(object["rules"] as? [[String: Any]])
    let behavior = try #require(rules.first?["behavior"] as? [String: Any])
    #expect(behavior["kind"] as? String == "exponential")
    await harness.enter("retry 2 delay 500ms")
    object = try await json(&harness)
    #expect(try delays(object) == [0.5, 0.5])
  }

  @Test("an error points into the line just typed, with a marker under the column")
  func errorMarker() async {
    var harness = ReplHarness()
    let output = await harness.enter("retry 3 bakoff 1s")
    #expect(output.isEmpty)
    #expect(harness.errors.hasPrefix("<repl>:1:9: error: "))
    #expect(harness.errors.contains("did you mean 'backoff'?"))
    #expect(harness.errors.contains("\nretry 3 bakoff 1s\n        ^\n"))
    #expect(harness.session.errorCount == 1)
  }

  @Test("commands about the last policy refuse when it has errors")
  func lastPolicyHasErrors() async {
    var harness = ReplHarness()
    await harness.enter("retry 3 backoff 1s", "retry 3 bakoff 1s")
    harness.clear()
    await harness.enter(":json")
    #expect(harness.errors == "error: the last policy has errors; type a correct one first\n")
  }

  @Test("a block typed over several lines is compiled at its closing brace")
  func block() async throws {
    var harness = ReplHarness()
    #expect(await harness.enter("policy payments {").isEmpty)
    #expect(await harness.enter("  retry 2 on serverError delay 1s").isEmpty)
    #expect(await harness.enter("  within 1m").isEmpty)
    let output = await harness.enter("}")
    #expect(output.contains("payments"))
    #expect(harness.errors.isEmpty)
    let object = try await json(&harness)
    #expect(object["within"] as? Double == 60)
    #expect(try delays(object) == [1, 1])
  }

  @Test("an error inside a block names the block's line")
  func blockError() async {
    var harness = ReplHarness()
    await harness.enter("policy p {", "  retry 2 delay 1s", "  retry 3 on x delay 5d", "}")
    #expect(harness.errors.hasPrefix("<repl>:3:"))
    #expect(harness.errors.contains("  retry 3 on x delay 5d\n"))
  }

  @Test("a block still open at the end of input is reported")
  func unterminatedBlock() async {
    var harness = ReplHarness()
    await harness.enter("policy p {", "  retry 2")
    let messages = harness.session.finish()
    #expect(messages.contains { $0.stream == .error && $0.text.contains("<repl>:") })
    #expect(harness.session.errorCount == 1)
  }

  @Test("'policy NAME = …' on one line is compiled and can be explained again by name")
  func namedLine() async {
    var harness = ReplHarness()
    await harness.enter("policy quick = retry 3 immediately", "retry 1")
    #expect(harness.errors.isEmpty)
    harness.clear()
    let quick = await harness.enter(":explain quick")
    #expect(!quick.isEmpty)
    await harness.enter(":explain quik")
    #expect(harness.errors == "error: no policy 'quik'; did you mean 'quick'?\n")
  }

  @Test("':ast' shows the tree of the last policy with source ranges")
  func ast() async {
    var harness = ReplHarness()
    await harness.enter("retry 3 on serverError backoff 1s x1.5")
    let dump = await harness.enter(":ast")
    #expect(dump.contains("retry 3  1:1-1:8"))
    #expect(dump.contains("on  1:9-1:23"))
    #expect(dump.contains("name serverError  1:12-1:23"))
    #expect(dump.contains("backoff  1:24-1:39"))
    #expect(dump.contains("duration 1s  1:32-1:34"))
    #expect(dump.contains("factor 1.5"))
  }

  @Test("':simulate' runs the last policy against scripted outcomes")
  func simulate() async {
    var harness = ReplHarness()
    await harness.enter("retry 2 on serverError delay 1s")
    let success = await harness.enter(":simulate serverError*2, ok")
    #expect(success.contains("succeeded on attempt 3 after 2s"))
    #expect(harness.errors.isEmpty)
    let blanks = await harness.enter(":simulate serverError serverError ok")
    #expect(blanks == success.replacingOccurrences(of: "*2", with: ", serverError"))
    let failure = await harness.enter(":simulate serverError")
    #expect(!failure.contains("succeeded"))
    #expect(harness.session.errorCount == 0)
    await harness.enter(":simulate serverError xx!")
    #expect(harness.errors == "error: unexpected '!' in outcome 'xx!'\n")
  }

  @Test("':load' lists a file's policies and ':explain NAME' explains one")
  func loadAndExplain() async throws {
    let file = """
      policy quick = retry 3 immediately

      policy payments {
        retry 5 on serverError backoff 1s x1.5 jitter 10% max 30s
        within 2m
      }
      """
    var harness = ReplHarness(files: ["p.retry": file])
    let listing = await harness.enter(":load p.retry")
    #expect(listing.contains("quick"))
    #expect(listing.contains("payments"))
    #expect(harness.errors.isEmpty)
    let payments = await harness.enter(":explain payments")
    #expect(!payments.isEmpty)
    let object = try await json(&harness)
    #expect(object["within"] as? Double == 120)
    await harness.enter(":explain paymnets")
    #expect(
      harness.errors == "error: no policy 'paymnets' in 'p.retry'; did you mean 'payments'?\n")
  }

  @Test("':load' reports a file's errors under the file's name")
  func loadWithErrors() async {
    let file = "policy a = retry 3 bakoff 1s\npolicy b = retry 1\n"
    var harness = ReplHarness(files: ["bad.retry": file])
    let listing = await harness.enter(":load bad.retry")
    #expect(harness.errors.hasPrefix("bad.retry:1:"))
    #expect(listing.contains("a (has errors)"))
    #expect(harness.session.errorCount == 1)
    harness.clear()
    await harness.enter(":explain a")
    #expect(harness.errors == "error: policy 'a' in 'bad.retry' has errors\n")
  }

  @Test("':load' again reloads in place: a version with errors changes nothing")
  func reloadInPlace() async {
    var harness = ReplHarness(files: ["p.retry": "policy a = retry 3\npolicy b = retry 1\n"])
    await harness.enter(":load p.retry")
    harness.session.readFile = { _ in Array("policy a = retry 9 bakoff 1s\n".utf8) }
    harness.clear()
    let refused = await harness.enter(":load p.retry")
    #expect(harness.errors.hasPrefix("p.retry:1:20: error: unknown clause 'bakoff'"))
    #expect(refused == "not reloaded: 'p.retry' has errors; its policies stay as they were\n")
    harness.clear()
    let still = await harness.enter(":explain a")
    #expect(still.contains("3 retries") || still.contains("retry 3"))
    harness.session.readFile = { _ in Array("policy a = retry 5\npolicy c = retry 2\n".utf8) }
    harness.clear()
    #expect(await harness.enter(":load") == "reloaded 'p.retry': a, c, b changed\n")
    #expect(harness.errors.isEmpty)
    harness.clear()
    #expect(await harness.enter(":load p.retry") == "reloaded 'p.retry': no policy changed\n")
    await harness.enter(":explain b")
    #expect(harness.errors.hasPrefix("error: no policy 'b' in 'p.retry'"))
  }

  @Test("':load' reads bytes: invalid UTF-8 in a comment is an error at its line and column")
  func loadReportsInvalidUTF8() async {
    let bytes = Array("policy a = retry 1 # caf".utf8) + [0xC3, 0x28] + Array(")\n".utf8)
    var harness = ReplHarness(byteFiles: ["odd.retry": bytes])
    _ = await harness.enter(":load odd.retry")
    #expect(harness.errors.hasPrefix("odd.retry:1:25: error: "))
    #expect(harness.errors.contains("UTF-8"))
    #expect(harness.session.errorCount == 1)
  }

  @Test("without color there are no escape codes")
  func noEscapeCodes() async {
    var harness = ReplHarness()
    await harness.enter("retry 3 backoff 1s", "retry 3 bakoff 1s", ":ast", ":json")
    #expect(!(harness.output + harness.errors).contains("\u{1B}"))
  }
}

@Suite("REPL policies end to end")
struct ReplPolicyEndToEndTests {
  @Test("a script of a policy and ':json' prints its JSON, status 0")
  func scripted() async throws {
    let result = try BuiltTool.run(["repl"], input: "retry 3 backoff 1s\n:json\n")
    #expect(result.status == 0)
    #expect(result.errors.isEmpty)
    #expect(result.output.contains("\"kind\": \"exponential\""))
    #expect(!result.output.contains("\u{1B}"))
  }

  @Test("an error in a piped policy is reported under '<repl>' and makes the status 1")
  func scriptedError() async throws {
    let result = try BuiltTool.run(["repl"], input: "retry 3 bakoff 1s\r\n")
    #expect(result.status == 1)
    #expect(result.errors.hasPrefix("<repl>:1:9: error: "))
  }

  @Test("a piped policy is explained exactly as 'explain' explains it")
  func sameAsExplain() throws {
    let policy = "retry 5 on serverError backoff 1s x1.5 jitter 10% max 30s within 2m"
    let repl = try BuiltTool.run(["repl"], input: policy + "\n:json\n")
    let explain = try BuiltTool.run(["explain", policy], input: "")
    let json = try BuiltTool.run(["explain", "--json", policy], input: "")
    #expect(repl.status == 0)
    #expect(explain.status == 0)
    #expect(repl.output == explain.output + json.output)
  }
}
