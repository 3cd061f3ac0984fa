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
/// It performs nothing: the storm simulator keeps one per client on its virtual time, and
/// passes the time in nanoseconds and a uniform random number in [0, 1). ``AdaptiveThrottle``
/// keeps the same counts in atomics (`ThrottleCounts`), which decide as this does.
package struct ThrottleWindow: Sendable {
  /// The buckets of a window.
  package static let bucketCount = 20

  /// The width of a bucket in nanoseconds.
  private let width: Int64
  private var indices: [Int64]
  private var requests: [Int]
  private var accepts: [Int]
  /// The bucket whose window `cachedRequests` and `cachedAccepts` total (`Int64.min`: none):
  /// the counts are summed over the buckets once per bucket, not at every request.
  private var cachedIndex = Int64.min
  private var cachedRequests = 0
  private var cachedAccepts = 0

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
    if current == cachedIndex { return (cachedRequests, cachedAccepts) }
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
    Self.probability(counts(now: now), factor: factor)
  }

  /// The same, keeping the window's totals for the next asks in the same bucket.
  package mutating func currentRefusalProbability(now: Int64, factor: Double) -> Double {
    let current = now / width
    if current != cachedIndex {
      (cachedRequests, cachedAccepts) = counts(now: now)
      cachedIndex = current
    }
    return Self.probability((cachedRequests, cachedAccepts), factor: factor)
  }

  private static func probability(_ counts: (requests: Int, accepts: Int), factor: Double)
    -> Double
  {
    let excess = Double(counts.requests) - factor * Double(counts.accepts)
    guard excess > 0 else { return 0 }
    return excess / Double(counts.requests + 1)
  }

  /// Counts an attempt asked for at `now`; returns whether it may start, `uniform` being a
  /// random number in [0, 1): refused when it is below the refusal probability.
  package mutating func request(now: Int64, factor: Double, uniform: Double) -> Bool {
    let probability = currentRefusalProbability(now: now, factor: factor)
    count(now: now)
    return !(uniform < probability)
  }

  /// Counts a request at `now`.
  package mutating func count(now: Int64) {
    let (slot, index) = bucket(at: now)
    requests[slot] &+= 1
    if index == cachedIndex { cachedRequests &+= 1 } else { cachedIndex = .min }
  }

  /// Counts an accept at `now`: an attempt that succeeded or failed with an error no rule
  /// matches.
  package mutating func accept(now: Int64) {
    let (slot, index) = bucket(at: now)
    accepts[slot] &+= 1
    if index == cachedIndex { cachedAccepts &+= 1 } else { cachedIndex = .min }
  }

  /// The slot of the bucket of `now` and the bucket's number; the slot is cleared when it
  /// last held an older bucket (which the totals of a later bucket never include).
  private mutating func bucket(at now: Int64) -> (slot: Int, index: Int64) {
    let index = Swift.max(now, 0) / width
    let slot = Int(index % Int64(Self.bucketCount))
    if indices[slot] != index {
      indices[slot] = index
      requests[slot] = 0
      accepts[slot] = 0
    }
    return (slot, index)
  }
}
