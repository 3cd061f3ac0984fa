import Synchronization

/// A clock of its own instant type whose sleeps return at once, moving `now` to their
/// deadline, each after calling `onSleep` with its number (1, 2, …).
///
/// Its instants count whole seconds, so a run on it measures elapsed time on a clock that is
/// neither `ContinuousClock` nor a test clock of the library; `onSleep` lets a test change the
/// world between two sleeps.
public final class SteppingClock: Clock, Sendable {
  /// A point in time, in whole seconds.
  public struct Instant: InstantProtocol {
    /// The seconds since the clock's start.
    public var seconds: Int64

    /// The instant `duration` later, to the whole second.
    public func advanced(by duration: Duration) -> Instant {
      Instant(seconds: seconds &+ duration.components.seconds)
    }

    /// The whole seconds from this instant to `other`.
    public func duration(to other: Instant) -> Duration { .seconds(other.seconds &- seconds) }

    /// Whether `lhs` comes before `rhs`.
    public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.seconds < rhs.seconds }
  }

  private let state = Mutex((now: Instant(seconds: 0), sleeps: 0))
  private let onSleep: @Sendable (Int) -> Void

  /// A clock at second 0 that calls `onSleep` with the number of each sleep.
  public init(onSleep: @escaping @Sendable (Int) -> Void = { _ in }) {
    self.onSleep = onSleep
  }

  /// The current instant.
  public var now: Instant { state.withLock { $0.now } }

  /// One second.
  public var minimumResolution: Duration { .seconds(1) }

  /// Calls `onSleep`, then moves `now` to `deadline` (when it is later) and returns.
  public func sleep(until deadline: Instant, tolerance: Duration?) async throws {
    let step = state.withLock { state in
      state.sleeps += 1
      return state.sleeps
    }
    onSleep(step)
    state.withLock { $0.now = Swift.max($0.now, deadline) }
  }
}
