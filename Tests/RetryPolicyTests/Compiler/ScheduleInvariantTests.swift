import RetryPolicyTesting
import Testing

@testable import RetryPolicy

/// Makes random rules of every shape that the compiler accepts, extremes included.
private struct RuleGenerator {
  var random: SeededRandomNumberGenerator

  /// A duration from zero to the longest a clause accepts, most often a few seconds.
  mutating func duration(allowsZero: Bool) -> Duration {
    switch Int.random(in: 0..<10, using: &random) {
    case 0 where allowsZero: return .zero
    case 0, 1: return .milliseconds(Int64.random(in: 1...1000, using: &random))
    case 2: return PolicyLimits.longestDuration
    case 3: return .seconds(Int64.random(in: 1...36_000_000, using: &random))
    case 4: return .nanoseconds(Int64.random(in: 1...1000, using: &random))
    default: return .milliseconds(Int64.random(in: 1...120_000, using: &random))
    }
  }

  mutating func count() -> Int? {
    switch Int.random(in: 0..<20, using: &random) {
    case 0, 1: return nil
    case 2: return PolicyLimits.largestCount
    case 3: return Int.random(in: 0...PolicyLimits.largestCount, using: &random)
    default: return Int.random(in: 0...30, using: &random)
    }
  }

  mutating func multiplier() -> Double {
    switch Int.random(in: 0..<8, using: &random) {
    case 0: return 1
    case 1: return Double(PolicyLimits.largestFactor)
    case 2: return 1.0.nextUp
    case 3: return Double.random(in: 1...Double(PolicyLimits.largestFactor), using: &random)
    default: return Double.random(in: 1...4, using: &random)
    }
  }

  mutating func behavior() -> RepeatBehavior {
    let count = count()
    switch Int.random(in: 0..<5, using: &random) {
    case 0: return .immediate(maxCount: count)
    case 1: return .delayed(maxCount: count, delay: duration(allowsZero: true))
    case 2:
      return .exponential(
        maxCount: count, initial: duration(allowsZero: false), multiplier: multiplier())
    case 3:
      return .linear(
        maxCount: count, initial: duration(allowsZero: false), increment: duration(allowsZero: true)
      )
    default:
      let length = Int.random(in: 1...6, using: &random)
      return .customTimerDelayed(
        maxCount: count, delays: (0..<length).map { _ in duration(allowsZero: true) })
    }
  }

  mutating func jitter() -> Jitter? {
    switch Int.random(in: 0..<6, using: &random) {
    case 0: return .full
    case 1: return .equal
    case 2: return .decorrelated
    case 3:
      let percent = [1.0, 100, Double.random(in: 0.001...100, using: &random)].randomElement(
        using: &random)
      return .proportional(fraction: (percent ?? 10) / 100)
    default: return nil
    }
  }

  mutating func rule() -> RetryRule {
    let behavior = behavior()
    var jitter = jitter()
    if case .immediate = behavior { jitter = nil }  // `jitter-without-delay`
    let cap = Bool.random(using: &random) ? duration(allowsZero: false) : nil
    return RetryRule(behavior: behavior, jitter: jitter, maxDelay: cap)
  }
}

@Suite("Schedule invariants")
struct ScheduleInvariantTests {
  static let ruleCount = 3000

  /// The retries to look at: the first few, the last, and some far past any count.
  static func retries(of rule: RetryRule) -> [Int] {
    let count = rule.behavior.maxCount ?? 10_000
    var retries = Array(stride(from: 1, through: Swift.min(count, 40), by: 1))
    if count > 40 { retries += [count - 1, count] }
    retries += [10_000, 1 << 40, Int.max]
    return retries
  }

  @Test("no delay is negative or above the cap, and drawn delays stay in their bounds")
  func bounds() {
    var generator = RuleGenerator(random: SeededRandomNumberGenerator(seed: 0x5EED))
    var draws = SeededRandomNumberGenerator(seed: 42)
    for _ in 0..<Self.ruleCount {
      let rule = generator.rule()
      let ceiling = Swift.min(rule.maxDelay ?? Duration.saturatedDelay, Duration.saturatedDelay)
      var previous: Duration?
      for retry in Self.retries(of: rule) {
        let nominal = rule.nominalDelay(beforeRetry: retry)
        let bounds = rule.delayBounds(beforeRetry: retry)
        #expect(nominal >= .zero && nominal <= ceiling, "\(rule) retry \(retry)")
        #expect(bounds.lowerBound >= .zero && bounds.upperBound <= ceiling, "\(rule) \(retry)")
        if rule.jitter != .decorrelated {
          #expect(bounds.contains(nominal), "\(rule) retry \(retry): \(nominal) \(bounds)")
        }
        let drawn = rule.delay(beforeRetry: retry, previous: previous, using: &draws)
        #expect(bounds.contains(drawn), "\(rule) retry \(retry): \(drawn) \(bounds)")
        previous = drawn
      }
    }
  }

  @Test("without jitter, delayed, exponential and linear delays never shrink")
  func nonDecreasing() {
    var generator = RuleGenerator(random: SeededRandomNumberGenerator(seed: 7))
    for _ in 0..<Self.ruleCount {
      var rule = generator.rule()
      rule.jitter = nil
      switch rule.behavior {
      case .delayed, .exponential, .linear: break
      case .immediate, .customTimerDelayed: continue
      }
      var previous = Duration.zero
      for retry in Self.retries(of: rule) {
        let delay = rule.nominalDelay(beforeRetry: retry)
        #expect(delay >= previous, "\(rule) retry \(retry)")
        previous = delay
      }
    }
  }

  @Test("a schedule has a row a retry up to its limit and a total at least each row's maximum")
  func schedules() throws {
    var generator = RuleGenerator(random: SeededRandomNumberGenerator(seed: 99))
    for _ in 0..<Self.ruleCount / 3 {
      let rule = generator.rule()
      let schedule = rule.schedule(limit: 20)
      let count = rule.behavior.maxCount
      #expect(schedule.entries.count == Swift.min(20, count ?? 20))
      #expect(
        schedule.entries.map(\.retry)
          == Array(stride(from: 1, through: schedule.entries.count, by: 1)))
      #expect(schedule.isTruncated == (count.map { $0 > 20 } ?? true))
      #expect((schedule.worstCaseTotal == nil) == (count == nil))
      for entry in schedule.entries {
        let maximum = try #require(entry.maximum, "\(rule)")
        #expect(entry.minimum <= maximum)
        if let total = schedule.worstCaseTotal { #expect(maximum <= total) }
      }
      #expect(schedule.last?.worstCaseElapsed == (count == 0 ? nil : schedule.worstCaseTotal))
      if let total = schedule.worstCaseTotal { #expect(total <= Duration.saturatedDelay) }
    }
  }

  @Test("full jitter of a saturated delay still spreads over the whole range")
  func fullJitterOfHugeDelay() {
    let rule = RetryRule(
      behavior: .exponential(maxCount: 1000, initial: .seconds(1), multiplier: 10), jitter: .full)
    var random = SeededRandomNumberGenerator(seed: 1)
    let draws = (0..<20).map { _ in rule.delay(beforeRetry: 500, previous: nil, using: &random) }
    #expect(draws.contains { $0 > .seconds(1) })
    #expect(rule.delayBounds(beforeRetry: 500) == .zero...Duration.saturatedDelay)
  }
}
