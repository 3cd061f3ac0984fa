/// The counts and the decision of `throttle xK [over D]`, as a pure state machine: adaptive
/// client throttling after Google's SRE book ("Handling Overload").
///
/// Over the last `over`, kept as ``bucketCount`` (20) buckets of a twentieth of it each, the
/// window counts *requests* (every attempt asked for, refused ones included) and *accepts*
/// (attempts that succeeded or failed with an error no rule matches). An attempt is refused
/// with probability max(0, (requests − K × accepts) / (requests + 1)), the counts taken before
/// the attempt's own request. So a healthy service (accepts ≈ requests) is never throttled,
/// and one that rejects everything sees about one request in K reach it.
///
/// It performs nothing: ``AdaptiveThrottle`` keeps it behind a lock and passes the time in
/// nanoseconds and a uniform random number in [0, 1) drawn from the run's random source.
package struct ThrottleWindow: Sendable {
  /// The buckets of a window.
  package static let bucketCount = 20

  /// The width of a bucket in nanoseconds.
  private let width: Int64
  private var indices: [Int64]
  private var requests: [Int]
  private var accepts: [Int]

  /// A window of `window` (at least 20 ns), empty.
  package init(window: Duration) {
    let nanoseconds = Swift.max(CircuitBreakerClock.nanoseconds(window), Int64(Self.bucketCount))
    width = nanoseconds / Int64(Self.bucketCount)
    indices = Array(repeating: -1, count: Self.bucketCount)
    requests = Array(repeating: 0, count: Self.bucketCount)
    accepts = Array(repeating: 0, count: Self.bucketCount)
  }

  /// The requests and accepts within the window at `now`.
  package func counts(now: Int64) -> (requests: Int, accepts: Int) {
    let current = now / width
    var totalRequests = 0
    var totalAccepts = 0
    for slot in 0..<Self.bucketCount {
      let index = indices[slot]
      guard index >= 0, index > current - Int64(Self.bucketCount), index <= current else {
        continue
      }
      totalRequests &+= requests[slot]
      totalAccepts &+= accepts[slot]
    }
    return (totalRequests, totalAccepts)
  }

  /// The probability that an attempt asked for at `now` is refused, under factor `factor`.
  package func refusalProbability(now: Int64, factor: Double) -> Double {
    let (requests, accepts) = counts(now: now)
    let excess = Double(requests) - factor * Double(accepts)
    guard excess > 0 else { return 0 }
    return excess / Double(requests + 1)
  }

  /// Counts an attempt asked for at `now`; returns whether it may start, `uniform` being a
  /// random number in [0, 1): refused when it is below the refusal probability.
  package mutating func request(now: Int64, factor: Double, uniform: Double) -> Bool {
    let probability = refusalProbability(now: now, factor: factor)
    let slot = bucket(at: now)
    requests[slot] &+= 1
    return !(uniform < probability)
  }

  /// Counts an accept at `now`: an attempt that succeeded or failed with an error no rule
  /// matches.
  package mutating func accept(now: Int64) {
    let slot = bucket(at: now)
    accepts[slot] &+= 1
  }

  /// The slot of the bucket of `now`, cleared when it last held an older bucket.
  private mutating func bucket(at now: Int64) -> Int {
    let index = Swift.max(now, 0) / width
    let slot = Int(index % Int64(Self.bucketCount))
    if indices[slot] != index {
      indices[slot] = index
      requests[slot] = 0
      accepts[slot] = 0
    }
    return slot
  }
}
