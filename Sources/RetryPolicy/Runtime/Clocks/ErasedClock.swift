/// A clock of any type as one concrete type, read through two functions made once for an
/// environment.
///
/// A run's driver on the environment's clock is specialized for it, where a driver opened
/// for a clock type it does not know (a test's or a simulation's clock) runs unspecialized:
/// every instant a task allocation, every step generic. Only reading the clock and sleeping
/// on it then go through the wrapped clock's own type.
///
/// Its instants are the times since the clock was wrapped, on the wrapped clock: waiting
/// until one waits until the wrapped clock's instant that far from the same start.
@usableFromInline
package struct ErasedClock: Clock {
  /// A time since the wrapped clock's start instant.
  @usableFromInline
  package struct Instant: InstantProtocol {
    /// The time since the start instant.
    @usableFromInline package var offset: Duration

    @inlinable
    package init(offset: Duration) {
      self.offset = offset
    }

    /// The instant `duration` later, stopping at about ±36 million years, as the test clocks.
    @usableFromInline
    package func advanced(by duration: Duration) -> Instant {
      Instant(offset: offset.addingClamped(duration))
    }

    @usableFromInline
    package func duration(to other: Instant) -> Duration {
      other.offset.subtractingClamped(offset)
    }

    @inlinable
    package static func < (left: Instant, right: Instant) -> Bool {
      left.offset.attoseconds < right.offset.attoseconds
    }
  }

  /// The time since the start instant.
  private let read: @Sendable () -> Duration
  /// Sleeps until the instant that far from the start, with that tolerance.
  private let sleeper: @Sendable (Duration, Duration?) async throws -> Void
  @usableFromInline let resolution: Duration

  /// Wraps `clock`, its start instant being now.
  init(_ clock: any Clock<Duration>) {
    self = Self.wrapping(clock)
  }

  private init(
    read: @escaping @Sendable () -> Duration,
    sleeper: @escaping @Sendable (Duration, Duration?) async throws -> Void,
    resolution: Duration
  ) {
    self.read = read
    self.sleeper = sleeper
    self.resolution = resolution
  }

  /// Wraps `clock` as its own type.
  private static func wrapping<C: Clock<Duration>>(_ clock: C) -> ErasedClock {
    let start = clock.now
    return ErasedClock(
      read: { start.duration(to: clock.now) },
      sleeper: { offset, tolerance in
        try await clock.sleep(until: start.advanced(by: offset), tolerance: tolerance)
      },
      resolution: clock.minimumResolution)
  }

  @usableFromInline
  package var now: Instant {
    Instant(offset: read())
  }

  @inlinable
  package var minimumResolution: Duration {
    resolution
  }

  @usableFromInline
  package func sleep(until deadline: Instant, tolerance: Duration?) async throws {
    try await sleeper(deadline.offset, tolerance)
  }
}

extension RetryEnvironment {
  /// The environment's clock as an ``ErasedClock``, or nil when it is the continuous or the
  /// suspending clock, which runs use as themselves.
  @inlinable
  package var erasedClock: ErasedClock? {
    storage.erasedClock
  }
}
