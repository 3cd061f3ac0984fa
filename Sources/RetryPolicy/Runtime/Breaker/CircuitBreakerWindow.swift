import Synchronization

/// The attempts and failures of a breaker's last `over`, counted without a lock: ten buckets
/// of a tenth of `over` each, never a list of calls.
///
/// Each bucket has a counter of successes and one of failures per stripe (see
/// ``circuitBreakerStripe(of:)``), so that threads on different cores count in different
/// cache lines. A counter is one 64-bit atomic: the low 32 bits of its bucket's number (the
/// time divided by the bucket's width) above a 32-bit count, which saturates. Counting
/// compares the number and starts the count afresh when it belongs to an expired bucket, so
/// nothing ever sweeps the window; reading it adds the counters whose number is one of the
/// last ten. A bucket number repeats its low 32 bits only after 2^32 buckets (13 years of
/// 100 ms buckets).
struct CircuitBreakerWindow: Sendable {
  /// The buckets of a window.
  static var bucketCount: Int { 10 }
  /// The stripes of counters: a power of two.
  static var stripeCount: Int { 8 }
  /// The counters of one stripe: the successes at 0 ..< 10, the failures at 10 ..< 20.
  // Computed constants, not stored ones: each folds into the code (a stored one is read,
  // and `% bucketCount` then divides).
  private static var stripeStride: Int { 20 }
  private static var failureOffset: Int { 10 }
  private static var countMask: UInt64 { 0xFFFF_FFFF }

  /// One counter: an atomic in an object of its own, padded to a cache line, so that
  /// counters of different stripes never share one (no unsafe pointers are needed to keep an
  /// array of atomics).
  private final class Counter: Sendable {
    let value = Atomic<UInt64>(0)
    private let padding: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (
      0, 0, 0, 0, 0, 0, 0
    )
  }

  /// What one attempt came to.
  enum Outcome {
    case success
    case failure
  }

  private let counters: [Counter]

  /// An empty window.
  init() {
    counters = (0..<(Self.stripeCount * Self.stripeStride)).map { _ in Counter() }
  }

  /// Counts one attempt's outcome in bucket `bucket` (the time over the bucket's width).
  @inline(__always)
  func record(_ outcome: Outcome, inBucket bucket: Int64) {
    let stripe = circuitBreakerStripe(of: Self.stripeCount)
    let slot = Int(bucket % Int64(Self.bucketCount))
    let offset = outcome == .success ? slot : Self.failureOffset + slot
    let counter = counters[stripe * Self.stripeStride + offset]
    let tag = UInt64(truncatingIfNeeded: UInt32(truncatingIfNeeded: bucket)) << 32
    var current = counter.value.load(ordering: .relaxed)
    while true {
      let next: UInt64
      if current & ~Self.countMask == tag {
        guard current & Self.countMask != Self.countMask else { return }
        next = current &+ 1
      } else {
        next = tag | 1
      }
      let (exchanged, original) = counter.value.compareExchange(
        expected: current, desired: next, ordering: .relaxed)
      if exchanged { return }
      current = original
    }
  }

  /// The attempts and failures counted in the ten buckets that end with bucket `bucket`.
  func totals(atBucket bucket: Int64) -> (attempts: Int, failures: Int) {
    var attempts = 0
    var failures = 0
    let oldest = Swift.max(0, bucket - Int64(Self.bucketCount - 1))
    for stripe in 0..<Self.stripeCount {
      let base = stripe * Self.stripeStride
      var number = oldest
      while number <= bucket {
        let slot = Int(number % Int64(Self.bucketCount))
        let tag = UInt64(truncatingIfNeeded: UInt32(truncatingIfNeeded: number)) << 32
        let successes = counters[base + slot].value.load(ordering: .relaxed)
        let failed = counters[base + Self.failureOffset + slot].value.load(ordering: .relaxed)
        if successes & ~Self.countMask == tag { attempts += Int(successes & Self.countMask) }
        if failed & ~Self.countMask == tag {
          let count = Int(failed & Self.countMask)
          attempts += count
          failures += count
        }
        number += 1
      }
    }
    return (attempts, failures)
  }

  /// Forgets every count.
  func clear() {
    for counter in counters {
      counter.value.store(0, ordering: .relaxed)
    }
  }
}
