import Synchronization

// The atomic steps of a limiter's counts, which touch nothing but the words they are given:
// taking a slot of `limit N` or of `limit adaptive`, and the stride of the adaptive limit's
// timing.
extension ConcurrencyLimiter {
  /// Whether the attempt that found `before` in the count, under `control`, is timed.
  @inlinable
  static func isTimed(_ before: Int, _ control: Int) -> Bool {
    // The stride's mask is at most 63: the high bits' sign does not reach it.
    (before >> 32) & (control >> 32) == 0
  }

  /// The end of ``acquireAdaptive(_:)`` for an attempt whose addition to `counted` found
  /// every slot taken: gives it back, and takes a slot freed in between; returns whether it
  /// did.
  @usableFromInline
  static func retakeAdaptive(_ counted: UnsafeMutablePointer<Atomic<Int>>, limit: Int) -> Bool {
    counted.pointee.wrappingSubtract(Self.adaptiveAsk, ordering: .relaxed)
    var current = counted.pointee.load(ordering: .relaxed)
    while current & Self.lowBits < limit {
      let (exchanged, original) = counted.pointee.weakCompareExchange(
        expected: current, desired: current &+ Self.adaptiveAsk, successOrdering: .acquiring,
        failureOrdering: .relaxed)
      if exchanged { return true }
      current = original
    }
    return false
  }

  /// Takes a slot of a counted limit of `limit` whose attempts in flight `count` counts;
  /// returns whether it did.
  ///
  /// One atomic addition admits an attempt that finds a slot free. One that finds none gives
  /// its addition back, then asks again with a compare-and-exchange, which is refused only
  /// when the count it reads has every slot taken: a slot freed in between is taken.
  @inlinable
  static func takeCounted(_ count: UnsafeMutablePointer<Atomic<Int>>, limit: Int) -> Bool {
    if count.pointee.wrappingAdd(1, ordering: .acquiring).oldValue < limit { return true }
    return retakeCounted(count, limit: limit)
  }

  /// The end of ``takeCounted(_:limit:)`` for an attempt whose addition found every slot
  /// taken.
  @usableFromInline
  static func retakeCounted(_ count: UnsafeMutablePointer<Atomic<Int>>, limit: Int) -> Bool {
    count.pointee.wrappingSubtract(1, ordering: .relaxed)
    var current = count.pointee.load(ordering: .relaxed)
    while current < limit {
      let (exchanged, original) = count.pointee.weakCompareExchange(
        expected: current, desired: current &+ 1, successOrdering: .acquiring,
        failureOrdering: .relaxed)
      if exchanged { return true }
      current = original
    }
    return false
  }

  /// The mask of the timing stride for `asked` attempts over `elapsed` nanoseconds: one in
  /// the largest power of two that still times ``timedPerWindow`` of them each 100 ms, at
  /// most one in ``maximumTimingStride``.
  static func timingMask(asked: Int, overNanoseconds elapsed: Int64) -> Int {
    guard elapsed > 0 else { return 0 }
    let perWindow =
      Double(asked) * Double(AdaptiveLimitController.minimumWindow) / Double(elapsed)
    var stride = 1
    while stride < maximumTimingStride, Double(stride * 2 * timedPerWindow) <= perWindow {
      stride *= 2
    }
    return stride - 1
  }
}
