import Foundation
import RetryPolicy
import RetryPolicyTesting
import Testing

/// The failure of the tests' always-failing operation: class `serverError`.
private enum Outage: Error { case serverError }

/// Runs `policy` once in `environment` against an operation that always fails.
private func failOnce(_ policy: CompiledPolicy, in environment: RetryEnvironment) async {
  _ = try? await policy.run(in: environment) { () async throws -> Int in throw Outage.serverError }
}

@Suite("Shared state: RetryStateRegistry")
struct RetryStateRegistryTests {
  private let opening = "retry 1 on serverError immediately breaker 50% min 2 for 5s"

  @Test("runs of a name in an environment with the registry share its breaker and budget")
  func sharedByName() async throws {
    let registry = RetryStateRegistry()
    let clock = ManualClock()
    let environment = RetryEnvironment(clock: clock, registry: registry)
    var policy = try compile(policy: opening + " budget 10%")
    policy.name = "payments"
    #expect(registry.breaker(named: "payments") == nil)
    await failOnce(policy, in: environment)
    let breaker = try #require(registry.breaker(named: "payments"))
    #expect(breaker.state == .open)
    let budget = try #require(registry.budget(named: "payments"))
    // A run refused by the open circuit calls nothing.
    var calls = 0
    _ = try? await policy.run(in: environment) { () async throws -> Int in
      calls += 1
      return 1
    }
    #expect(calls == 0)
    // The breaker reads the environment's clock: 5 s later on it, a probe closes it.
    clock.advance(by: .seconds(5))
    #expect(try await policy.run(in: environment) { 7 } == 7)
    #expect(breaker.state == .closed)
    #expect(registry.budget(named: "payments") === budget)
    #expect(registry.names == ["payments"])
  }

  @Test("a run of the name with a changed 'breaker' clause gets a fresh breaker; the budget stays")
  func changedClauseStartsFresh() async throws {
    let registry = RetryStateRegistry()
    let environment = RetryEnvironment(clock: ManualClock(), registry: registry)
    var policy = try compile(policy: opening + " budget 10%")
    policy.name = "payments"
    await failOnce(policy, in: environment)
    let open = try #require(registry.breaker(named: "payments"))
    let budget = try #require(registry.budget(named: "payments"))
    var changed = try compile(
      policy: opening.replacingOccurrences(of: "50%", with: "60%") + " budget 10%")
    changed.name = "payments"
    #expect(try await changed.run(in: environment) { 1 } == 1)
    let fresh = try #require(registry.breaker(named: "payments"))
    #expect(fresh !== open)
    #expect(fresh.state == .closed)
    #expect(registry.budget(named: "payments") === budget)
    registry.removeState(named: "payments")
    #expect(registry.breaker(named: "payments") == nil)
  }

  @Test("the process-wide registry keeps one breaker per policy value and clock")
  func processWideByValueAndClock() async throws {
    let policy = try compile(
      policy: "retry 1 on serverError immediately breaker 50% over 17s min 2 for 5s")
    let manual = ManualClock()
    await failOnce(policy, in: RetryEnvironment(clock: manual))
    // Same value, same clock: the circuit is open.
    var calls = 0
    _ = try? await policy.run(in: RetryEnvironment(clock: manual)) { () async throws -> Int in
      calls += 1
      return 1
    }
    #expect(calls == 0)
    // Another clock never shares the circuit; nor does an equal policy of another name.
    #expect(try await policy.run(in: RetryEnvironment(clock: ManualClock())) { 2 } == 2)
    var named = policy
    named.name = "other"
    #expect(try await named.run(in: RetryEnvironment(clock: manual)) { 3 } == 3)
  }

  @Test("a breaker bound by the environment wins over the registry's")
  func boundWins() async throws {
    let registry = RetryStateRegistry()
    let breaker = CircuitBreaker()
    var environment = RetryEnvironment(clock: ManualClock(), registry: registry)
    environment.breakers = ["payments": breaker]
    var policy = try compile(policy: opening)
    policy.name = "payments"
    await failOnce(policy, in: environment)
    #expect(breaker.state == .open)
    #expect(registry.breaker(named: "payments") == nil)
  }

  @Test("a name's rate limiter and throttle are found by name, and follow a changed clause")
  func rateLimiterAndThrottleByName() async throws {
    let registry = RetryStateRegistry()
    let environment = RetryEnvironment(clock: ManualClock(), registry: registry)
    var policy = try compile(
      policy: "retry 1 on serverError immediately rate 5/s burst 3 throttle x2")
    policy.name = "search"
    #expect(registry.rateLimiter(named: "search") == nil)
    #expect(registry.throttle(named: "search") == nil)
    #expect(try await policy.run(in: environment) { 1 } == 1)
    let limiter = try #require(registry.rateLimiter(named: "search"))
    let clause = try #require(policy.rate)
    // One token of the three taken; the manual clock has not moved, so none came back.
    #expect(limiter.tokens(for: clause) == 2)
    let throttle = try #require(registry.throttle(named: "search"))
    #expect(throttle.refusalProbability(for: try #require(policy.throttle)) == 0)
    #expect(registry.rateLimiter(named: "other") == nil)
    // The same clause keeps the limiter and its tokens; another rate starts afresh.
    #expect(try await policy.run(in: environment) { 2 } == 2)
    #expect(registry.rateLimiter(named: "search") === limiter)
    #expect(limiter.tokens(for: clause) == 1)
    var changed = try compile(
      policy: "retry 1 on serverError immediately rate 9/s burst 3 throttle x2")
    changed.name = "search"
    #expect(try await changed.run(in: environment) { 3 } == 3)
    let fresh = try #require(registry.rateLimiter(named: "search"))
    #expect(fresh !== limiter)
    #expect(fresh.tokens(for: try #require(changed.rate)) == 2)
    #expect(registry.throttle(named: "search") === throttle)
  }
}

@Suite("Shared state: PolicyStore reloads and handles")
struct PolicyStoreStateTests {
  @Test(
    "a reload that changes 'breaker' starts it afresh and keeps the budget; one that changes 'limit' keeps the open circuit"
  )
  func reloadKeepsUnchangedClauses() async throws {
    let folder = try StoreFolder()
    let path = try folder.write(
      "p.retry",
      "policy a = retry 1 on serverError immediately breaker 50% min 2 for 5s budget 10% limit 4\n")
    let store = try PolicyStore(path: path)
    let clock = ManualClock()
    let environment = RetryEnvironment(clock: clock)
    _ = try? await store.run("a", in: environment) { () async throws -> Int in
      throw Outage.serverError
    }
    let open = try #require(store.breaker(named: "a"))
    #expect(open.state == .open)
    let budget = try #require(store.budget(named: "a"))
    let tokens = budget.tokens
    let limiter = try #require(store.registry.limiter(named: "a"))
    // `limit` changes: the circuit stays open, its refusal still counts on the manual clock.
    try folder.write(
      "p.retry",
      "policy a = retry 1 on serverError immediately breaker 50% min 2 for 5s budget 10% limit 8\n")
    #expect(store.reload().changedPolicies == ["a"])
    #expect(store.breaker(named: "a") === open)
    #expect(open.state == .open)
    #expect(store.registry.limiter(named: "a") !== limiter)
    #expect(store.budget(named: "a") === budget)
    #expect(store.budget(named: "a")?.tokens == tokens)
    var calls = 0
    _ = try? await store.run("a", in: environment) { () async throws -> Int in
      calls += 1
      return 1
    }
    #expect(calls == 0)
    // `breaker` changes: a fresh closed breaker; the budget and its tokens stay.
    try folder.write(
      "p.retry",
      "policy a = retry 1 on serverError immediately breaker 60% min 2 for 5s budget 10% limit 8\n")
    #expect(store.reload().isApplied)
    let fresh = try #require(store.breaker(named: "a"))
    #expect(fresh !== open)
    #expect(fresh.state == .closed)
    #expect(store.budget(named: "a") === budget)
    #expect(try await store.run("a", in: environment) { 5 } == 5)
    // Removed, the name's state is forgotten; brought back, it starts afresh.
    try folder.write("p.retry", "policy b = retry 1\n")
    #expect(store.reload().isApplied)
    #expect(store.registry.names.isEmpty)
    try folder.write(
      "p.retry",
      "policy a = retry 1 on serverError immediately breaker 60% min 2 for 5s budget 10% limit 8\n")
    #expect(store.reload().isApplied)
    #expect(store.breaker(named: "a") !== fresh)
  }

  @Test("a handle follows reloads, says when its name was removed, and follows it back")
  func handleFollowsReloads() async throws {
    let folder = try StoreFolder()
    let path = try folder.write("p.retry", "policy a = retry 3\npolicy b = retry 1\n")
    let store = try PolicyStore(path: path)
    let handle = try store.handle("a")
    #expect(handle.name == "a")
    #expect(handle.policy.rules.first?.behavior.maxCount == 3)
    #expect(try await handle.run { 1 } == 1)
    try folder.write("p.retry", "policy a = retry 5\npolicy b = retry 1\n")
    #expect(store.reload().isApplied)
    #expect(handle.policy.rules.first?.behavior.maxCount == 5)
    #expect(handle.policy == store["a"])
    try folder.write("p.retry", "policy b = retry 1\n")
    #expect(store.reload().isApplied)
    #expect(handle.isRemoved)
    #expect(handle.policy.rules.first?.behavior.maxCount == 5)
    await #expect(throws: PolicyStoreError.self) { try await handle.run { 1 } }
    try folder.write("p.retry", "policy a = retry 7\npolicy b = retry 1\n")
    #expect(store.reload().isApplied)
    #expect(!handle.isRemoved)
    #expect(handle.policy.rules.first?.behavior.maxCount == 7)
    #expect(throws: PolicyStoreError.unknownPolicy("c", suggestion: "a")) {
      try store.handle("c")
    }
  }

  @Test("a handle's runs share the store's state with the store's runs")
  func handleSharesState() async throws {
    let folder = try StoreFolder()
    let path = try folder.write(
      "p.retry", "policy a = retry 1 on serverError immediately breaker 50% min 2 for 5s\n")
    let store = try PolicyStore(path: path)
    let handle = try store.handle("a")
    let environment = RetryEnvironment(clock: ManualClock())
    _ = try? await handle.run(in: environment) { () async throws -> Int in
      throw Outage.serverError
    }
    #expect(store.breaker(named: "a")?.state == .open)
    await #expect(throws: CircuitOpenError.self) {
      try await store.run("a", in: environment) { 1 }
    }
  }
}
