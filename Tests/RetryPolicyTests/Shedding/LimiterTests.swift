import RetryPolicyTesting
import Testing

@testable import RetryPolicy

@Suite("Runtime: shedding state owned by the host")
struct SheddingLimiterTests {
  @Test("a waiter in line gets the slot an attempt gives back")
  func waiterGetsReleasedSlot() async {
    let clock = ManualClock()
    let limiter = ConcurrencyLimiter(clock: clock)
    let policy = ConcurrencyLimitPolicy.fixed(limit: 1, queue: 1)
    guard case .admitted(let holder) = limiter.acquire(policy: policy),
      case .queued(let ticket) = limiter.acquire(policy: policy)
    else {
      Issue.record("expected a holder and a waiter")
      return
    }
    #expect(limiter.acquire(policy: policy) == .refused(limit: 1))
    let waiter = Task { await limiter.wait(for: ticket, until: nil, on: clock) }
    limiter.release(holder)
    #expect(await waiter.value != nil)
    #expect(limiter.inFlight == 1)
    #expect(limiter.waiting == 0)
  }

  @Test("a waiter leaves the line when its deadline passes")
  func waiterLeavesAtDeadline() async {
    let clock = ManualClock()
    let limiter = ConcurrencyLimiter(clock: clock)
    let policy = ConcurrencyLimitPolicy.fixed(limit: 1, queue: 4)
    _ = limiter.acquire(policy: policy)
    guard case .queued(let ticket) = limiter.acquire(policy: policy) else {
      Issue.record("expected a waiter")
      return
    }
    let deadline = clock.now.advanced(by: .seconds(2))
    let waiter = Task { await limiter.wait(for: ticket, until: deadline, on: clock) }
    await clock.waitForSleepers(count: 1)
    clock.advance(by: .seconds(2))
    #expect(await waiter.value == nil)
    #expect(limiter.waiting == 0)
    #expect(limiter.inFlight == 1)
  }

  @Test("a cancelled waiter leaves the line and the next one gets the slot")
  func cancelledWaiterLeaves() async {
    let clock = ManualClock()
    let limiter = ConcurrencyLimiter(clock: clock)
    let policy = ConcurrencyLimitPolicy.fixed(limit: 1, queue: 4)
    guard case .admitted(let holder) = limiter.acquire(policy: policy),
      case .queued(let first) = limiter.acquire(policy: policy),
      case .queued(let second) = limiter.acquire(policy: policy)
    else {
      Issue.record("expected a holder and two waiters")
      return
    }
    let cancelled = Task { await limiter.wait(for: first, until: nil, on: clock) }
    cancelled.cancel()
    #expect(await cancelled.value == nil)
    let next = Task { await limiter.wait(for: second, until: nil, on: clock) }
    limiter.release(holder)
    #expect(await next.value != nil)
  }

  @Test("a slot given before the waiter began to wait is kept for it")
  func slotGivenBeforeWait() async {
    let clock = ManualClock()
    let limiter = ConcurrencyLimiter(clock: clock)
    let policy = ConcurrencyLimitPolicy.fixed(limit: 1, queue: 1)
    guard case .admitted(let holder) = limiter.acquire(policy: policy),
      case .queued(let ticket) = limiter.acquire(policy: policy)
    else {
      Issue.record("expected a holder and a waiter")
      return
    }
    limiter.release(holder)
    #expect(await limiter.wait(for: ticket, until: nil, on: clock) != nil)
  }

  @Test("an adaptive limiter starts at 20 and reports the changes of its limit")
  func adaptiveLimiter() {
    let clock = ManualClock()
    let limiter = ConcurrencyLimiter(clock: clock)
    let policy = ConcurrencyLimitPolicy.adaptive(minimum: 1, maximum: 200)
    var permits: [ConcurrencyLimiter.Permit] = []
    for _ in 0..<20 {
      if case .admitted(let permit) = limiter.acquire(policy: policy) { permits.append(permit) }
    }
    #expect(limiter.limit == 20)
    #expect(limiter.acquire(policy: policy) == .refused(limit: 20))
    clock.advance(by: .milliseconds(150))
    var changes: [Int] = []
    for permit in permits {
      if let change = limiter.release(permit) { changes.append(change) }
    }
    // The first window closed: the limiter calibrates at 3.
    #expect(changes == [3])
    #expect(limiter.limit == 3)
  }

  @Test("the throttle refuses with the SRE probability, drawn from the caller")
  func throttle() {
    let clock = ManualClock()
    let throttle = AdaptiveThrottle(clock: clock)
    let policy = ThrottlePolicy(factor: 2)
    for _ in 0..<100 { #expect(throttle.request(policy: policy, uniform: 0.999) == nil) }
    let probability = throttle.refusalProbability(for: policy)
    #expect(abs(probability - 100.0 / 101) < 1e-12)
    let refusal = throttle.request(policy: policy, uniform: 0.5)
    #expect(refusal == RetryPolicy.ThrottledError(probability: 100.0 / 101))
    for _ in 0..<60 { throttle.recordAccept() }
    #expect(throttle.refusalProbability(for: policy) == 0)
    clock.advance(by: .seconds(120))
    #expect(throttle.refusalProbability(for: policy) == 0)
  }

  @Test("the rate limiter's bucket refills on its clock")
  func rateLimiter() {
    let clock = ManualClock()
    let limiter = RateLimiter(clock: clock)
    let policy = RatePolicy(count: 5, per: .seconds(1), burst: 2)
    #expect(limiter.reserve(policy: policy, maxWait: nil) == .now)
    #expect(limiter.reserve(policy: policy, maxWait: nil) == .now)
    #expect(limiter.reserve(policy: policy, maxWait: nil) == .after(200_000_000))
    #expect(
      limiter.reserve(policy: policy, maxWait: .milliseconds(100)) == .refused(wait: 400_000_000))
    limiter.cancelReservation()
    clock.advance(by: .seconds(1))
    #expect(limiter.tokens(for: policy) == 2)
  }

  @Test("refusals are never retried and match their classes")
  func refusalClasses() {
    let errors: [(any Error, String)] = [
      (LimitExceededError(limit: 4), "limitExceeded"),
      (RetryPolicy.ThrottledError(probability: 0.5), "throttled"),
      (RateLimitedError(wait: .seconds(1)), "rateLimited"),
    ]
    let catchAll = RuleMatcher(on: [], except: [])
    for (error, name) in errors {
      let classification = ErrorClassification(error)
      #expect(classification.isShed)
      #expect(!catchAll.takes(classification))
      #expect(ErrorClassMatcher(name).matches(classification))
      #expect(!ErrorClassMatcher("circuitOpen").matches(classification))
    }
    #expect(
      !ErrorClassMatcher("throttled").matches(ErrorClassification(CircuitOpenError(remaining: nil)))
    )
  }

  @Test("the lock-free lookup of shedding state compares every stored property of a policy")
  func recentStatesCompareEveryProperty() throws {
    // `isSameValue` compares the properties by name when the rules share their storage: a
    // property added to CompiledPolicy must be added there, and to this list.
    let compared = [
      "name", "rules", "deadline", "attemptTimeout", "budgetRatio", "hedge", "breaker", "limit",
      "throttle", "rate",
    ]
    let policy = try compile(policy: "retry 2 on recentBoom limit 5")
    #expect(Mirror(reflecting: policy).children.compactMap(\.label) == compared)
    // A copy is the same value; a copy that differs in one property is not.
    var other = policy
    #expect(RecentPolicyStates<ConcurrencyLimiter>.isSameValue(policy, other))
    other.limit = .fixed(limit: 6, queue: 0)
    #expect(!RecentPolicyStates<ConcurrencyLimiter>.isSameValue(policy, other))
    other = policy
    other.name = "renamed"
    #expect(!RecentPolicyStates<ConcurrencyLimiter>.isSameValue(policy, other))
    other = policy
    other.deadline = .seconds(1)
    #expect(!RecentPolicyStates<ConcurrencyLimiter>.isSameValue(policy, other))
    // Equal rules in other storage are compared one by one.
    let again = try compile(policy: "retry 2 on recentBoom limit 5")
    #expect(RecentPolicyStates<ConcurrencyLimiter>.isSameValue(policy, again))
    let environment = RetryEnvironment()
    #expect(policy.countedLimiter(in: environment) === again.countedLimiter(in: environment))
  }
}
