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
///   `circuitOpen`, …), empty for a success; a run stopped by
///   ``RetryStopReason/retriesRefused(_:)`` is labelled with the refusal's own
///   ``RetryRefusal/name`` (`notIdempotent` for a request `RetryPolicyHTTP` may not send
///   twice), not `retriesRefused`: the refusal names itself. A process counts seven refusal
///   names apart; runs refused under any further name share the label `retriesRefused`;
/// - `retry_policy_refusals_total{policy, by}`: refused attempts by cause, `breaker`,
///   `budget`, `limit`, `throttle` or `rate`;
/// - `retry_policy_attempt_duration_seconds{policy}` and
///   `retry_policy_run_duration_seconds{policy}`: histograms of the durations of attempts
///   that were made, and of runs from the start of their first attempt to their end (waits
///   included), on the run's clock (for the continuous clock, its coarse reading: see
///   <doc:Telemetry>); the buckets end at 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
///   0.25, 0.5, 1, 2.5, 5, 10, 30 and 60 seconds, then +Inf;
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
  // Sound: `byName` is read and written only while `lock` is held; `recent` points to
  // `recentCount` atomics, initialized in `init` and freed in `deinit`, each 0 or the
  // address of the `CacheKey` of a `PolicyMetrics` that `byName` keeps for good.

  /// An `NSLock`, which ThreadSanitizer sees (see <doc:ProcessWideState>).
  private let lock = NSLock()
  private var byName: [String: PolicyMetrics] = [:]
  /// The counters of the anonymous policy, found without a lookup.
  private let anonymous = PolicyMetrics(name: "anonymous")
  private let anonymousCounters: PolicyCounters
  /// Whether a run recorded into ``anonymous``: only then is it exposed.
  private let isAnonymousUsed = Atomic<Bool>(false)
  /// A direct-mapped cache of recently used names' counters, read without the lock and
  /// without a reference count: each entry is 0 or the address of a ``PolicyMetrics``'
  /// ``PolicyMetrics/cacheKey``.
  private let recent: UnsafeMutablePointer<Atomic<UInt>>
  private static let recentCount = 256

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
    recent = UnsafeMutablePointer<Atomic<UInt>>.allocate(capacity: Self.recentCount)
    for index in 0..<Self.recentCount { (recent + index).initialize(to: Atomic(0)) }
    anonymousCounters = anonymous.counters
  }

  deinit {
    recent.deinitialize(count: Self.recentCount)
    recent.deallocate()
  }

  /// The counters of the policy named `name` (nil: `anonymous`), made the first time.
  package func policy(named name: String?) -> PolicyMetrics {
    guard let name, name != "anonymous" else { return anonymousPolicy() }
    return insert(name)
  }

  /// The counters of the policy named `name` (nil: `anonymous`), as a run writes them:
  /// found in the cache of recent names without a lock or a reference count, else made or
  /// found under the lock the first time.
  @usableFromInline
  package func counters(named name: String?) -> PolicyCounters {
    guard let name else {
      if !isAnonymousUsed.load(ordering: .relaxed) { _ = anonymousPolicy() }
      return anonymousCounters
    }
    let cached = name.utf8.withContiguousStorageIfAvailable { bytes -> PolicyCounters? in
      let raw = recent[Self.slot(of: bytes)].load(ordering: .acquiring)
      guard let key = UnsafePointer<PolicyMetrics.CacheKey>(bitPattern: raw),
        key.pointee.matches(bytes)
      else { return nil }
      return key.pointee.counters
    }
    if let cached, let counters = cached { return counters }
    return insert(name).counters
  }

  /// The counters of `policy`'s name.
  @usableFromInline
  package func policy(_ policy: borrowing CompiledPolicy) -> PolicyMetrics {
    self.policy(named: policy.name)
  }

  private func anonymousPolicy() -> PolicyMetrics {
    if !isAnonymousUsed.load(ordering: .relaxed) {
      isAnonymousUsed.store(true, ordering: .relaxed)
    }
    return anonymous
  }

  /// The counters of `name`, made the first time, and put in the cache of recent names.
  @inline(never)
  private func insert(_ name: String) -> PolicyMetrics {
    if name == "anonymous" { return anonymousPolicy() }
    let metrics = lock.withLock {
      if let known = byName[name] { return known }
      let made = PolicyMetrics(name: name)
      byName[name] = made
      return made
    }
    var name = name
    let slot = name.withUTF8 { Self.slot(of: $0) }
    recent[slot].store(
      UInt(bitPattern: metrics.cacheKey), ordering: .releasing)
    return metrics
  }

  /// The cache entry of a name's bytes: a multiplicative hash of them, eight at a time.
  @inline(__always)
  private static func slot(of bytes: UnsafeBufferPointer<UInt8>) -> Int {
    slot(ofHash: hash(bytes))
  }

  /// A hash of `bytes` that every byte stirs: each eight bytes (the last ones padded with
  /// zeros) are mixed in with a multiplication, the length first.
  @inline(__always)
  private static func hash(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
    let count = bytes.count
    var hash = 0xcbf2_9ce4_8422_2325 ^ UInt64(truncatingIfNeeded: count)
    guard let base = bytes.baseAddress else { return hash }
    let raw = UnsafeRawPointer(base)
    var offset = 0
    while offset &+ 8 <= count {
      hash = mix(hash, raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
      offset &+= 8
    }
    if offset < count {
      var tail: UInt64 = 0
      var shift: UInt64 = 0
      while offset < count {
        tail |= UInt64(base[offset]) &<< shift
        shift &+= 8
        offset &+= 1
      }
      hash = mix(hash, tail)
    }
    return hash
  }

  @inline(__always)
  private static func mix(_ hash: UInt64, _ word: UInt64) -> UInt64 {
    let mixed = (hash ^ word) &* 0x9E37_79B9_7F4A_7C15
    return mixed ^ (mixed &>> 29)
  }

  /// The entry of a hash: its high bits, which every byte stirs.
  @inline(__always)
  private static func slot(ofHash hash: UInt64) -> Int {
    Int(truncatingIfNeeded: hash >> 40) & (recentCount - 1)
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
