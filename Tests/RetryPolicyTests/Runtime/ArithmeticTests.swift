import RetryPolicy
import RetryPolicyTesting
import Testing

/// The runtime's fast `Duration` arithmetic agrees exactly with the standard library's.
@Suite("Runtime: delay arithmetic")
struct RuntimeArithmeticTests {
  private static let second: Int128 = 1_000_000_000_000_000_000

  /// Durations at every boundary the fast paths have: zero, one attosecond, 2^63 attoseconds
  /// (the 64-bit path), 2^100 attoseconds (the estimate path), the saturation point, `10000h`.
  static let boundaries: [Duration] = {
    let attoseconds: [Int128] = [
      0, 1, 999_999_999_999_999_999, second, second + 1, 1_500_000_000_000_000_000,
      Int128(Int64.max) - 1, Int128(Int64.max), Int128(Int64.max) + 1, Int128(Int64.min),
      Int128(Int64.min) - 1, (1 << 100) - 1, 1 << 100, (1 << 100) + 1,
      36_000_000 * second, 36_000_000 * second - 1, 1_000_000_000 * second,
      1_000_000_000 * second + 1, (1 << 62) * second + 5,
    ]
    let durations = attoseconds.flatMap { [Duration(attoseconds: $0), Duration(attoseconds: -$0)] }
    return durations + [
      .milliseconds(1), .nanoseconds(1), .seconds(10_000 * 3600), .saturatedDelay,
      .seconds(Int64.max), .seconds(Int64.min),
    ]
  }()

  @Test("exact components equal the standard library's at the boundaries", arguments: boundaries)
  func componentsAtBoundaries(_ duration: Duration) {
    #expect(duration.exactComponents == duration.components)
  }

  @Test("exact components equal the standard library's over random magnitudes")
  func componentsAtRandom() {
    var random = SeededRandomNumberGenerator(seed: 42)
    for _ in 0..<20_000 {
      let bits = Int(random.next() % 110)
      let magnitude = Int128(
        truncatingIfNeeded: UInt128(random.next()) << 64 | UInt128(random.next()))
      let value = bits == 0 ? 0 : (magnitude & ((1 << bits) - 1))
      let duration = Duration(attoseconds: random.next() % 2 == 0 ? value : -value)
      #expect(duration.exactComponents == duration.components, "\(duration)")
    }
  }

  @Test("seconds of 10000h is exact, so a delay capped there stays within the cap")
  func tenThousandHours() {
    let cap = Duration.seconds(10_000 * 3600)
    #expect(cap.seconds == 36_000_000)
    let rule = RetryRule(
      behavior: .delayed(maxCount: 3, delay: cap), jitter: .proportional(fraction: 0.5),
      maxDelay: cap)
    var random = SeededRandomNumberGenerator(seed: 3)
    for retry in 1...200 {
      #expect(rule.delay(beforeRetry: retry, previous: nil, using: &random) <= cap)
    }
  }

  @Test(
    "a delay from seconds is the nanosecond-rounded duration, saturated",
    arguments: [
      (0.0, Duration.zero), (-1.0, .zero), (Double.nan, .zero), (1e-9, .nanoseconds(1)),
      (0.4e-9, .zero), (1.5, .milliseconds(1500)), (36_000_000, .seconds(36_000_000)),
      (999_999_999.5, .milliseconds(999_999_999_500)), (1e9, .saturatedDelay),
      (Double.infinity, .saturatedDelay), (123.456789012, .nanoseconds(123_456_789_012)),
    ])
  func saturatingSeconds(_ seconds: Double, _ expected: Duration) {
    #expect(Duration.saturating(seconds: seconds) == expected)
  }

  @Test("the in-place comparison and zero agree with Duration's", arguments: boundaries)
  func inPlaceComparison(_ duration: Duration) {
    #expect(duration.isPositive == (duration > .zero))
    #expect(Duration.zeroInline == .zero)
  }

  /// Sums and their clamped results, in seconds (2^50 s is the limit).
  static let sums: [(Duration, Duration, Duration)] = {
    let big: Int64 = 1 << 47
    let limit = Duration.clampLimit
    let negativeLimit = Duration.zero - limit
    var table: [(Duration, Duration, Duration)] = []
    table.append((.seconds(1), .milliseconds(500), .milliseconds(1500)))
    table.append((.seconds(big), .seconds(big), .seconds(2 * big)))
    table.append((.seconds(2 * big), .seconds(2 * big), .seconds(4 * big)))
    table.append((.seconds(4 * big), .seconds(4 * big), limit))
    table.append((.seconds(Int64.max), .seconds(Int64.max), limit))
    table.append((.zero - .seconds(4 * big), .zero - .seconds(4 * big), negativeLimit))
    table.append((.seconds(5), .zero - .seconds(7), .zero - .seconds(2)))
    return table
  }()

  @Test("clamped sums are exact inside the limit and stop at it", arguments: sums)
  func clampedSums(_ lhs: Duration, _ rhs: Duration, _ expected: Duration) {
    #expect(lhs.addingClamped(rhs) == expected)
  }

  @Test(
    "'immediately' waits zero under every jitter and draws as the rule's own delay does",
    arguments: [nil, Jitter.proportional(fraction: 0.5), .full, .equal, .decorrelated])
  func immediateDraws(_ jitter: Jitter?) {
    let rule = RetryRule(behavior: .immediate(maxCount: 3), jitter: jitter)
    var probe = SeededRandomNumberGenerator(seed: 9)
    for retry in 1...3 {
      #expect(rule.delay(beforeRetry: retry, previous: .zero, using: &probe) == .zero)
    }
    // Only proportional jitter draws (its factor) when the delay is zero.
    let drawsNothing = probe == SeededRandomNumberGenerator(seed: 9)
    if case .proportional = jitter {
      #expect(!drawsNothing)
    } else {
      #expect(drawsNothing)
    }
    var machine = RetryStateMachine(policy: CompiledPolicy(rules: [rule]))
    var random = SeededRandomNumberGenerator(seed: 9)
    for _ in 1...3 {
      machine.attemptStarted()
      let action = machine.attemptFailed(
        ErrorClassification(APIError.serverError(code: 503)), isTaskCancelled: false,
        elapsed: .zero, using: &random)
      #expect(action == .retry(rule: 0, delay: .zero))
    }
    #expect(random == probe)
  }

  @Test("clamped differences never overflow, even between the extremes of Duration")
  func clampedDifferences() {
    let limit = Duration.clampLimit
    let extremes = [Duration(attoseconds: .max), Duration(attoseconds: .min), .zero, limit]
    for lhs in extremes {
      for rhs in extremes {
        let difference = lhs.subtractingClamped(rhs)
        #expect(difference <= limit && difference >= .zero - limit)
        let sum = lhs.addingClamped(rhs)
        #expect(sum <= limit && sum >= .zero - limit)
      }
    }
    #expect(Duration(attoseconds: .max).subtractingClamped(Duration(attoseconds: .min)) == limit)
    #expect(Duration.seconds(3).subtractingClamped(.seconds(5)) == .seconds(-2))
  }
}
