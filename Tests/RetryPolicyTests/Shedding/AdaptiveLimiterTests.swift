import RetryPolicyTesting
import Synchronization
import Testing

@testable import RetryPolicy

private struct AdaptiveBoom: Error {}

/// The slots the tasks of a test hold, and the most held at once.
private final class HeldSlots: Sendable {
  let current = Atomic<Int>(0)
  let highest = Atomic<Int>(0)
}

@Suite("Runtime: the adaptive limiter's slots and timing")
struct AdaptiveLimiterTests {
  let policy = ConcurrencyLimitPolicy.adaptive(minimum: 1, maximum: 200)

  /// Takes a slot; nil when the limiter refuses it.
  func admit(_ limiter: ConcurrencyLimiter) -> ConcurrencyLimiter.Permit? {
    if case .admitted(let permit) = limiter.acquire(policy: policy) { return permit }
    return nil
  }

  @Test("slots are counted without the lock: a refusal gives its count back")
  func countsSlots() {
    let limiter = ConcurrencyLimiter(clock: ManualClock())
    let permits = (0..<20).compactMap { _ in admit(limiter) }
    #expect(permits.count == 20)
    #expect(limiter.inFlight == 20)
    #expect(limiter.acquire(policy: policy) == .refused(limit: 20))
    #expect(limiter.acquire(policy: policy) == .refused(limit: 20))
    #expect(limiter.inFlight == 20)
    limiter.release(permits[0], isMeasured: false)
    #expect(limiter.inFlight == 19)
    #expect(admit(limiter) != nil)
    #expect(limiter.inFlight == 20)
  }

  @Test("while few attempts ask, every attempt is timed from its start")
  func timesEveryAttemptWhenSlow() {
    let clock = ManualClock()
    let limiter = ConcurrencyLimiter(clock: clock)
    clock.advance(by: .milliseconds(7))
    for _ in 0..<300 {
      guard let permit = admit(limiter) else {
        Issue.record("refused")
        return
      }
      #expect(permit.start == 7_000_000)
      limiter.release(permit)
    }
  }

  @Test("past 512 attempts in 100 ms, one in a power of two is timed, at most one in 64")
  func timingStride() {
    #expect(ConcurrencyLimiter.timingMask(asked: 511, overNanoseconds: 100_000_000) == 0)
    #expect(ConcurrencyLimiter.timingMask(asked: 512, overNanoseconds: 100_000_000) == 1)
    #expect(ConcurrencyLimiter.timingMask(asked: 1022, overNanoseconds: 200_000_000) == 0)
    #expect(ConcurrencyLimiter.timingMask(asked: 4096, overNanoseconds: 100_000_000) == 15)
    #expect(ConcurrencyLimiter.timingMask(asked: 1 << 30, overNanoseconds: 100_000_000) == 63)
    #expect(ConcurrencyLimiter.timingMask(asked: 1 << 30, overNanoseconds: 0) == 0)
  }

  @Test("a fast stream of attempts is timed one in a stride")
  func stridedTiming() {
    let clock = ManualClock()
    let limiter = ConcurrencyLimiter(clock: clock)
    // 4,096 attempts of no time in the first 100 ms, then 100 ms: the stride becomes 16.
    for _ in 0..<4096 {
      if let permit = admit(limiter) { limiter.release(permit) }
    }
    clock.advance(by: .milliseconds(100))
    if let permit = admit(limiter) { limiter.release(permit) }
    var timed = 0
    for _ in 0..<1600 {
      guard let permit = admit(limiter) else { continue }
      if permit.isTimed { timed += 1 }
      limiter.release(permit, isMeasured: false)
    }
    #expect(timed == 100)
    #expect(limiter.inFlight == 0)
  }

  @Test("the limit a timed attempt changes takes effect for the next attempt at once")
  func changeTakesEffect() {
    let clock = ManualClock()
    let limiter = ConcurrencyLimiter(clock: clock)
    let permits = (0..<20).compactMap { _ in admit(limiter) }
    clock.advance(by: .milliseconds(150))
    var changes: [Int] = []
    for permit in permits {
      if let change = limiter.release(permit) { changes.append(change) }
    }
    // The first window closed: the limiter calibrates at 3, and admits 3.
    #expect(changes == [3])
    let calibrating = (0..<5).compactMap { _ in admit(limiter) }
    #expect(calibrating.count == 3)
    #expect(limiter.acquire(policy: policy) == .refused(limit: 3))
  }

  @Test("'run' takes the adaptive slot itself: it comes back however the attempt ends")
  func runTakesSlot() async throws {
    let policy = try compile(
      policyFile: "policy adaptiveRun = retry 0 limit adaptive min 1 max 1"
    ).policies[0]
    let clock = ManualClock()
    let environment = RetryEnvironment(clock: clock)
    let slot = try #require(policy.adaptiveLimitSlot(in: environment))
    let limiter = slot.limiter.takeUnretainedValue()
    #expect(try await policy.run(in: environment) { 1 } == 1)
    #expect(limiter.inFlight == 0)
    await #expect(throws: AdaptiveBoom.self) {
      try await policy.run(in: environment) { () async throws -> Int in throw AdaptiveBoom() }
    }
    #expect(limiter.inFlight == 0)
    let holder = Task {
      try await policy.run(in: environment) {
        try await clock.sleep(for: .seconds(60))
        return 2
      }
    }
    await clock.waitForSleepers(count: 1)
    #expect(limiter.inFlight == 1)
    // Full: refused at once with the limit in force, the count as it was.
    for _ in 0..<3 {
      do {
        _ = try await policy.run(in: environment) { 3 }
        Issue.record("admitted past the limit")
      } catch let error as LimitExceededError {
        #expect(error.limit == 1)
      }
    }
    #expect(limiter.inFlight == 1)
    holder.cancel()
    await #expect(throws: CancellationError.self) { try await holder.value }
    #expect(limiter.inFlight == 0)
    // A host's registry, or an observer, leaves the run to the driver.
    #expect(policy.adaptiveLimitSlot(in: RetryEnvironment(registry: RetryStateRegistry())) == nil)
  }

  @Test("tasks sharing an adaptive limiter never hold more slots than the limit")
  func concurrentSlots() async {
    let limiter = ConcurrencyLimiter(clock: ManualClock())
    let policy = policy
    let held = HeldSlots()
    await withDiscardingTaskGroup { group in
      for _ in 0..<16 {
        group.addTask {
          for _ in 0..<500 {
            guard case .admitted(let permit) = limiter.acquire(policy: policy) else { continue }
            let now = held.current.wrappingAdd(1, ordering: .relaxed).newValue
            held.highest.max(now, ordering: .relaxed)
            await Task.yield()
            held.current.wrappingSubtract(1, ordering: .relaxed)
            limiter.release(permit, isMeasured: false)
          }
        }
      }
    }
    // The clock never moves: no window closes, and the limit stays at 20.
    #expect(held.highest.load(ordering: .relaxed) <= 20)
    #expect(limiter.inFlight == 0)
    #expect(limiter.limit == 20)
  }
}
