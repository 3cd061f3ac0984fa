import RetryPolicy

/// A virtual clock whose sleeps return at once, moving ``now`` to their deadline.
///
/// Code that waits on it runs as fast as it can compute while its clock reads the times it
/// would have reached: for simulations, benchmarks, and tests of the delays a run chooses.
/// It does not suit `timeout`, where the attempt and its timer race: the timer always wins.
///
///     let clock = ImmediateClock()
///     _ = try? await policy.run(in: RetryEnvironment(clock: clock)) { throw APIError.serverError }
///     print(clock.now)   // the total of the delays
public final class ImmediateClock: Clock, Sendable {
  /// A point in a virtual clock's time: the time since the clock was created.
  public struct Instant: InstantProtocol, Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The time since the clock's start.
    public var offset: Duration

    /// Creates the instant `offset` after the clock's start.
    public init(offset: Duration) {
      self.offset = offset
    }

    /// The instant `duration` later (earlier when negative), stopping at about ±36 million
    /// years instead of overflowing.
    public func advanced(by duration: Duration) -> Instant {
      Instant(offset: offset.addingClamped(duration))
    }

    /// The time from this instant to `other`.
    public func duration(to other: Instant) -> Duration {
      other.offset.subtractingClamped(offset)
    }

    /// Whether `lhs` comes before `rhs`.
    public static func < (lhs: Instant, rhs: Instant) -> Bool {
      // As `Int128` attoseconds, which inline, unlike `Duration`'s `<`.
      lhs.offset.attoseconds < rhs.offset.attoseconds
    }

    /// The offset, such as `2.5 seconds`.
    public var description: String { offset.description }
  }

  private let current = Locked(Instant(offset: .zero))

  /// Creates a clock at offset zero.
  public init() {}

  /// The current instant.
  public var now: Instant {
    current.withLock { $0 }
  }

  /// The clock's resolution: none, it is virtual.
  public var minimumResolution: Duration { .zero }

  /// Moves ``now`` to `deadline` if it is later, and returns at once; throws
  /// `CancellationError` when the task is cancelled.
  ///
  /// It runs on the caller's executor, as it never suspends.
  nonisolated(nonsending) public func sleep(
    until deadline: Instant, tolerance: Duration? = nil
  ) async throws {
    // `Task.isCancelled` rather than `Task.checkCancellation()`, which retains the task.
    if Task.isCancelled { throw CancellationError() }
    current.withLock { $0 = Swift.max($0, deadline) }
  }

  /// Moves the time forward by `duration`; a negative duration does nothing.
  public func advance(by duration: Duration) {
    guard duration > .zero else { return }
    current.withLock { $0 = $0.advanced(by: duration) }
  }
}
