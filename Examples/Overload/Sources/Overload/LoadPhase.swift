import Foundation
import RetryPolicy
import RetryPolicyHTTP
import Synchronization

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// One phase of the run: requests offered at a fixed rate (an open loop: a request is sent on
/// time whether or not earlier ones were answered), each under the phase's policy.
struct LoadPhase: Sendable {
  var name: String
  var policyText: String
  /// Requests a second offered.
  var rate: Double = 1
  var duration: Duration = .seconds(10)
  /// How long answers are awaited after the last request was offered; a request still
  /// unanswered then counts with its age as its latency (a lower bound), and is cancelled.
  var drain: Duration = .seconds(2)

  /// Offers the load and gathers what came of each request.
  ///
  /// `dropBacklog` is called once the phase is over: the server then answers every request
  /// still in its line at once, so that the phase's unfinished requests end.
  func run(
    session: URLSession, url: URL, environment: RetryEnvironment,
    dropBacklog: @Sendable () async -> Void
  ) async throws -> Report {
    let policy = try compile(policy: policyText)
    let clock = ContinuousClock()
    let recorder = Recorder()
    let start = clock.now
    let end = start + duration
    // Each request is a task of its own, never awaited here: cancelling a request under way
    // is not what a phase measures, and the server's line is dropped at its end instead.
    var issued = 0
    while clock.now < end {
      let due = Int((start.duration(to: clock.now) / .seconds(1)) * rate)
      while issued < due {
        let id = issued
        issued += 1
        recorder.started(id, at: start.duration(to: clock.now))
        Task {
          let outcome: Recorder.Outcome
          do {
            let (_, response) = try await session.data(from: url, policy: policy, in: environment)
            let status = (response as? HTTPURLResponse)?.statusCode ?? 0
            outcome = status == 200 ? .served : .failed
          } catch is LimitExceededError {
            outcome = .refused
          } catch {
            outcome = .failed
          }
          recorder.finished(id, outcome, at: start.duration(to: clock.now))
        }
      }
      try? await Task.sleep(for: .milliseconds(1))
    }
    let drainEnd = clock.now + drain
    while recorder.outstanding > 0, clock.now < drainEnd {
      try? await Task.sleep(for: .milliseconds(10))
    }
    recorder.close(at: start.duration(to: clock.now))
    await dropBacklog()
    // The dropped requests end at once; wait for them (at most 10 s) before the next phase.
    let settleEnd = clock.now + .seconds(10)
    while recorder.alive > 0, clock.now < settleEnd {
      try? await Task.sleep(for: .milliseconds(10))
    }
    return recorder.report(name: name, policy: policyText, duration: duration)
  }
}

/// What each request of a phase came to, kept behind a lock.
final class Recorder: Sendable {
  enum Outcome: Sendable {
    case served, refused, failed
  }

  private struct State {
    var starts: [Int: Duration] = [:]
    var served: [(start: Duration, latency: Duration, end: Duration)] = []
    var refused = 0
    var failed = 0
    var unfinished: [(start: Duration, age: Duration)] = []
    var isClosed = false
    /// Requests whose task has not returned, closed or not.
    var alive = 0
  }

  private let state = Mutex(State())

  var outstanding: Int { state.withLock { $0.starts.count } }

  var alive: Int { state.withLock { $0.alive } }

  func started(_ id: Int, at time: Duration) {
    state.withLock { state in
      state.starts[id] = time
      state.alive += 1
    }
  }

  func finished(_ id: Int, _ outcome: Outcome, at time: Duration) {
    state.withLock { state in
      state.alive -= 1
      guard !state.isClosed, let start = state.starts.removeValue(forKey: id) else { return }
      switch outcome {
      case .served: state.served.append((start, time - start, time))
      case .refused: state.refused += 1
      case .failed: state.failed += 1
      }
    }
  }

  /// Counts every request still unanswered at `time` with its age, and ignores later answers.
  func close(at time: Duration) {
    state.withLock { state in
      state.isClosed = true
      for (_, start) in state.starts { state.unfinished.append((start, time - start)) }
      state.starts.removeAll()
    }
  }

  func report(name: String, policy: String, duration: Duration) -> Report {
    state.withLock { state in
      let seconds = duration / .seconds(1)
      let inWindow = state.served.filter { $0.end <= duration }.count
      var latencies = state.served.map { ($0.start, $0.latency / .seconds(1)) }
      latencies += state.unfinished.map { ($0.start, $0.age / .seconds(1)) }
      let half = duration / 2
      let all = latencies.map(\.1)
      // By the time they were answered: a queue that only grows answers later requests later.
      let answered = state.served.filter { $0.end <= duration }
      let early = answered.filter { $0.end < half }.map { $0.latency / .seconds(1) }
      let late = answered.filter { $0.end >= half }.map { $0.latency / .seconds(1) }
      return Report(
        name: name, policy: policy, goodput: Double(inWindow) / seconds,
        p50: Statistics.quantile(all, 0.5), p99: Statistics.quantile(all, 0.99),
        p99FirstHalf: Statistics.quantile(early, 0.99),
        p99SecondHalf: Statistics.quantile(late, 0.99),
        served: state.served.count, refused: state.refused, failed: state.failed,
        unfinished: state.unfinished.count)
    }
  }
}

/// The figures of one phase; latencies in seconds, over the served requests and the
/// unfinished ones (at their age).
struct Report: Codable, Sendable {
  var name: String
  var policy: String
  /// Requests served within the phase's offered window, a second.
  var goodput: Double
  var p50: Double
  var p99: Double
  /// The p99 of the requests served in the first and in the second half of the window: with
  /// no limit, the second is higher (the latency grows without bound).
  var p99FirstHalf: Double
  var p99SecondHalf: Double
  var served: Int
  var refused: Int
  var failed: Int
  var unfinished: Int
  /// The adaptive limit's last value, for `limit adaptive`.
  var finalLimit: Int?
  /// The adaptive limit's values over the phase (one every change, at most 50 kept).
  var limitTrace: [Int]?
  /// The goodput as a share of the server's capacity.
  var goodputRatio: Double?
}

enum Statistics {
  /// The `q` quantile of `values` (nearest rank); 0 for none.
  static func quantile(_ values: [Double], _ q: Double) -> Double {
    guard !values.isEmpty else { return 0 }
    let sorted = values.sorted()
    let rank = Int((Double(sorted.count) * q).rounded(.up)) - 1
    return sorted[Swift.min(Swift.max(rank, 0), sorted.count - 1)]
  }
}
