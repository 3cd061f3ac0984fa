import RetryPolicy
import RetryPolicyTesting
import Testing

@Suite("Runtime: test support")
struct RuntimeTestingSupportTests {
  @Test("a manual clock wakes a sleeper only when advanced to its deadline, earliest first")
  func manualClockOrder() async throws {
    let manualClock = ManualClock()
    let late = Task { try await manualClock.sleep(for: .seconds(3)) }
    let early = Task { try await manualClock.sleep(for: .seconds(1)) }
    await manualClock.waitForSleepers(count: 2)
    #expect(manualClock.nextDeadline == ManualClock.Instant(offset: .seconds(1)))
    manualClock.advance(by: .milliseconds(999))
    #expect(manualClock.sleeperCount == 2)
    manualClock.advance(by: .milliseconds(1))
    try await early.value
    #expect(manualClock.sleeperCount == 1)
    #expect(manualClock.advanceToNextDeadline())
    try await late.value
    #expect(manualClock.now.offset == .seconds(3))
    #expect(!manualClock.advanceToNextDeadline())
  }

  @Test("a manual clock's sleeper throws CancellationError at once when cancelled")
  func manualClockCancellation() async throws {
    let manualClock = ManualClock()
    let sleeper = Task { try await manualClock.sleep(for: .seconds(3600)) }
    await manualClock.waitForSleepers()
    sleeper.cancel()
    await #expect(throws: CancellationError.self) { try await sleeper.value }
    #expect(manualClock.sleeperCount == 0)
  }

  @Test("a deadline that is not in the future returns at once; time never goes back")
  func manualClockPast() async throws {
    let manualClock = ManualClock()
    manualClock.advance(by: .seconds(5))
    try await manualClock.sleep(until: ManualClock.Instant(offset: .seconds(2)))
    manualClock.advance(to: ManualClock.Instant(offset: .seconds(1)))
    manualClock.advance(by: .seconds(-1))
    #expect(manualClock.now.offset == .seconds(5))
  }

  @Test("virtual instants saturate instead of overflowing")
  func instantSaturates() {
    let far = ManualClock.Instant(offset: .seconds(Int64.max))
    #expect(far.advanced(by: .seconds(Int64.max)) == far.advanced(by: .seconds(1)))
    #expect(ManualClock.Instant(offset: .zero).duration(to: far) > .seconds(1_000_000_000))
  }

  @Test("an immediate clock's sleep returns at once and moves its time to the deadline")
  func immediateClock() async throws {
    let immediateClock = ImmediateClock()
    try await immediateClock.sleep(for: .seconds(90))
    try await immediateClock.sleep(for: .milliseconds(500))
    #expect(immediateClock.now.offset == .milliseconds(90_500))
  }

  @Test("the seeded generator is SplitMix64: the same seed gives the same numbers")
  func seededGenerator() {
    var generator = SeededRandomNumberGenerator(seed: 0)
    #expect(generator.next() == 0xE220_A839_7B1D_CDAF)
    var first = SeededRandomNumberGenerator(seed: 99)
    var second = SeededRandomNumberGenerator(seed: 99)
    #expect((0..<10).map { _ in first.next() } == (0..<10).map { _ in second.next() })
  }

  @Test("a scripted operation fails as scripted, then succeeds, and records its attempts")
  func scriptedOperation() async throws {
    let immediateClock = ImmediateClock()
    let operation = ScriptedOperation(
      failures: [APIError.notFound, APIError.unauthorized], thenReturning: "ok",
      clock: immediateClock)
    await #expect(throws: APIError.notFound) { try await operation() }
    try await immediateClock.sleep(for: .seconds(2))
    await #expect(throws: APIError.unauthorized) { try await operation() }
    #expect(try await operation() == "ok")
    #expect(try await operation() == "ok")
    #expect(operation.attemptCount == 4)
    #expect(operation.attemptTimes == [.zero, .seconds(2), .seconds(2), .seconds(2)])
    #expect(operation.waits == [.seconds(2), .zero, .zero])
  }
}
