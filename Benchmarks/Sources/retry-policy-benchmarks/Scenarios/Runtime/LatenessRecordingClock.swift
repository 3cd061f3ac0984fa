import Synchronization

/// The lateness of every wait in a run: how long after its deadline each sleep returned.
final class LatenessLog: Sendable {
  private struct Storage {
    var values: [Int64]
    var count = 0
  }

  private let storage: Mutex<Storage>

  /// Creates a log for up to `capacity` waits; its memory is touched now, so that it does
  /// not count in the peak memory of the measured run.
  init(capacity: Int) {
    storage = Mutex(Storage(values: [Int64](repeating: 0, count: capacity)))
  }

  /// Records one wait's lateness; waits past the capacity are dropped.
  func record(_ lateness: Duration) {
    let nanoseconds = Int64(lateness.nanoseconds)
    storage.withLock { storage in
      guard storage.count < storage.values.count else { return }
      storage.values[storage.count] = nanoseconds
      storage.count += 1
    }
  }

  /// The recorded latenesses, in nanoseconds, sorted.
  func sortedNanoseconds() -> [Double] {
    storage.withLock { storage in
      storage.values.prefix(storage.count).map(Double.init).sorted()
    }
  }
}

/// A clock that sleeps on `ContinuousClock` and records how late each sleep returns:
/// the actual wake time minus the requested deadline.
struct LatenessRecordingClock: Clock {
  typealias Instant = ContinuousClock.Instant

  let base = ContinuousClock()
  let log: LatenessLog

  var now: Instant { base.now }

  var minimumResolution: Duration { base.minimumResolution }

  func sleep(until deadline: Instant, tolerance: Duration?) async throws {
    try await base.sleep(until: deadline, tolerance: tolerance)
    log.record(deadline.duration(to: base.now))
  }
}
