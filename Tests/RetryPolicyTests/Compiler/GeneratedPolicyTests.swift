import Foundation
import RetryPolicy
import RetryPolicyTestSupport
import RetryPolicyTesting
import Testing

/// The package's root folder.
///
/// `Generated/RetryPolicies+Samples.swift` is compiled from every sample and the generator's
/// own fixture; `GenerateCommandTests` checks that it is up to date.
private let root = packageRoot

private func policyFiles() throws -> [URL] {
  let folders = ["Samples", "Tests/GeneratorFixtures"].map { root.appendingPathComponent($0) }
  return try folders.flatMap { folder in
    try FileManager.default.contentsOfDirectory(atPath: folder.path)
      .filter { $0.hasSuffix(".retry") }.sorted()
      .map { folder.appendingPathComponent($0) }
  }
}

/// Records what the hooks saw.
private actor HookLog {
  var entries: [String] = []
  func append(_ entry: String) { entries.append(entry) }
}

private enum FixtureError: Error {
  case unauthorized
  case serverError
}

@Suite("Generated RetryPolicies against compile(policyFile:)")
struct GeneratedPolicyTests {
  /// Every `static let` of the generated file, by name.
  static let generated: [String: CompiledPolicy] = [
    "query": RetryPolicies.query, "startup": RetryPolicies.startup,
    "migration": RetryPolicies.migration, "replicaRead": RetryPolicies.replicaRead,
    "reads": RetryPolicies.reads, "unsafeWrites": RetryPolicies.unsafeWrites,
    "idempotentWrites": RetryPolicies.idempotentWrites, "downloads": RetryPolicies.downloads,
    "healthCheck": RetryPolicies.healthCheck, "authenticated": RetryPolicies.authenticated,
    "tokenRefresh": RetryPolicies.tokenRefresh, "signIn": RetryPolicies.signIn,
    "webSession": RetryPolicies.webSession, "screenLoad": RetryPolicies.screenLoad,
    "pullToRefresh": RetryPolicies.pullToRefresh, "thumbnail": RetryPolicies.thumbnail,
    "backgroundSync": RetryPolicies.backgroundSync, "analytics": RetryPolicies.analytics,
    "handleMessage": RetryPolicies.handleMessage, "pollBroker": RetryPolicies.pollBroker,
    "acknowledge": RetryPolicies.acknowledge, "partnerCall": RetryPolicies.partnerCall,
    "deadLetter": RetryPolicies.deadLetter, "deliver": RetryPolicies.deliver,
    "testEvent": RetryPolicies.testEvent, "manualRedelivery": RetryPolicies.manualRedelivery,
    "hooked": RetryPolicies.hooked, "default": RetryPolicies.`default`,
    "fractions": RetryPolicies.fractions, "schedule": RetryPolicies.schedule,
    "linear": RetryPolicies.linear, "in": RetryPolicies.`in`,
    "hedged": RetryPolicies.hedged, "http": RetryPolicies.http,
    "lookup": RetryPolicies.lookup, "ledgerWrite": RetryPolicies.ledgerWrite,
    "quote": RetryPolicies.quote,
  ]

  @Test("each generated policy equals what compile(policyFile:) gives for the same text")
  func generatedEqualsCompiled() throws {
    var compiled: [String: CompiledPolicy] = [:]
    for file in try policyFiles() {
      let text = try String(contentsOf: file, encoding: .utf8)
      for policy in try compile(policyFile: text, sourceName: file.path).policies {
        compiled[policy.name ?? ""] = policy
      }
    }
    // A policy added to a sample and not listed above (or not generated) fails here.
    #expect(Set(compiled.keys) == Set(Self.generated.keys))
    for (name, policy) in compiled {
      #expect(Self.generated[name] == policy, "RetryPolicies.\(name)")
    }
  }

  @Test("the generated hook method runs the policy with the hooks given as closures")
  func hookedMethodPassesItsHooks() async throws {
    let log = HookLog()
    var failures: [FixtureError] = [.unauthorized, .serverError]
    let value = try await RetryPolicies.hooked(
      refreshToken: { context in await log.append("refreshToken after \(context.attempt)") },
      reconnect: { context in await log.append("reconnect after \(context.attempt)") },
      in: RetryEnvironment(clock: ImmediateClock())
    ) {
      if !failures.isEmpty { throw failures.removeFirst() }
      return 42
    }
    #expect(value == 42)
    #expect(await log.entries == ["refreshToken after 1", "reconnect after 2"])
  }

  @Test("a hook given in the environment is replaced by the one given to the method")
  func methodHookWinsOverEnvironment() async throws {
    let log = HookLog()
    var failed = false
    let environment = RetryEnvironment(
      clock: ImmediateClock(), hooks: ["reconnect": { await log.append("environment") }])
    try await RetryPolicies.hooked(
      refreshToken: { _ in await log.append("refreshToken") },
      reconnect: { _ in await log.append("method") },
      in: environment
    ) {
      if !failed {
        failed = true
        throw FixtureError.serverError
      }
    }
    #expect(await log.entries == ["method"])
  }
}
