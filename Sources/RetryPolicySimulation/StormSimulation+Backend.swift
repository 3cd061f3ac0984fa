import Foundation
import RetryPolicy
import Synchronization

// The backend model of a storm (failures, service times, capacity, the backlog), its result,
// and the virtual time its clients read. See `StormSimulation.swift` for the engine.

extension StormEngine {
  /// Whether an attempt during the outage fails: true with probability `failureRate`.
  mutating func failureDraw() -> Bool {
    guard scenario.failureRate > 0 else { return false }
    guard scenario.failureRate < 1 else { return true }
    return Double(backend.next() >> 11) * 0x1p-53 < scenario.failureRate
  }

  /// A service time: half the mean fixed, half exponential; times the slowdown if `slowed`.
  mutating func serviceTime(slowed: Bool) -> Int64 {
    let mean = Double(scenario.latency) * (slowed ? scenario.slowdown : 1)
    return Int64(mean / 2) + Self.exponential(&backend, mean: mean / 2)
  }

  func capacity(slowed: Bool) -> Double {
    slowed ? scenario.capacity / scenario.slowdown : scenario.capacity
  }

  /// Serves the queued work from the last attempt until `now`, at each period's capacity.
  mutating func drainBacklog(to now: Int64) {
    while backlogTime < now {
      var until = now
      if let start = scenario.outageStart, let end = scenario.outageEnd {
        if backlogTime < start, start < until { until = start }
        if backlogTime >= start, backlogTime < end, end < until { until = end }
      }
      let served =
        Double(until - backlogTime) / 1e9
        * capacity(
          slowed: scenario.isInOutage(backlogTime))
      backlog = max(0, backlog - served)
      backlogTime = until
    }
  }

  /// A draw of an exponential distribution of the given mean, rounded to nanoseconds.
  static func exponential(_ random: inout SeededRandomNumberGenerator, mean: Double) -> Int64 {
    let uniform = (Double(random.next() >> 11) + 0.5) * 0x1p-53
    let value = -log(uniform) * mean
    return value < 1e17 ? Int64(value) : 100_000_000_000_000_000
  }

  func result() -> StormResult {
    var result = stats
    result.p50 = latencies.percentile(0.50)
    result.p99 = latencies.percentile(0.99)
    let peak = max(peakTenthAttempts, tenthAttempts)
    result.peakLoad = Double(peak) * 10 / scenario.capacity
    if let end = scenario.outageEnd {
      result.recoverySeconds = Self.recovery(result.seconds, after: end)
    }
    return result
  }

  /// The seconds from `end` until the first second from which every second's requests
  /// succeed at 99 % or more; nil when the last second's do not.
  static func recovery(_ seconds: StormResult.Seconds, after end: Int64) -> Double? {
    let first = Int(end / 1_000_000_000)
    guard first < seconds.count else { return nil }
    // The first second after the last one below 99 % (seconds with no requests are at 100 %).
    let lastFailing = seconds.entries.last { $0.index >= first && $0.second.successRatio < 0.99 }
    let recovered = lastFailing.map { $0.index + 1 } ?? first
    guard recovered < seconds.count else { return nil }
    return max(0, Double(Int64(recovered) * 1_000_000_000 - end) / 1e9)
  }
}

/// The virtual time of a simulation, which its clients' breakers read.
final class VirtualTime: Sendable {
  private let nanoseconds = Atomic<Int64>(0)

  /// The time since the simulation started.
  var now: Duration { .nanoseconds(nanoseconds.load(ordering: .relaxed)) }

  /// Moves the time to `time` nanoseconds (events come in order of time).
  func set(_ time: Int64) {
    nanoseconds.store(time, ordering: .relaxed)
  }
}

/// A seed for stream `stream` of a simulation seeded with `seed`.
func mix(_ seed: UInt64, _ stream: UInt64) -> UInt64 {
  var generator = SeededRandomNumberGenerator(seed: seed ^ (stream &* 0xD6E8_FEB8_6659_FD93))
  return generator.next()
}
