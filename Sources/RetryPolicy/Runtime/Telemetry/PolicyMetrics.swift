import Foundation
import Synchronization

/// The counters of one policy name in a ``RetryMetrics``: what a run records into, found once
/// per run and written with relaxed atomic operations only.
///
/// Each counter has one cell per stripe (see ``MetricsStripe``): a thread adds to the cells of
/// its own stripe, so that runs on different cores do not write the same cache line, and a
/// thread that owns its stripe adds without a locked instruction; reading adds the stripes. Values that other values give are not kept: an attempt's end adds to the
/// bucket of its duration in the histogram of its outcome, so the attempts that succeeded and
/// failed are the counts of those histograms, and the attempts in flight are the attempts
/// started less those ended. A refused attempt is counted once, by its cause; the attempts
/// refused are the sum of the refusals.
///
/// The cells are one block of atomics, each stripe a whole number of cache lines, allocated
/// with the object and freed with it: reading them for an exposition is a sequential scan,
/// not a pointer chase per counter.
@usableFromInline
package final class PolicyMetrics: @unchecked Sendable {
  // Sound: `breaker` is read and written only while `lock` is held; `cells` points to
  // `stripeCount × Offset.stride` atomics, initialized in `init`, freed in `deinit`, and only
  // ever read and written through their atomic operations; everything else is a constant or
  // an atomic.
  /// The stripes of every counter (see ``MetricsStripe``).
  static let stripeCount = MetricsStripe.count

  /// The policy's name as the `policy` label gives it: `anonymous` for a policy without one.
  package let name: String
  /// `{policy="NAME"`, the name escaped: the start of every sample's labels (freed with the
  /// object).
  let labelBytes: UnsafeBufferPointer<UInt8>
  private let cells: UnsafeMutablePointer<Atomic<UInt64>>
  /// The cells as the hot path writes them: a plain pointer, which a run copies without
  /// touching a reference count.
  package let counters: PolicyCounters
  /// The name's bytes and ``counters``, where ``RetryMetrics``' cache of recent names reads
  /// them without a reference count.
  let cacheKey: UnsafeMutablePointer<CacheKey>

  /// A name's UTF-8 bytes and its counters.
  struct CacheKey {
    let name: UnsafeMutableBufferPointer<UInt8>
    let counters: PolicyCounters

    /// Whether `bytes` are the name's.
    @inline(__always)
    func matches(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
      let count = bytes.count
      guard count == name.count else { return false }
      guard let mine = name.baseAddress, let theirs = bytes.baseAddress else { return true }
      // Eight bytes at a time, inline: names are short, and a call to `memcmp` costs more.
      var offset = 0
      while offset &+ 8 <= count {
        let word = UnsafeRawPointer(mine).loadUnaligned(fromByteOffset: offset, as: UInt64.self)
        let other = UnsafeRawPointer(theirs).loadUnaligned(
          fromByteOffset: offset, as: UInt64.self)
        guard word == other else { return false }
        offset &+= 8
      }
      while offset < count {
        guard mine[offset] == theirs[offset] else { return false }
        offset &+= 1
      }
      return true
    }
  }
  /// The breaker of the policy's latest run, for the state gauge; nil until a run of the
  /// policy had one.
  private var breaker: CircuitBreaker?
  /// The identity of ``breaker``, read without the lock to skip it when it is unchanged.
  private let breakerIdentity = Atomic<UInt>(0)
  /// An `NSLock`, which ThreadSanitizer sees (see <doc:ProcessWideState>).
  private let lock = NSLock()

  /// Where each counter is in a stripe.
  enum Offset {
    static let started = 0
    /// One per ``RetryMetrics/RefusalCause``, in the order of its cases.
    static let refusals = 1
    /// The successful attempts' histogram: one bucket per bound and one past them.
    static let attemptSuccesses = refusals + RetryMetrics.RefusalCause.allCases.count
    static let attemptFailures = attemptSuccesses + DurationBuckets.bucketCount
    /// The attempts' durations in nanoseconds, added up (wrapping).
    static let attemptSum = attemptFailures + DurationBuckets.bucketCount
    static let runSuccesses = attemptSum + 1
    static let runFailures = runSuccesses + DurationBuckets.bucketCount
    static let runSum = runFailures + DurationBuckets.bucketCount
    /// One per stop reason, in the order of ``RetryStopReason/metricsIndex``: the core's,
    /// then the refusals' places.
    static let runReasons = runSum + 1
    /// Successful runs whose last attempt's duration falls in the bucket of the run's own
    /// (every run whose first attempt succeeded, and most runs of immediate retries), the
    /// attempt and the run at once, by bucket: read as both a successful attempt and a
    /// successful run (two additions on the hot path instead of four);
    /// ``PolicyMetrics/totals()`` folds them in.
    static let jointSuccesses = runReasons + RetryStopReason.metricsCount
    /// Durations in nanoseconds (wrapping) added to both the attempts' and the runs' sums.
    static let jointSum = jointSuccesses + DurationBuckets.bucketCount
    /// The cells of a stripe: its counters, rounded up to whole cache lines (8 cells).
    static let stride = (jointSum + 1 + 7) / 8 * 8
  }

  /// The counters of `name` (the `policy` label's value).
  init(name: String) {
    self.name = name
    var prefix = Array("{policy=\"".utf8)
    OpenMetricsWriter.appendEscaped(name, to: &prefix)
    prefix.append(UInt8(ascii: "\""))
    let label = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: prefix.count)
    _ = label.initialize(from: prefix)
    self.labelBytes = UnsafeBufferPointer(label)
    let count = Self.stripeCount * Offset.stride
    let raw = UnsafeMutableRawPointer.allocate(
      byteCount: count * MemoryLayout<Atomic<UInt64>>.stride, alignment: 64)
    let cells = raw.bindMemory(to: Atomic<UInt64>.self, capacity: count)
    for index in 0..<count { (cells + index).initialize(to: Atomic(0)) }
    self.cells = cells
    self.counters = PolicyCounters(cells: cells)
    let bytes = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: name.utf8.count)
    _ = bytes.initialize(from: name.utf8)
    cacheKey = UnsafeMutablePointer<CacheKey>.allocate(capacity: 1)
    cacheKey.initialize(to: CacheKey(name: bytes, counters: counters))
  }

  deinit {
    labelBytes.deallocate()
    cacheKey.pointee.name.deallocate()
    cacheKey.deinitialize(count: 1)
    cacheKey.deallocate()
    let count = Self.stripeCount * Offset.stride
    cells.deinitialize(count: count)
    UnsafeMutableRawPointer(cells).deallocate()
  }

  /// The value of cell `index` (stripe × stride + offset).
  func cell(at index: Int) -> UInt64 {
    cells[index].load(ordering: .relaxed)
  }

  // MARK: Recording (through ``counters``, with durations)

  /// An attempt of the policy starts.
  func attemptStarted() { counters.attemptStarted() }

  /// An attempt that started ended after `duration`.
  func attemptEnded(succeeded: Bool, after duration: Duration) {
    counters.attemptEnded(
      succeeded: succeeded, afterNanoseconds: DurationBuckets.nanoseconds(duration))
  }

  /// An attempt the run wanted to make was refused, by `cause`.
  func attemptRefused(by cause: RetryMetrics.RefusalCause) {
    counters.attemptRefused(by: cause)
  }

  /// A run of the policy ended with `outcome`, `duration` after its first attempt started.
  func runEnded(_ outcome: RetryOutcome, after duration: Duration) {
    counters.runEnded(outcome, afterNanoseconds: DurationBuckets.nanoseconds(duration))
  }

  /// The policy's run uses `breaker`: its state is what the breaker gauge shows.
  @inline(__always)
  package func observe(_ breaker: CircuitBreaker) {
    let identity = UInt(bitPattern: ObjectIdentifier(breaker))
    guard breakerIdentity.load(ordering: .relaxed) != identity else { return }
    // The breaker is kept, so its identity cannot be another breaker's while it is.
    lock.withLock {
      self.breaker = breaker
      breakerIdentity.store(identity, ordering: .relaxed)
    }
  }

  // MARK: Reading

  /// The breaker whose state the gauge shows, if the policy's runs had one.
  var currentBreaker: CircuitBreaker? {
    lock.withLock { breaker }
  }

}

/// The counters of one policy name as a run writes them: a plain pointer to the cells of a
/// ``PolicyMetrics``, valid while its ``RetryMetrics`` lives (a run's environment keeps it).
///
/// A run finds it once and copies it freely: no reference is counted on the hot path. Each
/// record writes the current thread's stripe (see ``MetricsStripe``): a stripe the thread owns
/// with plain loads and stores, the shared one with atomic additions.
@usableFromInline
package struct PolicyCounters: @unchecked Sendable {
  // Sound: `cells` points to the atomics of a `PolicyMetrics` that its `RetryMetrics`
  // keeps for its whole life, and a run only uses it while its environment holds that
  // `RetryMetrics`; the cells are only read and written through their atomic operations,
  // and an owned stripe's cells are written by its owner thread alone (``MetricsStripe``).
  typealias Offset = PolicyMetrics.Offset
  private let cells: UnsafeMutablePointer<Atomic<UInt64>>
  /// Where the current thread's stripe is kept.
  private let stripeKey: MetricsStripe.Key

  init(cells: UnsafeMutablePointer<Atomic<UInt64>>) {
    self.cells = cells
    self.stripeKey = .process
  }

  /// The current thread's stripe of the cells: where it starts, and whether the thread owns it.
  struct Stripe {
    let cells: UnsafeMutablePointer<Atomic<UInt64>>
    let isOwned: Bool

    /// Adds `amount` (wrapping) to the counter at `offset`.
    @inline(__always)
    func add(_ amount: UInt64, at offset: Int) {
      if isOwned {
        // Only this thread writes the cell: no read-modify-write needed.
        let value = cells[offset].load(ordering: .relaxed)
        cells[offset].store(value &+ amount, ordering: .relaxed)
      } else {
        cells[offset].wrappingAdd(amount, ordering: .relaxed)
      }
    }
  }

  /// The current thread's stripe.
  @inline(__always)
  private var stripe: Stripe {
    let (index, isOwned) = MetricsStripe.current(stripeKey)
    return Stripe(cells: cells + index &* Offset.stride, isOwned: isOwned)
  }

  /// An attempt of the policy starts (the operation is about to be called).
  @usableFromInline
  package func attemptStarted() {
    stripe.add(1, at: Offset.started)
  }

  /// An attempt that started ended after `nanoseconds`: a success or a failure (any error,
  /// cancellation and timeouts included).
  package func attemptEnded(succeeded: Bool, afterNanoseconds nanoseconds: UInt64) {
    let base = succeeded ? Offset.attemptSuccesses : Offset.attemptFailures
    let stripe = stripe
    stripe.add(1, at: base &+ DurationBuckets.index(ofNanoseconds: nanoseconds))
    stripe.add(nanoseconds, at: Offset.attemptSum)
  }

  /// A run's first attempt succeeded after `nanoseconds`: the attempt and the run end
  /// together (what `run`'s own path records, without a driver).
  @usableFromInline
  package func firstAttemptSucceeded(afterNanoseconds nanoseconds: UInt64) {
    let stripe = stripe
    stripe.add(1, at: Offset.jointSuccesses &+ DurationBuckets.index(ofNanoseconds: nanoseconds))
    stripe.add(nanoseconds, at: Offset.jointSum)
  }

  /// A run's first attempt succeeded after `duration`.
  @usableFromInline
  package func firstAttemptSucceeded(after duration: Duration) {
    firstAttemptSucceeded(afterNanoseconds: DurationBuckets.nanoseconds(duration))
  }

  /// A run succeeded `run` nanoseconds after its first attempt started, its last attempt
  /// `last` nanoseconds after that attempt started: the attempt and the run end together.
  ///
  /// When both fall in the same bucket, one bucket of joint successes counts both, and the
  /// run's duration is added to both sums, the attempts' sum corrected by the difference
  /// (wrapping): three additions instead of four.
  package func runSucceeded(lastAttempt last: UInt64, run: UInt64) {
    let stripe = stripe
    let bucket = DurationBuckets.index(ofNanoseconds: run)
    let attemptBucket = DurationBuckets.index(ofNanoseconds: last)
    if attemptBucket == bucket {
      stripe.add(1, at: Offset.jointSuccesses &+ bucket)
      stripe.add(run, at: Offset.jointSum)
      if last != run { stripe.add(last &- run, at: Offset.attemptSum) }
    } else {
      stripe.add(1, at: Offset.attemptSuccesses &+ attemptBucket)
      stripe.add(last, at: Offset.attemptSum)
      stripe.add(1, at: Offset.runSuccesses &+ bucket)
      stripe.add(run, at: Offset.runSum)
    }
  }

  /// An attempt the run wanted to make was refused, by `cause`; it never started.
  package func attemptRefused(by cause: RetryMetrics.RefusalCause) {
    stripe.add(1, at: Offset.refusals + cause.index)
  }

  /// A run of the policy ended with `outcome`, `nanoseconds` after its first attempt
  /// started.
  package func runEnded(_ outcome: RetryOutcome, afterNanoseconds nanoseconds: UInt64) {
    let stripe = stripe
    let bucket = DurationBuckets.index(ofNanoseconds: nanoseconds)
    switch outcome {
    case .succeeded:
      stripe.add(1, at: Offset.runSuccesses &+ bucket)
    case .failed(let reason):
      stripe.add(1, at: Offset.runFailures &+ bucket)
      stripe.add(1, at: Offset.runReasons &+ reason.metricsIndex)
    }
    stripe.add(nanoseconds, at: Offset.runSum)
  }
}

/// The buckets of both duration histograms, in seconds: 1 ms to 60 s, then +Inf.
///
/// Attempts of a local call take about a millisecond, a remote one tens to hundreds; a run
/// adds its waits, seconds to a minute under `backoff` and `within`.
enum DurationBuckets {
  /// The upper bounds, in nanoseconds; the last bucket (+Inf) has none.
  static let bounds: [UInt64] = [
    1_000_000, 2_500_000, 5_000_000, 10_000_000, 25_000_000, 50_000_000, 100_000_000,
    250_000_000, 500_000_000, 1_000_000_000, 2_500_000_000, 5_000_000_000, 10_000_000_000,
    30_000_000_000, 60_000_000_000,
  ]
  /// The bounds as the `le` label writes them (OpenMetrics' canonical numbers).
  static let labels: [String] = [
    "0.001", "0.0025", "0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5", "1.0", "2.5",
    "5.0", "10.0", "30.0", "60.0",
  ]
  /// The buckets: one per bound, and +Inf.
  static let bucketCount = 16

  /// A duration in whole nanoseconds, clamped to [0, 2^63).
  @inline(__always)
  static func nanoseconds(_ duration: Duration) -> UInt64 {
    let (seconds, attoseconds) = duration.components
    guard seconds >= 0, attoseconds >= 0 else { return 0 }
    guard seconds < 9_000_000_000 else { return 9_000_000_000_000_000_000 }
    return UInt64(seconds) &* 1_000_000_000 &+ UInt64(attoseconds / 1_000_000_000)
  }

  /// The bucket of a duration of `nanoseconds`: the first whose bound it does not exceed
  /// (the bounds of ``bounds``, written out: no array is read on the hot path).
  @inline(__always)
  static func index(ofNanoseconds nanoseconds: UInt64) -> Int {
    if nanoseconds <= 1_000_000 { return 0 }
    if nanoseconds <= 50_000_000 {
      if nanoseconds <= 2_500_000 { return 1 }
      if nanoseconds <= 5_000_000 { return 2 }
      if nanoseconds <= 10_000_000 { return 3 }
      return nanoseconds <= 25_000_000 ? 4 : 5
    }
    if nanoseconds <= 1_000_000_000 {
      if nanoseconds <= 100_000_000 { return 6 }
      if nanoseconds <= 250_000_000 { return 7 }
      return nanoseconds <= 500_000_000 ? 8 : 9
    }
    if nanoseconds <= 2_500_000_000 { return 10 }
    if nanoseconds <= 5_000_000_000 { return 11 }
    if nanoseconds <= 10_000_000_000 { return 12 }
    if nanoseconds <= 30_000_000_000 { return 13 }
    return nanoseconds <= 60_000_000_000 ? 14 : 15
  }
}

extension RetryMetrics.RefusalCause {
  /// The cause's place among the refusal counters.
  var index: Int {
    switch self {
    case .breaker: 0
    case .budget: 1
    case .limit: 2
    case .throttle: 3
    case .rate: 4
    }
  }
}

extension RetryStopReason {
  /// Every reason of the core, in the order of ``metricsIndex``; the places after them are
  /// the refusals' (``RetryStopReason/retriesRefused(_:)``, see `RefusalSlots`).
  static let metricsCases: [RetryStopReason] = [
    .retriesExhausted, .errorNotMatched, .deadlineExceeded, .budgetExhausted, .cancelled,
    .hookFailed, .hedgeLimitReached, .circuitOpen, .throttled, .limitExceeded, .rateLimited,
  ]

  /// The counters of failed runs: one per reason of the core, one per place of a refusal.
  static let metricsCount = metricsCases.count + RefusalSlots.count

  /// The reason's place among the counters of failed runs.
  var metricsIndex: Int {
    switch self {
    case .retriesExhausted: 0
    case .errorNotMatched: 1
    case .deadlineExceeded: 2
    case .budgetExhausted: 3
    case .cancelled: 4
    case .hookFailed: 5
    case .hedgeLimitReached: 6
    case .circuitOpen: 7
    case .throttled: 8
    case .limitExceeded: 9
    case .rateLimited: 10
    case .retriesRefused(let refusal):
      Self.metricsCases.count + RefusalSlots.shared.slot(of: refusal)
    }
  }

  /// The reason at place `index` of the counters of failed runs, nil for a refusal's place
  /// no refusal has yet.
  static func metricsCase(at index: Int) -> RetryStopReason? {
    if index < metricsCases.count { return metricsCases[index] }
    return RefusalSlots.shared.refusal(atSlot: index - metricsCases.count).map {
      .retriesRefused($0)
    }
  }

  /// The reason's case name, as the `reason` label of `retry_policy_runs_total` in
  /// ``RetryMetrics`` gives it: `retriesExhausted`; for
  /// ``RetryStopReason/retriesRefused(_:)``, the refusal's own name (`notIdempotent`).
  public var caseName: String {
    switch self {
    case .retriesExhausted: "retriesExhausted"
    case .errorNotMatched: "errorNotMatched"
    case .deadlineExceeded: "deadlineExceeded"
    case .budgetExhausted: "budgetExhausted"
    case .cancelled: "cancelled"
    case .hookFailed: "hookFailed"
    case .hedgeLimitReached: "hedgeLimitReached"
    case .circuitOpen: "circuitOpen"
    case .throttled: "throttled"
    case .limitExceeded: "limitExceeded"
    case .rateLimited: "rateLimited"
    case .retriesRefused(let refusal): refusal.name
    }
  }
}
