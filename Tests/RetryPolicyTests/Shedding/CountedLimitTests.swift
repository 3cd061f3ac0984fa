import RetryPolicy
import RetryPolicyTesting
import Synchronization
import Testing

private struct CountedBoom: Error {}

/// The attempts of a test's operation in flight, and the most seen at once.
private final class InFlightCounter: Sendable {
  let current = Atomic<Int>(0)
  let highest = Atomic<Int>(0)
  let admitted = Atomic<Int>(0)
  let refused = Atomic<Int>(0)

  func enter() {
    let now = current.wrappingAdd(1, ordering: .relaxed).newValue
    var seen = highest.load(ordering: .relaxed)
    while now > seen {
      let (exchanged, original) = highest.weakCompareExchange(
        expected: seen, desired: now, ordering: .relaxed)
      if exchanged { break }
      seen = original
    }
  }

  func leave() {
    current.wrappingSubtract(1, ordering: .relaxed)
  }
}

@Suite("Runtime: the slots of 'limit N' without 'queue' taken by 'run' itself")
struct CountedLimitTests {
  @Test("a counted slot comes back however the first attempt ends: value, error, cancellation")
  func slotComesBackHoweverAttemptEnds() async throws {
    let policy = try compile(policyFile: "policy countedEnds = retry 0 limit 2").policies[0]
    let clock = ManualClock()
    for registry in [RetryStateRegistry.processWide, RetryStateRegistry()] {
      let environment = RetryEnvironment(clock: clock, registry: registry)
      let limiter = try #require(policy.countedLimiter(in: environment))
      #expect(try await policy.run(in: environment) { 1 } == 1)
      #expect(limiter.inFlight == 0)
      await #expect(throws: CountedBoom.self) {
        try await policy.run(in: environment) { () async throws -> Int in throw CountedBoom() }
      }
      #expect(limiter.inFlight == 0)
      let sleeper = Task {
        try await policy.run(in: environment) {
          try await clock.sleep(for: .seconds(60))
          return 2
        }
      }
      await clock.waitForSleepers(count: 1)
      #expect(limiter.inFlight == 1)
      sleeper.cancel()
      await #expect(throws: CancellationError.self) { try await sleeper.value }
      #expect(limiter.inFlight == 0)
    }
  }

  @Test("a refused first attempt throws the limit's error and leaves the count as it was")
  func refusalLeavesCount() async throws {
    let policy = try compile(policyFile: "policy countedFull = retry 3 limit 1").policies[0]
    let clock = ManualClock()
    for registry in [RetryStateRegistry.processWide, RetryStateRegistry()] {
      let environment = RetryEnvironment(clock: clock, registry: registry)
      let holder = Task {
        try await policy.run(in: environment) {
          try await clock.sleep(for: .seconds(1))
          return 0
        }
      }
      await clock.waitForSleepers(count: 1)
      let limiter = try #require(policy.countedLimiter(in: environment))
      for _ in 0..<100 {
        await #expect(throws: LimitExceededError(limit: 1)) {
          try await policy.run(in: environment) { () async throws -> Int in
            Issue.record("the operation was called")
            return 1
          }
        }
      }
      #expect(limiter.inFlight == 1)
      clock.advance(by: .seconds(1))
      #expect(try await holder.value == 0)
      #expect(limiter.inFlight == 0)
      #expect(try await policy.run(in: environment) { 2 } == 2)
    }
  }

  @Test("tasks racing for a counted limit never hold more than N slots, and every slot returns")
  func racingTasksStayWithinLimit() async throws {
    let policy = try compile(policyFile: "policy countedRace = retry 0 limit 3").policies[0]
    for registry in [RetryStateRegistry.processWide, RetryStateRegistry()] {
      let environment = RetryEnvironment(registry: registry)
      let counter = InFlightCounter()
      await withDiscardingTaskGroup { group in
        for _ in 0..<16 {
          group.addTask {
            for _ in 0..<200 {
              do {
                try await policy.run(in: environment) {
                  counter.enter()
                  await Task.yield()
                  counter.leave()
                }
                counter.admitted.wrappingAdd(1, ordering: .relaxed)
              } catch {
                #expect(error as? LimitExceededError == LimitExceededError(limit: 3))
                counter.refused.wrappingAdd(1, ordering: .relaxed)
              }
            }
          }
        }
      }
      #expect(counter.highest.load(ordering: .relaxed) <= 3)
      let admitted = counter.admitted.load(ordering: .relaxed)
      #expect(admitted + counter.refused.load(ordering: .relaxed) == 3200)
      #expect(admitted >= 3)
      #expect(policy.countedLimiter(in: environment)?.inFlight == 0)
    }
  }

  @Test("a host's registry's limiter, read without its lock, follows the registry's changes")
  func hostRegistryFollowsChanges() async throws {
    let registry = RetryStateRegistry()
    let environment = RetryEnvironment(registry: registry)
    let two = try compile(policyFile: "policy search = retry 0 limit 2").policies[0]
    let five = try compile(policyFile: "policy search = retry 0 limit 5").policies[0]
    let budgeted = try compile(policyFile: "policy search = retry 0 budget 10% limit 2")
      .policies[0]
    #expect(try await two.run(in: environment) { 1 } == 1)
    let first = try #require(registry.limiter(named: "search"))
    // Found again (without the lock, once kept), as long as the entry keeps it.
    for _ in 0..<3 { #expect(two.countedLimiter(in: environment) === first) }
    // Another clause under the name: a fresh limiter, and the old one is not served.
    #expect(try await five.run(in: environment) { 2 } == 2)
    let second = try #require(registry.limiter(named: "search"))
    #expect(second !== first)
    #expect(second.limit == 5)
    #expect(five.countedLimiter(in: environment) === second)
    #expect(two.countedLimiter(in: environment) === registry.limiter(named: "search"))
    #expect(registry.limiter(named: "search")?.limit == 2)
    let third = try #require(registry.limiter(named: "search"))
    #expect(third !== first)
    // A budget under the name takes the entry off the lookup without the lock; the limit
    // clause is unchanged, so the limiter stays.
    #expect(try await budgeted.run(in: environment) { 3 } == 3)
    #expect(registry.budget(named: "search") != nil)
    #expect(two.countedLimiter(in: environment) === third)
    // The run without a budget goes through the registry, which drops the budget, as before.
    #expect(try await two.run(in: environment) { 4 } == 4)
    #expect(registry.budget(named: "search") == nil)
    // A removed name starts afresh.
    registry.removeState(named: "search")
    let fresh = try #require(two.countedLimiter(in: environment))
    #expect(fresh !== third)
    #expect(fresh === registry.limiter(named: "search"))
    // A store's reload that changes the clause: its limiter, not the one kept before.
    _ = registry.apply([five])
    let reloaded = try #require(registry.limiter(named: "search"))
    #expect(reloaded !== fresh)
    #expect(five.countedLimiter(in: environment) === reloaded)
    #expect(two.countedLimiter(in: environment) === reloaded)
  }

  @Test("more named counted limits than the lookup keeps still each get their registry's")
  func manyNamesInHostRegistry() async throws {
    let registry = RetryStateRegistry()
    let environment = RetryEnvironment(registry: registry)
    let policies = try (0..<10).map { index in
      try compile(policyFile: "policy name\(index) = retry 0 limit \(index + 1)").policies[0]
    }
    for _ in 0..<3 {
      for (index, policy) in policies.enumerated() {
        #expect(try await policy.run(in: environment) { index } == index)
        let limiter = try #require(registry.limiter(named: "name\(index)"))
        #expect(policy.countedLimiter(in: environment) === limiter)
        #expect(limiter.limit == index + 1)
        #expect(limiter.inFlight == 0)
      }
    }
  }
}
