import RetryPolicy

/// A fleet of clients calling one backend, for the storm simulator (`retry-policy storm`).
///
/// Times are whole nanoseconds of virtual time from the start of the simulation.
package struct StormScenario: Sendable, Hashable {
  /// The number of clients; each has its own retry budget.
  package var clients: Int = 1000
  /// The requests each client sends per second, as a Poisson process.
  package var rate: Double = 1
  /// The attempts the backend serves per second.
  package var capacity: Double = 1500
  /// When the outage starts, in nanoseconds; nil for no outage.
  package var outageStart: Int64?
  /// How long the outage lasts, in nanoseconds.
  package var outageLength: Int64 = 0
  /// The fraction of attempts that fail during the outage (1: all of them).
  package var failureRate: Double = 1
  /// How much slower the backend is during the outage: its latency times this, its capacity
  /// divided by it.
  package var slowdown: Double = 1
  /// How long clients send requests, in nanoseconds; retries may go on after it.
  package var duration: Int64 = 120_000_000_000
  /// The mean service time of an attempt, in nanoseconds.
  package var latency: Int64 = 50_000_000
  /// How long a client waits for an attempt before it fails with a timeout (`timeout` in the
  /// policy overrides it), in nanoseconds.
  package var timeout: Int64 = 1_000_000_000
  /// The seed of every random draw: arrivals, latencies, failures and jitter.
  package var seed: UInt64 = 1
  /// The most attempts the simulation makes before it stops with an error.
  package var attemptLimit = 100_000_000
  /// The most requests a scenario may send, those after the duration that keep the load up
  /// included: what the simulator serves in bounded time (about a minute at 100,000,000).
  package static let requestLimit = 100_000_000.0

  /// Creates the default scenario: 1,000 clients at 1 request per second, no outage.
  package init() {}

  /// When the outage ends, in nanoseconds; nil for no outage.
  package var outageEnd: Int64? {
    outageStart.map { $0 &+ outageLength }
  }

  /// When requests stop arriving: they go on, uncounted, for a quarter of the duration (at
  /// most 30 s) after it, so that the last seconds meet the load they would meet.
  package var arrivalEnd: Int64 {
    duration &+ min(duration / 4, 30_000_000_000)
  }

  /// The requests the scenario sends, about: clients × rate × time of arrivals.
  package var expectedRequests: Double {
    Double(clients) * rate * Double(arrivalEnd) / 1e9
  }

  /// Checks, before any work, that the simulator can run the scenario and measure what it
  /// reports: at most ``requestLimit`` requests, and an outage that ends within the window.
  package func check() throws(StormSimulationError) {
    guard expectedRequests <= Self.requestLimit else {
      throw .tooManyRequests(expected: expectedRequests, limit: Self.requestLimit)
    }
    if let start = outageStart, let end = outageEnd, end >= duration {
      throw .outageOutsideWindow(start: start, end: end, duration: duration)
    }
  }

  /// Whether time `t` falls in the outage.
  @inline(__always)
  func isInOutage(_ time: Int64) -> Bool {
    guard let start = outageStart else { return false }
    return time >= start && time - start < outageLength
  }
}

/// What one policy did in a storm scenario.
package struct StormResult: Sendable, Hashable {
  /// One second of the simulation.
  package struct Second: Sendable, Hashable {
    /// Attempts the backend saw that second.
    package var attempts = 0
    /// Requests that arrived that second.
    package var offered = 0
    /// Of those, the requests that finally succeeded.
    package var succeeded = 0
    /// Attempts the clients' circuit breakers and shedding stages refused that second.
    package var refused = 0

    /// The part of that second's requests that succeeded (1 when none arrived).
    package var successRatio: Double {
      offered == 0 ? 1 : Double(succeeded) / Double(offered)
    }
  }

  /// The policy.
  package var policy: CompiledPolicy
  /// How reports name the policy: its text as given, by default its canonical text.
  package var name: String
  /// Creates the empty result of `policy`.
  package init(policy: CompiledPolicy) {
    self.policy = policy
    self.name = policy.description
  }

  /// Requests the clients sent.
  package var offered = 0
  /// Attempts the backend saw, first attempts and retries.
  package var attempts = 0
  /// Requests that finally succeeded.
  package var succeeded = 0
  /// Requests that arrived during the outage.
  package var outageOffered = 0
  /// Attempts that started during the outage.
  package var outageAttempts = 0
  /// Attempts a client's circuit breaker or shedding stage refused (policies with
  /// `breaker`, `limit`, `throttle` or `rate`): the operation was not called and the backend
  /// saw nothing.
  package var refused = 0
  /// ``refused`` by cause, indexed by ``StormRefusal``'s raw values.
  package var refusedBy = [0, 0, 0, 0]

  /// The attempts `cause` refused.
  package func refused(by cause: StormRefusal) -> Int {
    refusedBy[cause.rawValue]
  }

  /// Whether the policy has a stage that can refuse an attempt: `breaker`, `limit`,
  /// `throttle` or `rate`.
  package var canRefuse: Bool {
    policy.breaker != nil || policy.limit != nil || policy.throttle != nil || policy.rate != nil
  }
  /// The median latency of successful requests (first attempt to success), in seconds.
  package var p50: Double?
  /// The 99th percentile of that latency, in seconds.
  package var p99: Double?
  /// The most attempts the backend saw in any 100 ms, per second, divided by its capacity.
  package var peakLoad: Double = 0
  /// Seconds from the end of the outage until every later second's requests succeed at 99 %
  /// or more; nil without an outage or when that never happens.
  package var recoverySeconds: Double?
  /// Each second of the simulation.
  package var seconds = Seconds(count: 0)

  /// Attempts per request.
  package var amplification: Double {
    offered == 0 ? 1 : Double(attempts) / Double(offered)
  }

  /// Attempts during the outage per request that arrived during it; nil without an outage.
  package var outageAmplification: Double? {
    outageOffered == 0 ? nil : Double(outageAttempts) / Double(outageOffered)
  }

  /// The part of the requests that succeeded.
  package var successRatio: Double {
    offered == 0 ? 1 : Double(succeeded) / Double(offered)
  }
}

extension StormResult {
  /// The seconds of a simulation, stored sparsely: only the seconds in which something
  /// happened take memory, so a long simulated time at a low rate stays small.
  ///
  /// A second with nothing stored reads as ``Second/init()``: no attempts, no requests.
  package struct Seconds: Sendable, Hashable {
    /// The number of seconds: the simulated window.
    package private(set) var count: Int
    /// The seconds in which something happened, by increasing index.
    package private(set) var entries: [(index: Int, second: Second)] = []

    /// The empty record of `count` seconds.
    package init(count: Int) {
      self.count = count
    }

    /// Second `index`.
    package subscript(index: Int) -> Second {
      position(of: index).map { entries[$0].second } ?? Second()
    }

    /// Changes second `index`, which must be at or after every second stored so far.
    mutating func updateLatest(_ index: Int, _ change: (inout Second) -> Void) {
      guard let last = entries.last?.index, last >= index else {
        entries.append((index, Second()))
        change(&entries[entries.count - 1].second)
        return
      }
      if last == index {
        change(&entries[entries.count - 1].second)
      } else if let position = position(of: index) {
        change(&entries[position].second)
      } else {
        // Not reached (attempts start in order of time); kept sorted all the same.
        let position = entries.firstIndex { $0.index > index } ?? entries.count
        entries.insert((index, Second()), at: position)
        change(&entries[position].second)
      }
    }

    /// Changes second `index`, which must be stored already.
    mutating func update(_ index: Int, _ change: (inout Second) -> Void) {
      guard let position = position(of: index) else { return }
      change(&entries[position].second)
    }

    /// Where second `index` is in ``entries``: at once when every second is stored, else by
    /// binary search.
    private func position(of index: Int) -> Int? {
      guard let first = entries.first?.index else { return nil }
      let direct = index - first
      if direct >= 0, direct < entries.count, entries[direct].index == index { return direct }
      var low = 0
      var high = entries.count
      while low < high {
        let middle = low + (high - low) / 2
        if entries[middle].index < index { low = middle + 1 } else { high = middle }
      }
      return low < entries.count && entries[low].index == index ? low : nil
    }

    /// Per range of seconds, the most attempts of one second and the lowest success ratio
    /// of one second, seconds with nothing stored included (0 attempts, ratio 1).
    package func extremes(_ ranges: [Range<Int>]) -> [(attempts: Int, successRatio: Double)] {
      ranges.map { range in
        var start = 0
        var end = entries.count
        while start < end {
          let middle = start + (end - start) / 2
          if entries[middle].index < range.lowerBound { start = middle + 1 } else { end = middle }
        }
        var attempts: Int?
        var ratio: Double?
        var stored = 0
        var position = start
        while position < entries.count, entries[position].index < range.upperBound {
          let second = entries[position].second
          attempts = max(attempts ?? second.attempts, second.attempts)
          ratio = min(ratio ?? second.successRatio, second.successRatio)
          stored += 1
          position += 1
        }
        if stored < range.count {
          attempts = max(attempts ?? 0, 0)
          ratio = min(ratio ?? 1, 1)
        }
        return (attempts ?? 0, ratio ?? 1)
      }
    }

    /// The most attempts in one second, 0 when none.
    package var maximumAttempts: Int {
      entries.lazy.map(\.second.attempts).max() ?? 0
    }

    package static func == (lhs: Seconds, rhs: Seconds) -> Bool {
      lhs.count == rhs.count
        && lhs.entries.elementsEqual(rhs.entries) { $0.index == $1.index && $0.second == $1.second }
    }

    package func hash(into hasher: inout Hasher) {
      hasher.combine(count)
      for entry in entries {
        hasher.combine(entry.index)
        hasher.combine(entry.second)
      }
    }
  }
}

/// Why a storm simulation stopped before the end.
package enum StormSimulationError: Error, Hashable, CustomStringConvertible {
  /// The policy kept retrying past the simulator's limit of attempts.
  case tooManyAttempts(limit: Int)
  /// The scenario would send more requests than the simulator's limit.
  case tooManyRequests(expected: Double, limit: Double)
  /// The outage does not end before the simulated window does, in nanoseconds.
  case outageOutsideWindow(start: Int64, end: Int64, duration: Int64)
  /// The policy hedges (`hedge N after D`), which the simulator does not model yet.
  case hedgingNotSimulated

  /// A phrase for the command line.
  package var description: String {
    switch self {
    case .tooManyAttempts(let limit):
      "the simulation stopped at its limit of \(limit) attempts; lower '--clients', '--rate' "
        + "or '--duration', or give the policy fewer retries"
    case .tooManyRequests(let expected, let limit):
      "the scenario sends about \(Int(expected.rounded())) requests (counting the "
        + "load kept up after '--duration'); the simulator's limit is \(Int(limit)): lower "
        + "'--clients', '--rate' or '--duration'"
    case .outageOutsideWindow(let start, let end, let duration):
      start >= duration
        ? "the outage starts at \(Self.text(start)), after the simulated window of "
          + "\(Self.text(duration)); raise '--duration' past \(Self.text(end)) or move the outage"
        : "the outage ends at \(Self.text(end)), not before the simulated window does "
          + "(\(Self.text(duration))): recovery cannot be measured; raise '--duration' past "
          + Self.text(end)
    case .hedgingNotSimulated:
      "storm does not simulate 'hedge' yet; remove the hedge clause to compare the rest "
        + "of the policy"
    }
  }
}

extension StormSimulationError {
  /// Nanoseconds as a duration of the policy language: `2m`, `1.5s`.
  fileprivate static func text(_ nanoseconds: Int64) -> String {
    Duration.nanoseconds(nanoseconds).policyText
  }
}

/// The error of an attempt during the outage: class `serverError`.
package enum StormBackendError: Error, Hashable {
  /// The backend answered with a server error.
  case serverError
}
