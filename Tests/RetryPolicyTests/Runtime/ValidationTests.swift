import Foundation
import RetryPolicy
import RetryPolicySimulation
import RetryPolicyTesting
import Testing

/// Values the public API can build at its extremes.
private let extremeDurations: [Duration] = [
  .zero, Duration(attoseconds: 1), .nanoseconds(1), .seconds(1), .seconds(Int64.max),
  .seconds(Int64.min), Duration(attoseconds: .max), Duration(attoseconds: .min),
  Duration(attoseconds: -1), .seconds(1_000_000_000),
]
private let extremeCounts: [Int?] = [nil, 0, 1, 5, Int.max, Int.min, -1]
private let extremeFactors: [Double] = [
  1, 1.5, 1.000_000_000_1, 0, -1, .nan, .infinity, -.infinity, .greatestFiniteMagnitude,
  .leastNonzeroMagnitude,
]

private func behaviors(count: Int?, _ a: Duration, _ b: Duration, _ factor: Double)
  -> [RepeatBehavior]
{
  [
    .immediate(maxCount: count), .delayed(maxCount: count, delay: a),
    .exponential(maxCount: count, initial: a, multiplier: factor),
    .linear(maxCount: count, initial: a, increment: b),
    .customTimerDelayed(maxCount: count, delays: [a, b]),
    .customTimerDelayed(maxCount: count, delays: []),
  ]
}

extension RepeatBehavior {
  /// Whether the behavior is `.exponential`, the one that reads a factor.
  fileprivate var isExponential: Bool {
    if case .exponential = self { return true }
    return false
  }
}

private let jitters: [Jitter?] = [
  nil, .proportional(fraction: .nan), .proportional(fraction: -.infinity),
  .proportional(fraction: 2), .full, .equal, .decorrelated,
]

@Suite("Runtime: every value the public API builds is safe to use")
struct RuntimeValidationTests {
  @Test("a NaN budget ratio neither defeats the budget nor makes a bucket per run")
  func nanBudgetRatio() async throws {
    let policy = CompiledPolicy(
      name: "nan-budget-test", rules: [RetryRule(behavior: .immediate(maxCount: 1))],
      budgetRatio: .nan)
    #expect(policy == policy)
    let attempts = Locked(0)
    for _ in 0..<200 {
      _ = try? await policy.run { () async throws -> Int in
        attempts.withLock { $0 += 1 }
        throw ConnectionLost()
      }
    }
    // 200 first attempts, and retries only from the floor: NaN deposits nothing.
    #expect(attempts.withLock { $0 } == 200 + RetryBudget.initialTokens)
  }

  @Test(
    "ratios, counts and durations out of range are clamped by the initializers, as documented")
  func initializersClamp() {
    for ratio in [Double.nan, -1, -.infinity, .infinity, 7] {
      let policy = CompiledPolicy(rules: [], budgetRatio: ratio)
      #expect(policy.budgetRatio.map { (0...1).contains($0) } == true)
    }
    #expect(CompiledPolicy(rules: [], budgetRatio: .nan).budgetRatio == 0)
    #expect(CompiledPolicy(rules: [], deadline: .seconds(-5)).deadline == .zero)
    #expect(
      CompiledPolicy(rules: [], attemptTimeout: Duration(attoseconds: .max)).attemptTimeout
        == Duration.seconds(1_000_000_000))
    #expect(HedgePolicy(count: -3, delay: .seconds(-1)) == HedgePolicy(count: 0, delay: .zero))
    #expect(RetryRule(behavior: .immediate(maxCount: 1), maxDelay: .seconds(-1)).maxDelay == .zero)
  }

  @Test("a linear schedule of Int.max retries 1 ns apart is computed at once, its total saturated")
  func hugeLinearSchedule() {
    let rule = RetryRule(
      behavior: .linear(maxCount: .max, initial: .zero, increment: .nanoseconds(1)))
    let schedule = rule.schedule(limit: 5)
    #expect(schedule.entries.map(\.delay) == [0, 1, 2, 3, 4].map { .nanoseconds($0) })
    #expect(schedule.worstCaseTotal == .seconds(1_000_000_000))
  }

  @Test("a slowly growing exponential schedule of Int.max retries is computed at once")
  func slowExponentialSchedule() {
    let rule = RetryRule(
      behavior: .exponential(
        maxCount: .max, initial: .nanoseconds(1), multiplier: 1.000_000_000_1))
    #expect(rule.schedule(limit: 3).worstCaseTotal == .seconds(1_000_000_000))
  }

  @Test("worst-case totals of long schedules match the sum of their delays")
  func closedFormTotals() {
    let linear = RetryRule(
      behavior: .linear(maxCount: 100_000, initial: .seconds(1), increment: .milliseconds(1)))
    // Σ (1 + 0.001 (n−1)) for n = 1 … 100,000 = 100,000 + 0.001 × 4,999,950,000 / 1000.
    let expected = 100_000.0 + 0.001 * (99_999.0 * 100_000.0 / 2)
    let total = linear.schedule(limit: 1).worstCaseTotal?.inSeconds ?? 0
    #expect(abs(total - expected) < 1e-3 * expected / 1000)
    let capped = RetryRule(
      behavior: .linear(maxCount: 1_000_000, initial: .zero, increment: .milliseconds(1)),
      maxDelay: .seconds(10))
    // 0, 0.001, … up to 10 s (retries 1 … 10,001), then 10 s for the remaining 989,999.
    let rising = 0.001 * (10_000.0 * 10_001.0 / 2)
    let cappedTotal = capped.schedule(limit: 1).worstCaseTotal?.inSeconds ?? 0
    #expect(abs(cappedTotal - (rising + 10 * 989_999)) < 1)
  }

  @Test("schedule, printing and explaining extreme values never trap and return promptly")
  func extremeValuesProperty() {
    // About 40,000 rules: each is checked in plain code and only the first failures are
    // reported, since three million `#expect`s made this one of the slowest tests.
    var checked = 0
    var failures: [String] = []
    for count in extremeCounts {
      for a in extremeDurations {
        for b in extremeDurations.prefix(6) {
          for factor in extremeFactors {
            // Only the exponential behavior reads the factor: the others once, with the first.
            let built = behaviors(count: count, a, b, factor)
            for behavior in factor == extremeFactors[0] ? built : built.filter(\.isExponential) {
              for jitter in jitters {
                let rule = RetryRule(behavior: behavior, jitter: jitter, maxDelay: b)
                let entries = rule.schedule(limit: 10).entries
                let isSound =
                  entries.count <= 10
                  && entries.allSatisfy { entry in
                    entry.maximum.map { entry.minimum <= $0 } == true && entry.minimum >= .zero
                  }
                if !isSound, failures.count < 5 { failures.append(String(describing: rule)) }
                checked += 1
              }
            }
          }
        }
      }
    }
    #expect(failures == [])
    for a in extremeDurations {
      let policy = CompiledPolicy(
        rules: [RetryRule(behavior: .delayed(maxCount: 10, delay: a), maxDelay: a)],
        deadline: a, attemptTimeout: a, budgetRatio: .nan, hedge: HedgePolicy(count: .max, delay: a)
      )
      #expect(!String(describing: policy).isEmpty)
      #expect(!String(reflecting: policy).isEmpty)
      #expect(!policy.text(explicitDelays: true).isEmpty)
      #expect(!policy.rules[0].schedule(limit: 10).entries.isEmpty)
    }
    #expect(checked > 10_000)
  }

  @Test("a rule whose delay is the longest Duration gives a schedule without trapping")
  func longestDurationSchedule() {
    let rule = RetryRule(behavior: .delayed(maxCount: 20, delay: Duration(attoseconds: .max)))
    let schedule = rule.schedule(limit: 10)
    #expect(schedule.entries.count == 10)
    #expect(schedule.entries.allSatisfy { $0.delay == .seconds(1_000_000_000) })
    let policy = CompiledPolicy(rules: [rule], deadline: Duration(attoseconds: .max))
    #expect(String(describing: policy).contains("within"))
  }
}
