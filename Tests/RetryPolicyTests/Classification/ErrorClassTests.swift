import RetryPolicy
import Testing

@Suite("Runtime: error classes")
struct RuntimeClassificationTests {
  @Test(
    "a class name matches by type name, enum case name, or built-in",
    arguments: [
      (APIError.serverError(code: 503) as any Error, "serverError", true),
      (APIError.serverError(code: 503), "APIError", true),
      (APIError.serverError(code: 503), "unauthorized", false),
      (APIError.unauthorized, "unauthorized", true),
      (StorageError.diskFull, "StorageError", true),
      (StorageError.corrupted(path: "/tmp"), "corrupted", true),
      (StorageError.diskFull, "storage failed", false),
      (ConnectionLost(), "ConnectionLost", true),
      (ConnectionLost(), "connectionLost", false),
      (Envelope(payload: 1), "Envelope", true),
      (ConnectionLost(), "any", true),
      (CancellationError(), "any", false),
      (CancellationError(), "CancellationError", true),
      (AttemptTimeoutError(timeout: .seconds(1)), "timeout", true),
      (AttemptTimeoutError(timeout: .seconds(1)), "AttemptTimeoutError", true),
      (ConnectionLost(), "timeout", false),
    ])
  func namesMatch(error: any Error, name: String, matches: Bool) {
    #expect(ErrorClassification(error).matches(name) == matches)
  }

  @Test(
    "names are compared in full, never by prefix, with the generic arguments left out",
    arguments: [
      (APIError.serverError(code: 503) as any Error, "server", false),
      (APIError.serverError(code: 503), "serverErrors", false),
      (APIError.serverError(code: 503), "API", false),
      (APIError.serverError(code: 503), "APIErrorX", false),
      (APIError.serverError(code: 503), "", false),
      (Envelope(payload: 1), "Envelope<Int>", false),
      (Envelope(payload: 1), "Env", false),
      (ConnectionLost(), "ConnectionLost\u{0}", false),
    ])
  func namesMatchInFull(error: any Error, name: String, matches: Bool) {
    #expect(ErrorClassification(error).matches(name) == matches)
  }

  @Test("a class error matches the names of its class and of every superclass")
  func subclassesMatch() {
    let error: BaseServiceError = QuotaError()
    #expect(ErrorClassification(error).matches("QuotaError"))
    #expect(ErrorClassification(error).matches("BaseServiceError"))
    #expect(!ErrorClassification(BaseServiceError()).matches("QuotaError"))
    #expect(ErrorClassification(error).caseName == nil)
  }

  @Test("a case without payload of an enum that prints itself matches by type, not by case")
  func customDescriptionHidesOnlyPayloadFreeCases() {
    #expect(!ErrorClassification(StorageError.diskFull).matches("diskFull"))
    #expect(ErrorClassification(StorageError.diskFull).matches("StorageError"))
    #expect(ErrorClassification(StorageError.corrupted(path: "/tmp")).matches("corrupted"))
  }

  @Test("no meaning of a name hides another: built-in, registered, type and case all match")
  func precedenceOfNames() {
    let refusing: [String: @Sendable (any Error) -> Bool] = [
      "timeout": { _ in false }, "serverError": { _ in false },
    ]
    // The built-in `timeout` holds even when a registered 'timeout' refuses the error.
    #expect(
      ErrorClassification(AttemptTimeoutError(timeout: .seconds(1)), predicates: refusing)
        .matches("timeout"))
    // A case named `timeout` is in the class `timeout` too.
    #expect(ErrorClassification(GatewayError.timeout).matches("timeout"))
    // A registered predicate that refuses does not hide the case name.
    #expect(
      ErrorClassification(APIError.serverError(code: 503), predicates: refusing)
        .matches("serverError"))
    // A registered predicate adds errors to a built-in name.
    let accepting: [String: @Sendable (any Error) -> Bool] = ["timeout": { $0 is ConnectionLost }]
    #expect(ErrorClassification(ConnectionLost(), predicates: accepting).matches("timeout"))
    #expect(!ErrorClassification(CancellationError(), predicates: accepting).matches("any"))
  }

  @Test("case names are right for every payload, large values and many distinct values")
  func caseNamesOfManyValues() {
    for code in 0..<5000 {
      let error = APIError.serverError(code: code)
      #expect(ErrorClassification(error).caseName == "serverError")
    }
    #expect(ErrorClassification(APIError.notFound).caseName == "notFound")
    let large = LargePayloadError.overloaded(first: 1, second: 2, third: 3)
    #expect(ErrorClassification(large).matches("overloaded"))
    #expect(ErrorClassification(LargePayloadError.empty).matches("empty"))
    #expect(ErrorClassification(Ünïcode.café).matches("café"))
    #expect(ErrorClassification(Ünïcode.café).matches("Ünïcode"))
  }

  @Test("the lazily read type and case names are the type's and the case's")
  func lazyNames() {
    #expect(ErrorClassification(Envelope(payload: 1)).typeName == "Envelope")
    #expect(ErrorClassification(APIError.serverError(code: 503)).caseName == "serverError")
    #expect(ErrorClassification(ConnectionLost()).caseName == nil)
  }

  @Test("a registered predicate adds a class, checked with the error itself")
  func registeredPredicate() {
    let predicates: [String: @Sendable (any Error) -> Bool] = [
      "transient": { error in
        if case APIError.serverError(let code) = error { code >= 500 } else { false }
      }
    ]
    #expect(
      ErrorClassification(APIError.serverError(code: 503), predicates: predicates).matches(
        "transient"))
    #expect(
      !ErrorClassification(APIError.serverError(code: 400), predicates: predicates).matches(
        "transient"))
    #expect(!ErrorClassification(APIError.notFound, predicates: predicates).matches("transient"))
  }

  @Test("a rule without 'on' takes any error but cancellation")
  func ruleWithoutOn() {
    let rule = RetryRule(behavior: .immediate(maxCount: 1))
    #expect(ErrorClassification(ConnectionLost()).isHandled(by: rule))
    #expect(!ErrorClassification(CancellationError()).isHandled(by: rule))
  }

  @Test("'except' wins over 'on'")
  func exceptWins() {
    let rule = RetryRule(
      behavior: .immediate(maxCount: 1), errorClasses: ["APIError"],
      excludedClasses: ["notFound"])
    #expect(ErrorClassification(APIError.unauthorized).isHandled(by: rule))
    #expect(!ErrorClassification(APIError.notFound).isHandled(by: rule))
  }

  @Test("registered classes reach the runtime through the environment")
  func registeredClassInRun() async throws {
    let environment = RetryEnvironment(errorClasses: [
      "transient": { ($0 as? APIError) == .serverError(code: 503) }
    ])
    let policy = policy(RetryRule(behavior: .immediate(maxCount: 2), errorClasses: ["transient"]))
    var attempts = 0
    await #expect(throws: APIError.serverError(code: 503)) {
      try await policy.run(in: environment) {
        attempts += 1
        throw APIError.serverError(code: 503)
      }
    }
    #expect(attempts == 3)
    #expect(environment.vocabulary == Vocabulary(errorClasses: nil, hooks: []))
    #expect(
      environment.vocabulary(errorClasses: ["serverError"])
        == Vocabulary(errorClasses: ["transient", "serverError"], hooks: []))
  }

  @Test("an environment's vocabulary compiles policies that name classes by type or case")
  func vocabularyOfEnvironment() throws {
    let environment = RetryEnvironment(hooks: ["refreshToken": {}])
    let policy = try compile(
      policy: "retry 1 on unauthorized after refreshToken", vocabulary: environment.vocabulary)
    #expect(policy.rules.first?.hook == "refreshToken")
    #expect(throws: PolicyCompileError.self) {
      try compile(policy: "retry 1 after refreshTokn", vocabulary: environment.vocabulary)
    }
    let closed = environment.vocabulary(errorClasses: ["unauthorized"])
    #expect(throws: PolicyCompileError.self) {
      try compile(policy: "retry 1 on unauthorised", vocabulary: closed)
    }
  }
}
