import RetryPolicy
import Testing

@Suite("Schedule")
struct ScheduleTests {
  @Test("an exponential rule with factor 1.5 waits 1, 1.5, 2.25, 3.375 and 5.0625 seconds")
  func exponentialWorkedExample() {
    let rule = RetryRule(
      behavior: .exponential(maxCount: 5, initial: .seconds(1), multiplier: 1.5),
      jitter: .proportional(fraction: 0.1))
    let schedule = rule.schedule()
    #expect(
      schedule.entries.map(\.delay) == [1, 1.5, 2.25, 3.375, 5.0625].map { Duration.seconds($0) })
    #expect(schedule.entries.first?.minimum == .milliseconds(900))
    #expect(schedule.entries.first?.maximum == .milliseconds(1100))
    #expect(!schedule.isTruncated)
  }

  @Test("a thousand retries growing tenfold saturate instead of trapping")
  func saturation() {
    let rule = RetryRule(
      behavior: .exponential(maxCount: 1000, initial: .seconds(1), multiplier: 10))
    let schedule = rule.schedule(limit: 1000)
    #expect(schedule.entries.last?.delay == Duration.saturatedDelay)
    #expect(schedule.worstCaseTotal == Duration.saturatedDelay)
  }

  @Test("a rule honoring retry-after may wait anything up to its cap before each retry")
  func retryAfterWithCap() throws {
    let policy = try compile(policy: "retry 30 backoff 1s max 10s honoring retry-after")
    let schedule = policy.rules[0].schedule(limit: 3)
    #expect(schedule.entries.map(\.delay) == [1, 2, 4].map { Duration.seconds($0) })
    #expect(schedule.entries.map(\.minimum) == [.zero, .zero, .zero])
    #expect(schedule.entries.map(\.maximum) == [.seconds(10), .seconds(10), .seconds(10)])
    #expect(
      schedule.entries.map(\.worstCaseElapsed) == [.seconds(10), .seconds(20), .seconds(30)])
    #expect(schedule.worstCaseTotal == .seconds(300))
    #expect(schedule.last?.retry == 30)
    #expect(schedule.last?.delay == .seconds(10))
    #expect(schedule.last?.worstCaseElapsed == .seconds(300))
  }

  @Test("a rule honoring retry-after without max has no upper bound and no total")
  func retryAfterWithoutCap() throws {
    let policy = try compile(policy: "retry 3 backoff 1s jitter full honoring retry-after")
    let schedule = policy.rules[0].schedule()
    #expect(schedule.entries.count == 3)
    #expect(schedule.entries.allSatisfy { $0.minimum == .zero && $0.maximum == nil })
    #expect(schedule.entries.allSatisfy { $0.worstCaseElapsed == nil })
    #expect(schedule.worstCaseTotal == nil)
    #expect(schedule.last?.maximum == nil)
    // The computed delay alone is still bounded by jitter.
    #expect(policy.rules[0].delayBounds(beforeRetry: 2) == .zero ... .seconds(2))
  }

  @Test("retry forever honoring retry-after under a cap has rows that add up and no total")
  func retryAfterForever() throws {
    let policy = try compile(policy: "retry forever max 2s honoring retry-after within 1m")
    let schedule = policy.rules[0].schedule(limit: 4)
    #expect(schedule.entries.compactMap(\.worstCaseElapsed) == [2, 4, 6, 8].map(Duration.seconds))
    #expect(schedule.isTruncated)
    #expect(schedule.worstCaseTotal == nil)
    #expect(schedule.last == nil)
  }

  @Test("the last row of a long schedule is the rule's last retry, with the total as elapsed")
  func lastRow() {
    let rule = RetryRule(
      behavior: .linear(maxCount: 40, initial: .milliseconds(100), increment: .milliseconds(50)),
      jitter: .equal)
    let schedule = rule.schedule(limit: 20)
    #expect(schedule.entries.count == 20)
    #expect(schedule.last?.retry == 40)
    #expect(schedule.last?.delay == .milliseconds(2050))
    #expect(schedule.last?.minimum == .milliseconds(1025))
    #expect(schedule.last?.worstCaseElapsed == schedule.worstCaseTotal)
    #expect(schedule.worstCaseTotal == .seconds(43))
    #expect(RetryRule(behavior: .immediate(maxCount: 0)).schedule().last == nil)
  }
}
