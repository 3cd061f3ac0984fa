import Foundation
import RetryPolicy
import Testing

/// An error carrying an HTTP status, as another client's error type would.
private struct StatusError: HTTPStatusProviding, Equatable {
  var statusCode: Int
}

/// Accepts every error, under the names it is registered with.
private let acceptAll: @Sendable (any Error) -> Bool = { _ in true }

@Suite("Runtime: class names resolved once into matchers")
struct RuntimeMatcherTests {
  @Test(
    "each class text resolves to its kind",
    arguments: [
      ("any", ErrorClassMatcher.Kind.any), ("timeout", .timeout), ("503", .status(503)),
      ("100", .status(100)), ("5xx", .statusClass(500...599)), ("1xx", .statusClass(100...199)),
      ("600", .invalidStatus), ("5XX", .invalidStatus), ("5030", .invalidStatus),
      ("transient", .transient), ("timedOut", .urlError(.timedOut)),
      ("cannotFindHost", .urlError(.cannotFindHost)), ("badURL", .named),
      ("serverError", .named), ("URLError", .named), ("Any", .named), ("anyway", .named),
    ])
  func kinds(text: String, kind: ErrorClassMatcher.Kind) {
    let matcher = ErrorClassMatcher(text)
    #expect(matcher.kind == kind)
    #expect(matcher.name == text)
  }

  @Test("a status matcher compares the status it holds, whatever its text says")
  func statusByKind() {
    let matcher = ErrorClassMatcher(kind: .status(503), name: "404")
    #expect(matcher.matches(ErrorClassification(StatusError(statusCode: 503))))
    #expect(!matcher.matches(ErrorClassification(StatusError(statusCode: 404))))
    #expect(!matcher.matches(ErrorClassification(ConnectionLost())))
    let predicates = ["404": acceptAll]
    #expect(matcher.matches(ErrorClassification(ConnectionLost(), predicates: predicates)))
  }

  @Test("a status class matcher takes every status of its range and nothing else")
  func statusClassByKind() {
    let matcher = ErrorClassMatcher(kind: .statusClass(400...499), name: "5xx")
    #expect(matcher.matches(ErrorClassification(StatusError(statusCode: 429))))
    #expect(matcher.matches(ErrorClassification(StatusError(statusCode: 400))))
    #expect(!matcher.matches(ErrorClassification(StatusError(statusCode: 503))))
    #expect(!matcher.matches(ErrorClassification(URLError(.timedOut))))
  }

  @Test("an invalid status form matches only through a predicate registered under its text")
  func invalidStatus() {
    let matcher = ErrorClassMatcher("600")
    #expect(!matcher.matches(ErrorClassification(StatusError(statusCode: 600))))
    #expect(matcher.matches(ErrorClassification(ConnectionLost(), predicates: ["600": acceptAll])))
    #expect(!matcher.matches(ErrorClassification(ConnectionLost(), predicates: ["6xx": acceptAll])))
  }

  @Test("a URL error matcher compares the code it holds, then the names of the error")
  func urlErrorByKind() {
    let matcher = ErrorClassMatcher(kind: .urlError(.timedOut), name: "cannotFindHost")
    #expect(matcher.matches(ErrorClassification(URLError(.timedOut))))
    #expect(!matcher.matches(ErrorClassification(URLError(.cannotFindHost))))
    #expect(!matcher.matches(ErrorClassification(StatusError(statusCode: 503))))
    let byCase = ErrorClassMatcher(kind: .urlError(.timedOut), name: "timeout")
    #expect(byCase.matches(ErrorClassification(GatewayError.timeout)))
  }

  @Test("transient holds the retry-worthy statuses and URL errors, and a case of that name")
  func transientByKind() {
    let matcher = ErrorClassMatcher(kind: .transient, name: "serverError")
    #expect(matcher.matches(ErrorClassification(StatusError(statusCode: 503))))
    #expect(matcher.matches(ErrorClassification(URLError(.networkConnectionLost))))
    #expect(!matcher.matches(ErrorClassification(StatusError(statusCode: 501))))
    #expect(!matcher.matches(ErrorClassification(URLError(.badURL))))
    #expect(matcher.matches(ErrorClassification(APIError.serverError(code: 400))))
  }

  @Test("any takes every error but cancellation; timeout takes the attempt timeout")
  func anyAndTimeout() {
    let any = ErrorClassMatcher(kind: .any, name: "503")
    #expect(any.matches(ErrorClassification(ConnectionLost())))
    #expect(!any.matches(ErrorClassification(CancellationError())))
    #expect(
      !any.matches(ErrorClassification(CancellationError(), predicates: ["503": acceptAll])))
    let timeout = ErrorClassMatcher(kind: .timeout, name: "deadline")
    #expect(timeout.matches(ErrorClassification(AttemptTimeoutError(timeout: .seconds(1)))))
    #expect(!timeout.matches(ErrorClassification(GatewayError.timeout)))
    #expect(ErrorClassMatcher("timeout").matches(ErrorClassification(GatewayError.timeout)))
  }

  @Test("a named matcher matches a predicate, a type, a superclass or a case of its name")
  func namedByKind() {
    #expect(ErrorClassMatcher("ConnectionLost").matches(ErrorClassification(ConnectionLost())))
    #expect(ErrorClassMatcher("BaseServiceError").matches(ErrorClassification(QuotaError())))
    #expect(
      ErrorClassMatcher("unauthorized").matches(ErrorClassification(APIError.unauthorized)))
    #expect(!ErrorClassMatcher("unauthorized").matches(ErrorClassification(APIError.notFound)))
    let registered = ErrorClassification(ConnectionLost(), predicates: ["flaky": acceptAll])
    #expect(ErrorClassMatcher("flaky").matches(registered))
    #expect(!ErrorClassMatcher("flaky").matches(ErrorClassification(ConnectionLost())))
  }

  @Test("a rule resolves its classes when it is made and again when they are set")
  func ruleBuildsItsMatcherOnce() {
    var rule = RetryRule(
      behavior: .immediate(maxCount: 1), errorClasses: ["5xx", "serverError"],
      excludedClasses: ["503"])
    #expect(rule.matcher.included.map(\.kind) == [.statusClass(500...599), .named])
    #expect(rule.matcher.excluded.map(\.kind) == [.status(503)])
    #expect(!rule.matcher.isCatchAll)
    #expect(rule.errorClasses == ["5xx", "serverError"])
    rule.errorClasses = ["timedOut", "any"]
    #expect(rule.matcher.included.map(\.kind) == [.urlError(.timedOut), .any])
    #expect(rule.matcher.isCatchAll)
    rule.excludedClasses = []
    #expect(rule.matcher.excluded.isEmpty)
    #expect(RetryRule(behavior: .immediate(maxCount: 1)).matcher.isCatchAll)
  }

  @Test("a compiled block's rules carry their resolved classes")
  func compiledRulesCarryMatchers() throws {
    let file = try compile(
      policyFile: """
        policy api {
          retry 1 on unauthorized
          retry 5 on 5xx, transient except 501 backoff 1s
          retry 2
        }
        """)
    let rules = try #require(file["api"]).rules
    #expect(rules.map(\.matcher.isCatchAll) == [false, false, true])
    #expect(rules[0].matcher.included == [ErrorClassMatcher(kind: .named, name: "unauthorized")])
    #expect(rules[1].matcher.included.map(\.kind) == [.statusClass(500...599), .transient])
    #expect(rules[1].matcher.excluded.map(\.kind) == [.status(501)])
  }

  @Test("a rule with the same classes is equal whether they were given or set")
  func equalityUnchanged() {
    var set = RetryRule(behavior: .immediate(maxCount: 1))
    set.errorClasses = ["503"]
    set.excludedClasses = ["transient"]
    let given = RetryRule(
      behavior: .immediate(maxCount: 1), errorClasses: ["503"], excludedClasses: ["transient"])
    #expect(set == given)
    #expect(set.hashValue == given.hashValue)
  }
}
