import Foundation
import HTTPTestServer
import RetryPolicy
import RetryPolicyHTTP
import RetryPolicyTesting

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// A session that gives up on a broken test within a minute, and keeps no cookies or cache.
///
/// Generous on purpose: on a loaded 2-core machine a loopback answer can take seconds, and a
/// passing test never waits for these limits (its waits are on the manual clock).
func makeSession() -> URLSession {
  let configuration = URLSessionConfiguration.ephemeral
  configuration.timeoutIntervalForRequest = 60
  configuration.timeoutIntervalForResource = 120
  return URLSession(configuration: configuration)
}

/// Runs `body` while advancing `clock` to each wait the run starts, and returns its value
/// with the waits, in order: no test sleeps for real.
func drivingClock<T: Sendable>(
  _ clock: ManualClock, _ body: @escaping @Sendable () async throws -> T
) async throws -> (T, [Duration]) {
  let driver = Task {
    var waits: [Duration] = []
    while !Task.isCancelled {
      await clock.waitForSleepers()
      let before = clock.now
      if !Task.isCancelled, clock.advanceToNextDeadline() {
        waits.append(before.duration(to: clock.now))
      }
    }
    return waits
  }
  do {
    let value = try await body()
    driver.cancel()
    return (value, await driver.value)
  } catch {
    driver.cancel()
    _ = await driver.value
    throw error
  }
}

/// The status of a response (0 when it is not HTTP).
func status(_ response: URLResponse) -> Int {
  (response as? HTTPURLResponse)?.statusCode ?? 0
}

/// The events of runs, kept for the test to read.
final class EventLog: @unchecked Sendable {
  // Sound: `events` is read and written only while `lock` is held.
  private let lock = NSLock()
  private var events: [RetryEvent] = []

  func record(_ event: RetryEvent) { lock.withLock { events.append(event) } }

  var all: [RetryEvent] { lock.withLock { events } }

  var summary: RetrySummary? {
    all.lazy.compactMap { event -> RetrySummary? in
      if case .finished(let summary) = event { return summary }
      return nil
    }.first
  }
}
