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

  /// Creates the default scenario: 1,000 clients at 1 request per second, no outage.
  package init() {}

  /// When the outage ends, in nanoseconds; nil for no outage.
  package var outageEnd: Int64? {
    outageStart.map { $0 &+ outageLength }
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
  package var seconds: [Second] = []

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

/// Why a storm simulation stopped before the end.
package enum StormSimulationError: Error, Hashable, CustomStringConvertible {
  /// The policy kept retrying past the simulator's limit of attempts.
  case tooManyAttempts(limit: Int)
  /// The policy hedges (`hedge N after D`), which the simulator does not model yet.
  case hedgingNotSimulated

  /// A phrase for the command line.
  package var description: String {
    switch self {
    case .tooManyAttempts(let limit):
      "the simulation stopped after \(limit) attempts: the policy retries without end "
        + "(add 'within' or a count)"
    case .hedgingNotSimulated:
      "storm does not simulate 'hedge' yet; remove the hedge clause to compare the rest "
        + "of the policy"
    }
  }
}

/// The error of an attempt during the outage: class `serverError`.
package enum StormBackendError: Error, Hashable {
  /// The backend answered with a server error.
  case serverError
}
