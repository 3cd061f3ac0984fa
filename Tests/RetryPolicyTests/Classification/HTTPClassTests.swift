import Foundation
import RetryPolicyTesting
import Testing

@testable import RetryPolicy

/// An error of some other HTTP client, conforming to the core's protocol.
private struct ClientError: HTTPStatusProviding {
  var statusCode: Int
}

@Suite("HTTP error classes: status codes, status classes, URL errors, transient")
struct HTTPClassTests {
  @Test(
    "a status form, transient or a URL error name matches as the reference says",
    arguments: [
      (ClientError(statusCode: 503) as any Error, "503", true),
      (ClientError(statusCode: 503), "504", false),
      (ClientError(statusCode: 503), "5xx", true),
      (ClientError(statusCode: 599), "5xx", true),
      (ClientError(statusCode: 600), "5xx", false),
      (ClientError(statusCode: 499), "5xx", false),
      (ClientError(statusCode: 429), "4xx", true),
      (ClientError(statusCode: 429), "transient", false),
      (ClientError(statusCode: 408), "transient", true),
      (ClientError(statusCode: 501), "transient", false),
      (ClientError(statusCode: 504), "transient", true),
      (URLError(.timedOut), "timedOut", true),
      (URLError(.timedOut), "networkConnectionLost", false),
      (URLError(.networkConnectionLost), "transient", true),
      (URLError(.badURL), "transient", false),
      (URLError(.badURL), "5xx", false),
      (URLError(.cannotConnectToHost), "cannotConnectToHost", true),
      (URLError(.cannotConnectToHost), "URLError", true),
      (CancellationError(), "transient", false),
      (AttemptTimeoutError(timeout: .seconds(1)), "timedOut", false),
    ])
  func classesMatch(error: any Error, name: String, matches: Bool) {
    #expect(ErrorClassification(error).matches(name) == matches)
  }

  @Test("status forms and built-in names parse, print back and compile as written")
  func parseAndPrint() throws {
    let source = "policy api = retry 4 on 5xx,429 ,  transient except 501 backoff 1s\n"
    let (syntax, diagnostics) = Parser.parseFile(source)
    #expect(diagnostics.isEmpty)
    #expect(
      CanonicalPrinter.print(syntax)
        == "policy api = retry 4 on 5xx, 429, transient except 501 backoff 1s\n")
    let policy = try compile(policy: "retry 4 on 5xx, 429, timedOut except 501 backoff 1s")
    #expect(policy.rules[0].errorClasses == ["5xx", "429", "timedOut"])
    #expect(policy.rules[0].excludedClasses == ["501"])
  }

  @Test(
    "a status outside 100-599 or a class outside 1xx-5xx is an error with a suggestion",
    arguments: [
      ("retry 3 on 600", DiagnosticID.invalidStatusCode, "1:12", "did you mean '500'?"),
      ("retry 3 on 6xx", .invalidStatusClass, "1:12", "did you mean '5xx'?"),
      ("retry 3 on 099", .invalidStatusCode, "1:12", "did you mean '199'?"),
      ("retry 3 on 5XX", .invalidStatusClass, "1:12", "did you mean '5xx'?"),
      ("retry 3 except 5030", .invalidStatusCode, "1:16", "did you mean '503'?"),
      ("retry 3 on 0xx", .invalidStatusClass, "1:12", "did you mean '1xx'?"),
      ("retry 3 on 5x", .invalidStatusClass, "1:12", "did you mean '5xx'?"),
    ])
  func invalidStatus(source: String, id: DiagnosticID, location: String, suggestion: String) {
    let analysis = analyze(policy: source)
    let found = analysis.diagnostics.filter { $0.id == id }
    #expect(found.count == 1, "\(analysis.diagnostics)")
    #expect(found.first.map { "\($0.line):\($0.column)" } == location)
    #expect(found.first?.message.hasSuffix(suggestion) == true, "\(found)")
  }

  @Test("a closed vocabulary accepts status forms, transient and URL error names")
  func vocabularyAcceptsBuiltIns() {
    let vocabulary = Vocabulary(errorClasses: ["serverError"])
    let clean = analyze(
      policy: "retry 3 on 503, 5xx, transient, timedOut, serverError", vocabulary: vocabulary)
    #expect(clean.diagnostics.isEmpty)
    let typo = analyze(policy: "retry 3 on timedOt", vocabulary: vocabulary)
    #expect(
      typo.diagnostics.map(\.message) == ["unknown error class 'timedOt'; did you mean 'timedOut'?"]
    )
  }

  @Test("a run retries an error of another client by its status, and throws it when unmatched")
  func runMatchesByStatus() async throws {
    let policy = try compile(policy: "retry 3 on 5xx, 429")
    var calls = 0
    let value = try await policy.run(in: RetryEnvironment(clock: ImmediateClock())) {
      calls += 1
      if calls < 3 { throw ClientError(statusCode: calls == 1 ? 503 : 429) }
      return "ok"
    }
    #expect(value == "ok" && calls == 3)
    calls = 0
    await #expect(throws: ClientError.self) {
      try await policy.run(in: RetryEnvironment(clock: ImmediateClock())) {
        calls += 1
        throw ClientError(statusCode: 404)
      }
    }
    #expect(calls == 1)
  }

  @Test("every URL error name is a class of its own and in transient; other codes are not")
  func urlErrorNamesAreTransient() {
    #expect(HTTPErrorClasses.urlErrorCodes.count == 18)
    for (name, code) in HTTPErrorClasses.urlErrorCodes {
      #expect(HTTPErrorClasses.isTransient(code), "\(name)")
      #expect(ErrorClassification(URLError(code)).matches(name))
      #expect(ErrorClassification(URLError(code)).matches("transient"))
    }
    for code in [URLError.Code.badURL, .cancelled, .userAuthenticationRequired, .unknown] {
      #expect(!HTTPErrorClasses.isTransient(code))
    }
  }
}
