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
}
