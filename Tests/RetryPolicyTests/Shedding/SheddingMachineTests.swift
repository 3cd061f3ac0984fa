import Testing

@testable import RetryPolicy

private let millisecond: Int64 = 1_000_000
private let second: Int64 = 1_000_000_000

@Suite("Runtime: concurrency limit state machine")
struct ConcurrencyLimitStateMachineTests {
  @Test("attempts past the limit are refused at once without a queue")
  func refusesPastLimit() {
    var machine = ConcurrencyLimitStateMachine(limit: 2, queue: 0)
    do {
      let value = machine.acquire()
      #expect(value == .admitted)
    }
    do {
      let value = machine.acquire()
      #expect(value == .admitted)
    }
    do {
      let value = machine.acquire()
      #expect(value == .refused)
    }
    #expect(machine.inFlight == 2)
    do {
      let value = machine.release()
      #expect(value == nil)
    }
    do {
      let value = machine.acquire()
      #expect(value == .admitted)
    }
  }

  @Test("waiters take freed slots first come, first served, and the line is bounded")
  func firstComeFirstServed() {
    var machine = ConcurrencyLimitStateMachine(limit: 1, queue: 2)
    do {
      let value = machine.acquire()
      #expect(value == .admitted)
    }
    guard case .queued(let first) = machine.acquire(), case .queued(let second) = machine.acquire()
    else {
      Issue.record("expected two waiters")
      return
    }
    do {
      let value = machine.acquire()
      #expect(value == .refused)
    }
    #expect(machine.waiting == 2)
    do {
      let value = machine.release()
      #expect(value == first)
    }
    #expect(machine.inFlight == 1)
    do {
      let value = machine.release()
      #expect(value == second)
    }
    do {
      let value = machine.release()
      #expect(value == nil)
    }
    #expect(machine.inFlight == 0)
    #expect(machine.waiting == 0)
  }

  @Test("a waiter that leaves is skipped, and a ticket holding its slot cannot leave")
  func leaving() {
    var machine = ConcurrencyLimitStateMachine(limit: 1, queue: 3)
    _ = machine.acquire()
    guard case .queued(let a) = machine.acquire(), case .queued(let b) = machine.acquire(),
      case .queued(let c) = machine.acquire()
    else {
      Issue.record("expected three waiters")
      return
    }
    do {
      let value = machine.leave(b)
      #expect(value)
    }
    do {
      let value = machine.leave(b)
      #expect(!value)
    }
    #expect(machine.waiting == 2)
    do {
      let value = machine.release()
      #expect(value == a)
    }
    do {
      let value = machine.leave(a)
      #expect(!value)
    }
    do {
      let value = machine.release()
      #expect(value == c)
    }
    do {
      let value = machine.release()
      #expect(value == nil)
    }
  }

  @Test("a newcomer never overtakes a waiter")
  func noOvertaking() {
    var machine = ConcurrencyLimitStateMachine(limit: 1, queue: 1)
    _ = machine.acquire()
    guard case .queued(let waiter) = machine.acquire() else {
      Issue.record("expected a waiter")
      return
    }
    do {
      let value = machine.release()
      #expect(value == waiter)
    }
    do {
      let value = machine.acquire()
      #expect(value == .queued(ticket: waiter + 1))
    }
  }

  @Test("raising the limit admits waiters; lowering it takes effect as attempts end")
  func changingTheLimit() {
    var machine = ConcurrencyLimitStateMachine(limit: 1, queue: 5)
    _ = machine.acquire()
    var tickets: [UInt64] = []
    for _ in 0..<3 {
      if case .queued(let ticket) = machine.acquire() { tickets.append(ticket) }
    }
    do {
      let value = machine.setLimit(3)
      #expect(value == Array(tickets.prefix(2)))
    }
    #expect(machine.inFlight == 3)
    do {
      let value = machine.setLimit(1)
      #expect(value.isEmpty)
    }
    do {
      let value = machine.release()
      #expect(value == nil)
    }
    do {
      let value = machine.release()
      #expect(value == nil)
    }
    do {
      let value = machine.release()
      #expect(value == tickets[2])
    }
    #expect(machine.inFlight == 1)
  }
}

@Suite("Runtime: adaptive limit controller")
struct AdaptiveLimitControllerTests {
  /// A service of `capacity` parallel slots, each attempt `base` long: with `inFlight`
  /// attempts, an attempt takes about base × max(1, inFlight / capacity).
  private func latency(inFlight: Int, capacity: Int, base: Int64) -> Int64 {
    base * Int64(max(inFlight, capacity)) / Int64(capacity)
  }

  /// Drives the controller as a closed loop with as many attempts in flight as it allows,
  /// on virtual time; returns the limits it took.
  private func drive(
    _ controller: inout AdaptiveLimitController, capacity: Int, base: Int64, rounds: Int,
    start: Int64 = 0
  ) -> (limits: [Int], now: Int64) {
    var now = start
    var limits: [Int] = []
    for _ in 0..<rounds {
      let inFlight = controller.limit
      let took = latency(inFlight: inFlight, capacity: capacity, base: base)
      // `inFlight` attempts start together and end together.
      for _ in 0..<inFlight {
        if let changed = controller.record(start: now, end: now + took, inFlight: inFlight) {
          limits.append(changed)
        }
      }
      now += took
    }
    return (limits, now)
  }

  @Test("the limit starts at min(20, max) within min … max")
  func initialLimit() {
    #expect(AdaptiveLimitController(minimum: 1, maximum: 200).limit == 20)
    #expect(AdaptiveLimitController(minimum: 1, maximum: 8).limit == 8)
    #expect(AdaptiveLimitController(minimum: 30, maximum: 200).limit == 30)
  }

  @Test("after the first window it calibrates at 3 attempts and measures the baseline")
  func calibrates() {
    var controller = AdaptiveLimitController(minimum: 1, maximum: 200)
    var now: Int64 = 0
    // The first window: 20 attempts of 50 ms each, over 100 ms.
    for index in 0..<20 {
      _ = controller.record(start: now, end: now + 50 * millisecond, inFlight: 20)
      if index == 19 { break }
      now += 5 * millisecond
    }
    #expect(controller.isCalibrating)
    #expect(controller.limit == 3)
    // The calibration began when the window closed, at the 20th attempt's end.
    now += 50 * millisecond
    // An attempt started before the calibration does not count.
    _ = controller.record(start: 0, end: now + millisecond, inFlight: 3)
    for _ in 0..<19 {
      _ = controller.record(start: now, end: now + 40 * millisecond, inFlight: 3)
    }
    #expect(controller.isCalibrating)
    do {
      let value = controller.record(start: now, end: now + 40 * millisecond, inFlight: 3)
      #expect(value == 20)
    }
    #expect(controller.baseline == 40 * millisecond)
  }

  @Test("against a service of capacity 16, the limit settles near 1.1 × 16 + √limit")
  func settlesNearCapacity() {
    var controller = AdaptiveLimitController(minimum: 1, maximum: 200)
    let (limits, _) = drive(&controller, capacity: 16, base: 40 * millisecond, rounds: 400)
    let settled = controller.limit
    #expect((16...26).contains(settled), "limits \(limits.suffix(20))")
    #expect(controller.baseline == 40 * millisecond)
  }

  @Test("when the service slows down, the limit shrinks, never below min")
  func shrinksUnderOverload() {
    var controller = AdaptiveLimitController(minimum: 4, maximum: 200)
    var (_, now) = drive(&controller, capacity: 32, base: 20 * millisecond, rounds: 300)
    let before = controller.limit
    #expect(before >= 32)
    // The service loses three quarters of its capacity.
    (_, now) = drive(&controller, capacity: 8, base: 20 * millisecond, rounds: 200, start: now)
    #expect(controller.limit < before)
    #expect((4...14).contains(controller.limit))
  }

  @Test("an unused limit does not grow past twice the attempts in flight")
  func unusedLimitDoesNotClimb() {
    var controller = AdaptiveLimitController(minimum: 1, maximum: 200)
    var now: Int64 = 0
    for _ in 0..<2_000 {
      _ = controller.record(start: now, end: now + 10 * millisecond, inFlight: 2)
      now += 5 * millisecond
    }
    #expect(controller.limit <= 20)
  }

  @Test("the quantile is the 90th percentile of the window")
  func quantile() {
    var samples: [Int64] = (1...100).map { Int64($0) }.shuffled()
    do {
      let value = samples.select(rank: 89)
      #expect(value == 90)
    }
    var same: [Int64] = Array(repeating: 7, count: 30)
    do {
      let value = same.select(rank: 26)
      #expect(value == 7)
    }
    var two: [Int64] = [5, 1]
    do {
      let value = two.select(rank: 0)
      #expect(value == 1)
    }
  }
}

@Suite("Runtime: throttle window")
struct ThrottleWindowTests {
  @Test("a healthy service is never throttled")
  func healthy() {
    var window = ThrottleWindow(window: .seconds(120))
    for step in 0..<1_000 {
      let now = Int64(step) * millisecond
      do {
        let value = window.request(now: now, factor: 2, uniform: 0)
        #expect(value)
      }
      window.accept(now: now)
    }
    #expect(window.refusalProbability(now: 999 * millisecond, factor: 2) == 0)
  }

  @Test("the probability is max(0, (requests − K × accepts) / (requests + 1))")
  func formula() {
    var window = ThrottleWindow(window: .seconds(120))
    for _ in 0..<100 { _ = window.request(now: 0, factor: 2, uniform: 0.99) }
    for _ in 0..<10 { window.accept(now: 0) }
    #expect(window.counts(now: 0) == (requests: 100, accepts: 10))
    let expected = (100.0 - 2 * 10) / 101
    #expect(abs(window.refusalProbability(now: 0, factor: 2) - expected) < 1e-12)
    // The random draw decides: below the probability is refused.
    do {
      let value = window.request(now: 0, factor: 2, uniform: expected - 0.01)
      #expect(!value)
    }
    do {
      let value = window.request(now: 0, factor: 2, uniform: expected + 0.01)
      #expect(value)
    }
  }

  @Test("refused requests count as requests")
  func refusedCount() {
    var window = ThrottleWindow(window: .seconds(10))
    for _ in 0..<50 { _ = window.request(now: 0, factor: 1, uniform: 0) }
    #expect(window.counts(now: 0).requests == 50)
  }

  @Test("counts leave the window after 'over'")
  func sliding() {
    var window = ThrottleWindow(window: .seconds(20))
    for _ in 0..<40 { _ = window.request(now: 0, factor: 2, uniform: 0.99) }
    #expect(window.refusalProbability(now: 19 * second, factor: 2) > 0.9)
    #expect(window.counts(now: 20 * second) == (requests: 0, accepts: 0))
    #expect(window.refusalProbability(now: 20 * second, factor: 2) == 0)
  }

  @Test("with a seeded source, about one request in K reaches a service that accepts none")
  func seededShare() {
    var window = ThrottleWindow(window: .seconds(120))
    var random = SplitMix(seed: 7)
    var admitted = 0
    for step in 0..<10_000 {
      let uniform = Double(random.next() >> 11) / Double(1 << 53)
      if window.request(now: Int64(step) * millisecond, factor: 2, uniform: uniform) {
        admitted += 1
      }
    }
    // No accepts at all: p → requests / (requests + 1); only the first few get through.
    #expect(admitted < 50)
  }
}

@Suite("Runtime: rate limit state machine")
struct RateLimitStateMachineTests {
  @Test("a full bucket lets 'burst' attempts start at once, then one per interval")
  func burstThenRate() {
    var machine = RateLimitStateMachine(policy: RatePolicy(count: 10, per: .seconds(1), burst: 3))
    #expect(machine.tokens(now: 0) == 3)
    do {
      let value = machine.reserve(now: 0)
      #expect(value == .now)
    }
    do {
      let value = machine.reserve(now: 0)
      #expect(value == .now)
    }
    do {
      let value = machine.reserve(now: 0)
      #expect(value == .now)
    }
    do {
      let value = machine.reserve(now: 0)
      #expect(value == .after(100 * millisecond))
    }
    do {
      let value = machine.reserve(now: 0)
      #expect(value == .after(200 * millisecond))
    }
    #expect(machine.tokens(now: 0) == 0)
  }

  @Test("tokens refill over time, up to 'burst'")
  func refill() {
    var machine = RateLimitStateMachine(policy: RatePolicy(count: 2, per: .seconds(1)))
    do {
      let value = machine.reserve(now: 0)
      #expect(value == .now)
    }
    do {
      let value = machine.reserve(now: 0)
      #expect(value == .now)
    }
    #expect(machine.tokens(now: 499 * millisecond) == 0)
    #expect(machine.tokens(now: 500 * millisecond) == 1)
    #expect(machine.tokens(now: 10 * second) == 2)
  }

  @Test("a wait past the deadline is refused and reserves nothing")
  func refusedPastDeadline() {
    var machine = RateLimitStateMachine(policy: RatePolicy(count: 1, per: .seconds(60)))
    do {
      let value = machine.reserve(now: 0)
      #expect(value == .now)
    }
    do {
      let value = machine.reserve(now: 0, maxWait: 10 * second)
      #expect(value == .refused(wait: 60 * second))
    }
    do {
      let value = machine.reserve(now: 0)
      #expect(value == .after(60 * second))
    }
  }

  @Test("a cancelled wait gives its token back")
  func cancel() {
    var machine = RateLimitStateMachine(policy: RatePolicy(count: 1, per: .seconds(1)))
    do {
      let value = machine.reserve(now: 0)
      #expect(value == .now)
    }
    do {
      let value = machine.reserve(now: 0)
      #expect(value == .after(second))
    }
    machine.cancel(now: 0)
    do {
      let value = machine.reserve(now: 0)
      #expect(value == .after(second))
    }
  }

  @Test("'rate N/m' spaces attempts by a minute over N")
  func perMinute() {
    var machine = RateLimitStateMachine(policy: RatePolicy(count: 30, per: .seconds(60), burst: 1))
    do {
      let value = machine.reserve(now: 0)
      #expect(value == .now)
    }
    do {
      let value = machine.reserve(now: 0)
      #expect(value == .after(2 * second))
    }
    #expect(RatePolicy(count: 30, per: .seconds(60)).perSecond == 0.5)
  }
}

/// A small seeded generator for the tests of this file.
private struct SplitMix: RandomNumberGenerator {
  var state: UInt64
  init(seed: UInt64) { state = seed }
  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}
