import RetryPolicy
import RetryPolicySimulation

/// A clock whose time moves only when a test moves it, so time-based code runs without
/// real sleeping and in a known order.
///
/// Sleepers wait until ``advance(by:)`` or ``advance(to:)`` moves ``now`` to or past their
/// deadline; they are woken in order of deadline (then of going to sleep). A cancelled
/// sleeper throws `CancellationError` at once. ``waitForSleepers(count:)`` lets a test wait,
/// without polling, until the code under test has gone to sleep.
///
///     let clock = ManualClock()
///     let run = Task { try await policy.run(in: RetryEnvironment(clock: clock)) { try await op() } }
///     await clock.waitForSleepers(count: 1)   // the first retry is waiting
///     clock.advance(by: .seconds(1))          // … and now it goes
public final class ManualClock: Clock, Sendable {
  /// A point in a virtual clock's time: the time since the clock was created.
  ///
  /// The same type as `ImmediateClock.Instant`, so that both clocks read one kind of time.
  public typealias Instant = ImmediateClock.Instant

  private struct Sleeper {
    var id: UInt64
    var deadline: Instant
    var continuation: CheckedContinuation<Void, any Error>
  }

  private struct Waiter {
    var id: UInt64
    var count: Int
    var continuation: CheckedContinuation<Void, Never>
  }

  private struct State {
    var now = Instant(offset: .zero)
    var nextID: UInt64 = 0
    var sleepers: [Sleeper] = []
    var waiters: [Waiter] = []
    var cancelled: Set<UInt64> = []

    mutating func makeID() -> UInt64 {
      nextID &+= 1
      return nextID
    }

    /// Removes and returns the waiters satisfied by the current number of sleepers.
    mutating func satisfiedWaiters() -> [Waiter] {
      let count = sleepers.count
      let ready = waiters.filter { $0.count <= count }
      waiters.removeAll { $0.count <= count }
      return ready
    }
  }

  private let state = Locked(State())

  /// Creates a clock at offset zero.
  public init() {}

  /// The current instant.
  public var now: Instant {
    state.withLock { $0.now }
  }

  /// The clock's resolution: none, it is virtual.
  public var minimumResolution: Duration { .zero }

  /// The number of tasks sleeping on the clock.
  public var sleeperCount: Int {
    state.withLock { $0.sleepers.count }
  }

  /// The earliest deadline of a sleeping task, if any.
  public var nextDeadline: Instant? {
    state.withLock { $0.sleepers.map(\.deadline).min() }
  }

  /// Suspends until `now` reaches `deadline`.
  ///
  /// Throws `CancellationError` at once when the task is cancelled. Returns at once when the
  /// deadline is not in the future.
  public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
    try Task.checkCancellation()
    let id = state.withLock { $0.makeID() }
    try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation {
        (continuation: CheckedContinuation<Void, any Error>) in
        let (isReady, waiters): (Result<Void, any Error>?, [Waiter]) = state.withLock { state in
          if state.cancelled.remove(id) != nil { return (.failure(CancellationError()), []) }
          if deadline <= state.now { return (.success(()), []) }
          state.sleepers.append(Sleeper(id: id, deadline: deadline, continuation: continuation))
          return (nil, state.satisfiedWaiters())
        }
        if let isReady { continuation.resume(with: isReady) }
        for waiter in waiters { waiter.continuation.resume() }
      }
    } onCancel: {
      let sleeper: Sleeper? = state.withLock { state in
        guard let index = state.sleepers.firstIndex(where: { $0.id == id }) else {
          state.cancelled.insert(id)
          return nil
        }
        return state.sleepers.remove(at: index)
      }
      sleeper?.continuation.resume(throwing: CancellationError())
    }
    // A cancellation that came after the sleeper woke leaves a marker; drop it.
    state.withLock { _ = $0.cancelled.remove(id) }
  }

  /// Moves the time forward by `duration`, waking the sleepers whose deadline has come.
  ///
  /// A negative duration does nothing.
  public func advance(by duration: Duration) {
    guard duration > .zero else { return }
    advance(to: now.advanced(by: duration))
  }

  /// Moves the time forward to `instant`, waking the sleepers whose deadline has come.
  ///
  /// The sleepers are woken in order of deadline, then of going to sleep. An instant in the
  /// past does nothing.
  public func advance(to instant: Instant) {
    let woken: [Sleeper] = state.withLock { state in
      guard instant > state.now else { return [] }
      state.now = instant
      let due = state.sleepers.filter { $0.deadline <= instant }
      state.sleepers.removeAll { $0.deadline <= instant }
      return due.sorted { ($0.deadline, $0.id) < ($1.deadline, $1.id) }
    }
    for sleeper in woken { sleeper.continuation.resume() }
  }

  /// Moves the time to the earliest sleeper's deadline and wakes the sleepers due then;
  /// returns false, doing nothing, when no task sleeps.
  @discardableResult
  public func advanceToNextDeadline() -> Bool {
    guard let deadline = nextDeadline else { return false }
    advance(to: deadline)
    return true
  }

  /// Suspends until at least `count` tasks sleep on the clock (or the waiting task is
  /// cancelled).
  public func waitForSleepers(count: Int = 1) async {
    let id = state.withLock { $0.makeID() }
    await withTaskCancellationHandler {
      await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        let isReady = state.withLock { state in
          if state.cancelled.remove(id) != nil || state.sleepers.count >= count { return true }
          state.waiters.append(Waiter(id: id, count: count, continuation: continuation))
          return false
        }
        if isReady { continuation.resume() }
      }
    } onCancel: {
      let waiter: Waiter? = state.withLock { state in
        guard let index = state.waiters.firstIndex(where: { $0.id == id }) else {
          state.cancelled.insert(id)
          return nil
        }
        return state.waiters.remove(at: index)
      }
      waiter?.continuation.resume()
    }
    state.withLock { _ = $0.cancelled.remove(id) }
  }
}
