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
struct CircuitBreakerWindow: ~Copyable, @unchecked Sendable {
  // Sound: `counters` points to `counterCount` atomics, initialized in `init`, freed in
  // `deinit`, and only ever read and written through their atomic operations.

  /// The buckets of a window.
  static var bucketCount: Int { 10 }
  /// The stripes of counters: a power of two.
  static var stripeCount: Int { 8 }
  // Computed constants, not stored ones: each folds into the code (a stored one is read,
  // and `% bucketCount` then divides).
  /// The counters of one stripe: the successes at 0 ..< 10, the failures at 10 ..< 20, then
  /// padding, so that a stripe is three cache lines of its own.
  private static var stripeStride: Int { 24 }
  private static var failureOffset: Int { 10 }
  private static var countMask: UInt64 { 0xFFFF_FFFF }
  private static var counterCount: Int { stripeCount * stripeStride }

  /// The counters, one block aligned to a cache line: reaching one is pointer arithmetic,
  /// with no reference to retain and release around its atomic operation.
  private let counters: UnsafeMutablePointer<Atomic<UInt64>>

  /// What one attempt came to.
  enum Outcome {
    case success
    case failure
  }

  /// An empty window.
  init() {
    let raw = UnsafeMutableRawPointer.allocate(
      byteCount: Self.counterCount * MemoryLayout<Atomic<UInt64>>.stride, alignment: 64)
    counters = raw.bindMemory(to: Atomic<UInt64>.self, capacity: Self.counterCount)
    for index in 0..<Self.counterCount { (counters + index).initialize(to: Atomic(0)) }
  }

  deinit {
    counters.deinitialize(count: Self.counterCount)
    UnsafeMutableRawPointer(counters).deallocate()
  }

  /// Counts one attempt's outcome in bucket `bucket` (the time over the bucket's width).
  @inline(__always)
  func record(_ outcome: Outcome, inBucket bucket: Int64) {
    let stripe = circuitBreakerStripe(of: Self.stripeCount)
    let slot = Int(bucket % Int64(Self.bucketCount))
    let offset = outcome == .success ? slot : Self.failureOffset + slot
    let counter = counters + (stripe * Self.stripeStride + offset)
    let tag = UInt64(truncatingIfNeeded: UInt32(truncatingIfNeeded: bucket)) << 32
    var current = counter.pointee.load(ordering: .relaxed)
    while true {
      let next: UInt64
      if current & ~Self.countMask == tag {
        guard current & Self.countMask != Self.countMask else { return }
        next = current &+ 1
      } else {
        next = tag | 1
      }
      let (exchanged, original) = counter.pointee.compareExchange(
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
        let successes = counters[base + slot].load(ordering: .relaxed)
        let failed = counters[base + Self.failureOffset + slot].load(ordering: .relaxed)
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
    for index in 0..<Self.counterCount {
      counters[index].store(0, ordering: .relaxed)
    }
  }
}
