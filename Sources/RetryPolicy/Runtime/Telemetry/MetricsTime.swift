/// The time that ``RetryMetrics`` dates the runs of an environment on the continuous clock
/// with: the system's coarse monotonic clock, in nanoseconds.
///
/// Timing a run takes two readings of a clock, and on Linux a reading of `ContinuousClock`
/// costs 20–40 ns, more than a whole successful run. The coarse clock (Linux
/// `CLOCK_MONOTONIC_COARSE`, Darwin `CLOCK_MONOTONIC_RAW_APPROX`, as the circuit breaker
/// reads it) costs a few nanoseconds; it advances once per kernel tick (1–4 ms on Linux,
/// `clock_getres` says which). A duration read on it is therefore off by less than one tick
/// either way, and exact on average: a run of 1 ms on a 4 ms tick reads 4 ms one time in
/// four and 0 the other three, so the histograms' sums and their buckets from the tick up
/// are right, and the buckets below the tick share their runs between 0 and one tick. Runs
/// on any other clock (a test's manual clock, a simulation's virtual time) are timed exactly
/// on it.
@usableFromInline
package enum MetricsTime {
  /// Now, in nanoseconds since an arbitrary fixed point.
  @usableFromInline
  package static func now() -> UInt64 {
    if let coarse = platformCoarseMonotonicNanoseconds() {
      return UInt64(clamping: coarse)
    }
    return DurationBuckets.nanoseconds(ContinuousClock.zeroOffsetForMetrics.duration(to: .now))
  }

  /// The nanoseconds from `start` to now (zero if the clock seems to go back).
  @usableFromInline
  package static func since(_ start: UInt64) -> UInt64 {
    let now = now()
    return now > start ? now &- start : 0
  }
}

extension ContinuousClock {
  /// A fixed instant of the process, from which ``MetricsTime``'s fallback counts.
  fileprivate static let zeroOffsetForMetrics = ContinuousClock.now
}
