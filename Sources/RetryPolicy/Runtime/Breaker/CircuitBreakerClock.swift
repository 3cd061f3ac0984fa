/// The time a ``CircuitBreaker`` measures its window and its open time on, as nanoseconds
/// since the breaker was made (never negative, never overflowing).
///
/// The system source reads the monotonic clock coarsely (Linux `CLOCK_MONOTONIC_COARSE`,
/// Darwin `CLOCK_MONOTONIC_RAW_APPROX`: a few milliseconds of resolution, a few nanoseconds a
/// read), so that a closed breaker can date every success: its buckets are a tenth of
/// `over`, at least 100 ms. Elsewhere it reads `ContinuousClock`. A host's clock (a test's
/// manual clock) is read through a closure.
struct CircuitBreakerClock: Sendable {
  private enum Source: Sendable {
    case system(origin: Int64)
    case clock(@Sendable () -> Duration)
  }

  private let source: Source

  /// The system's monotonic clock, from now.
  init() {
    source = .system(origin: Self.systemNanoseconds())
  }

  /// `clock`, from now.
  init<C: Clock<Duration>>(clock: C) {
    let origin = clock.now
    source = .clock { origin.duration(to: clock.now) }
  }

  /// The time `read` returns, which counts from the breaker's start (a simulation's virtual
  /// time); it must never go back.
  init(reading read: @escaping @Sendable () -> Duration) {
    source = .clock(read)
  }

  /// The nanoseconds since the breaker was made.
  @inline(__always)
  func now() -> Int64 {
    switch source {
    case .system(let origin):
      return Self.systemNanoseconds(since: origin)
    case .clock(let read):
      return Self.nanoseconds(read())
    }
  }

  /// The system clock's origin, when this reads the system's monotonic clock.
  var systemOrigin: Int64? {
    switch source {
    case .system(let origin): origin
    case .clock: nil
    }
  }

  /// The nanoseconds since `origin` on the system's monotonic clock, as ``now()`` reads them.
  @inline(__always)
  static func systemNanoseconds(since origin: Int64) -> Int64 {
    let elapsed = systemNanoseconds() &- origin
    return elapsed > 0 ? elapsed : 0
  }

  /// `duration` in whole nanoseconds, clamped to 0 … `Int64.max`.
  static func nanoseconds(_ duration: Duration) -> Int64 {
    let nanoseconds = duration.attoseconds / 1_000_000_000
    guard nanoseconds > 0 else { return 0 }
    return Int64(exactly: nanoseconds) ?? .max
  }

  /// `nanoseconds` as a duration.
  static func duration(_ nanoseconds: Int64) -> Duration {
    .nanoseconds(nanoseconds)
  }

  @inline(__always)
  private static func systemNanoseconds() -> Int64 {
    // The platform's coarse clock (PolicyFileReader.swift, the library's platform file).
    platformCoarseMonotonicNanoseconds()
      ?? nanoseconds(ContinuousClock.zeroOffset.duration(to: ContinuousClock.now))
  }
}

extension ContinuousClock {
  /// A fixed instant of the process, from which the fallback source counts.
  fileprivate static let zeroOffset = ContinuousClock.now
}

/// The stripe of a breaker's counters the current thread writes to, one of `count` (a power
/// of two): threads on different cores then rarely write the same cache line.
@inline(__always)
func circuitBreakerStripe(of count: Int) -> Int {
  let thread = platformThreadIdentity()
  // Fibonacci hashing: the thread handle's high bits decide.
  let mixed = thread &* 0x9E37_79B9_7F4A_7C15
  return Int(truncatingIfNeeded: mixed >> 32) & (count - 1)
}
