import Foundation
import Synchronization

/// Counters, histograms and gauges of the runs of policies, by policy name, in the form
/// Prometheus scrapes: hand one to runs through the environment and serve
/// ``openMetricsText()``.
///
///     let metrics = RetryMetrics()
///     let environment = RetryEnvironment(metrics: metrics)
///     let user = try await policy.run(in: environment) { try await client.fetchUser(id) }
///     // GET /metrics:
///     let body = metrics.openMetricsText()
///
/// Each policy name (`anonymous` for a policy compiled from one line) gets:
/// - `retry_policy_attempts_total{policy, outcome}`: attempts by `outcome`, `success`,
///   `failure` (any error, cancellation and `timeout` included) or `refused` (an attempt the
///   run wanted to make that a breaker, the budget or a load-shedding clause refused; it was
///   never made);
/// - `retry_policy_runs_total{policy, outcome, reason}`: runs by `outcome`, `success` or
///   `failure`, and `reason`, the ``RetryStopReason`` case name (`retriesExhausted`,
///   `circuitOpen`, …), empty for a success;
/// - `retry_policy_refusals_total{policy, by}`: refused attempts by cause, `breaker`,
///   `budget`, `limit`, `throttle` or `rate`;
/// - `retry_policy_attempt_duration_seconds{policy}` and
///   `retry_policy_run_duration_seconds{policy}`: histograms of the durations of attempts
///   that were made, and of runs from the start of their first attempt to their end (waits
///   included), on the run's clock; the buckets end at 0.001, 0.0025, 0.005, 0.01, 0.025,
///   0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30 and 60 seconds, then +Inf;
/// - `retry_policy_in_flight_attempts{policy}`: attempts started and not yet ended;
/// - `retry_policy_breaker_state{policy, state}`, for a policy whose runs used a circuit
///   breaker: 1 for the breaker's current state (`closed`, `open` or `half_open`), 0 for the
///   others.
///
/// Recording is lock-free and allocation-free: a run finds its policy's counters once (a
/// lock is taken only the first time a name is seen, and when names collide in the lookup's
/// cache), then adds to atomic counters striped by thread. Counters only grow for the life of
/// the object; a ``PolicyStore`` reload keeps them, since names stay. See <doc:Telemetry>.
public final class RetryMetrics: @unchecked Sendable {
  // Sound: `byName` is read and written only while `lock` is held; `recent` is an
  // array of atomics, fixed at init, whose entries point to objects `byName` keeps.

  /// An `NSLock`, which ThreadSanitizer sees (see <doc:ProcessWideState>).
  private let lock = NSLock()
  private var byName: [String: PolicyMetrics] = [:]
  /// The counters of the anonymous policy, found without a lookup.
  private let anonymous = PolicyMetrics(name: "anonymous")
  /// Whether a run recorded into ``anonymous``: only then is it exposed.
  private let isAnonymousUsed = Atomic<Bool>(false)
  /// A direct-mapped cache of recently used names' counters, read without the lock.
  private let recent: [RecentEntry]
  private static let recentCount = 64

  /// One entry of ``recent``: an unretained reference to counters `byName` keeps for good.
  private final class RecentEntry: Sendable {
    let metrics = Atomic<Unmanaged<PolicyMetrics>?>(nil)
  }

  /// Why an attempt the run wanted to make was not made: the `by` label of
  /// `retry_policy_refusals_total`.
  public enum RefusalCause: String, Sendable, Hashable, CaseIterable {
    /// The circuit breaker was open, or a probe was under way.
    case breaker
    /// The retry budget had no token for a retry.
    case budget
    /// `limit`: too many attempts in flight.
    case limit
    /// `throttle`: adaptive client throttling refused it.
    case throttle
    /// `rate`: no token of the rate's bucket in time.
    case rate
  }

  /// Creates empty metrics.
  public init() {
    recent = (0..<Self.recentCount).map { _ in RecentEntry() }
  }

  /// The counters of the policy named `name` (nil: `anonymous`), made the first time.
  @inline(__always)
  package func policy(named name: String?) -> PolicyMetrics {
    guard let name else { return anonymousPolicy() }
    let entry = recent[Self.slot(of: name)]
    if let cached = entry.metrics.load(ordering: .acquiring)?.takeUnretainedValue(),
      cached.name == name
    {
      return cached
    }
    return insert(name, into: entry)
  }

  /// The counters of the policy named `name` (nil: `anonymous`), as a run writes them.
  @usableFromInline
  package func counters(named name: String?) -> PolicyCounters {
    policy(named: name).counters
  }

  /// The counters of `policy`'s name.
  @usableFromInline
  package func policy(_ policy: borrowing CompiledPolicy) -> PolicyMetrics {
    self.policy(named: policy.name)
  }

  @inline(__always)
  private func anonymousPolicy() -> PolicyMetrics {
    if !isAnonymousUsed.load(ordering: .relaxed) {
      isAnonymousUsed.store(true, ordering: .relaxed)
    }
    return anonymous
  }

  @inline(never)
  private func insert(_ name: String, into entry: RecentEntry) -> PolicyMetrics {
    if name == "anonymous" { return anonymousPolicy() }
    let metrics = lock.withLock {
      if let known = byName[name] { return known }
      let made = PolicyMetrics(name: name)
      byName[name] = made
      return made
    }
    entry.metrics.store(Unmanaged.passUnretained(metrics), ordering: .releasing)
    return metrics
  }

  /// The cache entry of a name: from its length and its first and last bytes, which is cheap
  /// and tells most names of a file apart.
  @inline(__always)
  private static func slot(of name: String) -> Int {
    let utf8 = name.utf8
    let first = Int(utf8.first ?? 0)
    let last = Int(utf8.last ?? 0)
    return (utf8.count &* 31 &+ first &* 7 &+ last) & (recentCount - 1)
  }

  /// Every policy's counters, in the order of their names.
  func policies() -> [PolicyMetrics] {
    lock.withLock {
      var all = Array(byName.values)
      if isAnonymousUsed.load(ordering: .relaxed) { all.append(anonymous) }
      return all.sorted { $0.name < $1.name }
    }
  }
}
