import Foundation
import Synchronization

/// The slots of a concurrency limit, owned and shared by the host: `limit N [queue M]` and
/// `limit adaptive [min A] [max B]`.
///
/// A policy with `limit` holds a slot for each attempt while it runs, and gives it back
/// however the attempt ends. With every slot taken, an attempt waits in line when the policy
/// has `queue M` and the line has room (first come, first served; it leaves the line when its
/// task is cancelled or when its wait would pass `within`), and is refused otherwise. A run
/// whose first attempt is refused throws ``LimitExceededError``; a run refused later throws
/// its last error.
///
///     let search = ConcurrencyLimiter()
///
/// With `limit adaptive`, the limit follows the latency of the attempts (see the grammar
/// reference: a gradient controller on their 90th percentile, with a calibration of the
/// unloaded latency after the first window and every 30 s); it is measured on the limiter's
/// clock, the system's monotonic clock unless ``init(clock:)`` gives another. While fewer
/// than 512 attempts ask in 100 ms, every attempt is timed; past that, one in a power of two
/// (at most one in 64), so that 256 or more are timed each 100 ms
/// (the controller keeps 256 samples a window): the stride is set again each 100 ms from the
/// attempts that asked.
///
/// The limit's kind and size are set by the first policy that uses the limiter; share a
/// limiter only between policies whose `limit` clauses agree. A limiter is safe to use from
/// any task; its state is kept behind a lock, except for `limit N` without `queue` and
/// `limit adaptive`, whose attempts in flight are one atomic count: an attempt takes and
/// gives back its slot without the lock (an adaptive limit takes it only to record a timed
/// attempt's latency, which may change the limit). Such a limit never has more than N (the
/// limit in force) attempts in flight, apart from attempts admitted before a lower limit
/// took effect. An attempt that finds
/// every slot taken counts itself for a few nanoseconds before it gives its count back and
/// asks once more; an attempt that asks in those nanoseconds, just as a slot is freed, may
/// count it too and be refused.
public final class ConcurrencyLimiter: @unchecked Sendable {
  // Sound: every stored `var` is written only while `lock` is held, and read with it held,
  // except `countedRefusal`, written once before `countedLimit` is published (releasing) and
  // read only after a load of it (acquiring) found it set; `counted`, `countedLimit` and
  // `control` are atomics.
  private let lock = NSLock()
  /// For `limit N` without `queue`: N, set once when the first policy configures the
  /// limiter; 0 for another kind of limit, or before.
  private let countedLimit = Atomic<Int>(0)
  /// The attempts holding a slot of `limit N` without `queue` or `limit adaptive`.
  ///
  /// For `limit N` without `queue`: the attempts holding a slot, alone on its cache lines
  /// (see ``CountedLimitSlot``); freed with the limiter. For `limit adaptive`: the attempts
  /// holding a slot in the low 32 bits, and in the high bits the attempts that asked for one,
  /// wrapping (an attempt refused gives its count back): an attempt is timed when that
  /// number, masked by the stride's mask, is 0.
  let counted: UnsafeMutablePointer<Atomic<Int>>
  /// The control word of `limit adaptive`: the limit in force and the timing stride.
  ///
  /// For `limit adaptive`: the limit in force in the low 32 bits, and in the high bits the
  /// mask of the timing stride (a power of two less one); 0 for another kind of limit, or
  /// before a policy configured the limiter. Written with the lock held, read without it; on
  /// cache lines of its own after the count's, in the same memory.
  let control: UnsafeMutablePointer<Atomic<Int>>
  /// For `limit adaptive`: the error of a refused first attempt, boxed once for the limit it
  /// names (a refusal then throws it without an allocation).
  private var adaptiveRefusal: (limit: Int, error: any Error)?
  /// For `limit adaptive`: when the attempts that asked were last counted for the stride,
  /// and their number then (the high bits of `counted`).
  private var strideCount: (since: Int64, asked: Int)?
  /// For `limit N` without `queue`: the error of a refused first attempt, boxed once (a
  /// refusal then throws it without an allocation); set with `countedLimit`.
  private(set) var countedRefusal: any Error = LimitExceededError(limit: 0)
  /// The clock latency is measured on: a host's (a test's manual clock, a simulation's
  /// virtual time), or nil for the system's monotonic clock, read in whole nanoseconds since
  /// `origin` (no `Duration` to convert).
  private let hostClock: CircuitBreakerClock?
  /// When the limiter was made on the system's monotonic clock.
  private let origin: Int64
  private var machine: ConcurrencyLimitStateMachine?
  private var controller: AdaptiveLimitController?
  /// Waiters that wait for their ticket, by ticket.
  private var continuations: [UInt64: CheckedContinuation<Bool, Never>] = [:]
  /// Tickets given a slot, or sent out of line, before their waiter began to wait.
  private var decided: [UInt64: Bool] = [:]

  /// What an attempt holds while it runs: when it started, for an adaptive limit that times
  /// it.
  package struct Permit: Sendable, Hashable {
    /// The start, in nanoseconds on the limiter's clock; ``untimed`` for a fixed limit, and
    /// for an attempt of an adaptive limit that is not timed.
    package var start: Int64

    /// The start of an attempt whose latency is not measured.
    package static var untimed: Int64 { ConcurrencyLimiter.untimed }

    /// Whether the attempt's latency is measured.
    @inlinable
    var isTimed: Bool { start != Self.untimed }
  }

  /// The longest timing stride of an adaptive limit: it times at least one attempt in 64.
  static let maximumTimingStride = 64
  /// The attempts an adaptive limit times each 100 ms, at least, once it times one in
  /// several: the samples its controller keeps a window.
  static let timedPerWindow = AdaptiveLimitController.sampleCapacity
  /// The start of an attempt whose latency is not measured (``Permit/untimed``).
  @inlinable
  static var untimed: Int64 { .min }
  /// The low 32 bits of `counted` and `control`.
  @inlinable
  static var lowBits: Int { 0xFFFF_FFFF }
  /// What an adaptive attempt that asks adds to `counted`: one in flight, one that asked.
  @inlinable
  static var adaptiveAsk: Int { 1 &+ (1 << 32) }

  /// What happens to an attempt that asks for a slot.
  package enum Admission: Sendable, Hashable {
    /// It holds a slot.
    case admitted(Permit)
    /// It waits in line: call ``wait(for:until:on:)`` with the ticket.
    case queued(ticket: UInt64)
    /// It is refused; `limit` is the limit in force.
    case refused(limit: Int)
  }

  /// Creates a limiter that measures latency on the system's monotonic clock.
  public init() {
    if let now = platformMonotonicNanoseconds() {
      hostClock = nil
      origin = now
    } else {
      hostClock = CircuitBreakerClock(clock: ContinuousClock())
      origin = 0
    }
    (counted, control) = Self.makeCount()
  }

  /// Creates a limiter that measures latency on `clock` (a test's manual clock).
  public init(clock: some Clock<Duration>) {
    hostClock = CircuitBreakerClock(clock: clock)
    origin = 0
    (counted, control) = Self.makeCount()
  }

  /// Creates a limiter that reads the time from `now`: a simulation's virtual time.
  package init(reading now: @escaping @Sendable () -> Duration) {
    hostClock = CircuitBreakerClock(reading: now)
    origin = 0
    (counted, control) = Self.makeCount()
  }

  deinit {
    control.deinitialize(count: 1)
    counted.deinitialize(count: 1)
    UnsafeMutableRawPointer(counted).deallocate()
  }

  /// The bytes of the count of a counted limit: two cache lines of 64 bytes, aligned, so that
  /// neither another object's fields nor the next line (which processors fetch in pairs)
  /// share them, and runs on other cores write only the count; then two more for the control
  /// word of an adaptive limit, which they only read.
  private static var countBytes: Int { 256 }

  private static func makeCount() -> (
    count: UnsafeMutablePointer<Atomic<Int>>, control: UnsafeMutablePointer<Atomic<Int>>
  ) {
    let bytes = UnsafeMutableRawPointer.allocate(byteCount: countBytes, alignment: 128)
    let count = bytes.bindMemory(to: Atomic<Int>.self, capacity: 1)
    count.initialize(to: Atomic(0))
    let control = (bytes + 128).bindMemory(to: Atomic<Int>.self, capacity: 1)
    control.initialize(to: Atomic(0))
    return (count, control)
  }

  /// The limit in force: nil before a policy used the limiter.
  public var limit: Int? {
    let adaptive = control.pointee.load(ordering: .acquiring)
    if adaptive != 0 { return adaptive & Self.lowBits }
    return lock.withLock { machine?.limit }
  }

  /// The attempts holding a slot now.
  public var inFlight: Int {
    if countedLimit.load(ordering: .acquiring) > 0 {
      return counted.pointee.load(ordering: .relaxed)
    }
    if control.pointee.load(ordering: .acquiring) != 0 {
      return counted.pointee.load(ordering: .relaxed) & Self.lowBits
    }
    return lock.withLock { machine?.inFlight ?? 0 }
  }

  /// The attempts waiting in line now.
  public var waiting: Int {
    lock.withLock { machine?.waiting ?? 0 }
  }

  /// Asks for a slot for an attempt of a policy with `policy`.
  package func acquire(policy: ConcurrencyLimitPolicy) -> Admission {
    var fixed = countedLimit.load(ordering: .acquiring)
    if fixed > 0 { return acquireCounted(limit: fixed) }
    var adaptive = control.pointee.load(ordering: .relaxed)
    if adaptive != 0 { return acquireAdaptive(adaptive) }
    lock.lock()
    if machine == nil, controller == nil { configure(policy) }
    fixed = countedLimit.load(ordering: .relaxed)
    if fixed > 0 {
      lock.unlock()
      return acquireCounted(limit: fixed)
    }
    adaptive = control.pointee.load(ordering: .relaxed)
    if adaptive != 0 {
      lock.unlock()
      return acquireAdaptive(adaptive)
    }
    // In place: the state machine's line is never copied.
    guard let acquisition = machine?.acquire() else {
      lock.unlock()
      return .refused(limit: 0)
    }
    let limit = machine?.limit ?? 0
    lock.unlock()
    switch acquisition {
    case .admitted: return .admitted(Permit(start: Permit.untimed))
    case .queued(let ticket): return .queued(ticket: ticket)
    case .refused: return .refused(limit: limit)
    }
  }

  /// Takes a slot of `limit N` without `queue` (see ``CountedLimitSlot/acquire()``).
  private func acquireCounted(limit: Int) -> Admission {
    Self.takeCounted(counted, limit: limit)
      ? .admitted(Permit(start: Permit.untimed)) : .refused(limit: limit)
  }

  /// Takes a slot of `limit adaptive`, whose limit and timing stride are `control`: one
  /// atomic addition when a slot is free, and a reading of the clock when the attempt is
  /// timed.
  ///
  /// An attempt that finds every slot taken gives its addition back and asks again, as
  /// ``takeCounted(_:limit:)`` does.
  private func acquireAdaptive(_ control: Int) -> Admission {
    let limit = control & Self.lowBits
    let before = counted.pointee.wrappingAdd(Self.adaptiveAsk, ordering: .acquiring).oldValue
    guard before & Self.lowBits < limit || Self.retakeAdaptive(counted, limit: limit) else {
      return .refused(limit: limit)
    }
    return .admitted(Permit(start: Self.isTimed(before, control) ? now() : Permit.untimed))
  }

  /// The limit of `limit N` without `queue` this limiter counts for a policy with `policy`,
  /// configuring it for `policy` when no policy used it yet; 0 when it keeps another kind of
  /// limit.
  func countedLimit(for policy: ConcurrencyLimitPolicy) -> Int {
    let fixed = countedLimit.load(ordering: .acquiring)
    if fixed > 0 { return fixed }
    return lock.withLock {
      if machine == nil, controller == nil { configure(policy) }
      return countedLimit.load(ordering: .relaxed)
    }
  }

  /// Whether this limiter keeps `limit adaptive`, configuring it for `policy` when no policy
  /// used it yet.
  func isAdaptive(for policy: ConcurrencyLimitPolicy) -> Bool {
    if control.pointee.load(ordering: .acquiring) != 0 { return true }
    return lock.withLock {
      if machine == nil, controller == nil { configure(policy) }
      return control.pointee.load(ordering: .relaxed) != 0
    }
  }

  /// Waits in line under `ticket`; returns the permit once a slot is free, or nil when the
  /// wait ended first: the task was cancelled, or `deadline` passed on `clock`.
  package func wait<C: Clock<Duration>>(
    for ticket: UInt64, until deadline: C.Instant?, on clock: C
  ) async -> Permit? {
    var timer: Task<Void, Never>?
    if let deadline {
      timer = Task { [self] in
        do {
          try await clock.sleep(until: deadline, tolerance: nil)
          leave(ticket)
        } catch {}
      }
    }
    let admitted = await withTaskCancellationHandler {
      await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
        lock.lock()
        if let outcome = decided.removeValue(forKey: ticket) {
          lock.unlock()
          continuation.resume(returning: outcome)
          return
        }
        if Task.isCancelled, machine?.leave(ticket) == true {
          lock.unlock()
          continuation.resume(returning: false)
          return
        }
        continuations[ticket] = continuation
        lock.unlock()
      }
    } onCancel: {
      leave(ticket)
    }
    timer?.cancel()
    // Only `limit N queue M` has a line: the attempt is not timed.
    return admitted ? Permit(start: Permit.untimed) : nil
  }

  /// Sends `ticket` out of line, when it still waits.
  package func leave(_ ticket: UInt64) {
    lock.lock()
    guard machine?.leave(ticket) == true else {
      lock.unlock()
      return
    }
    let continuation = continuations.removeValue(forKey: ticket)
    if continuation == nil { decided[ticket] = false }
    lock.unlock()
    continuation?.resume(returning: false)
  }

  /// Gives back the slot of an attempt that ended; returns an adaptive limit's new value.
  ///
  /// `isMeasured` when its latency counts for an adaptive limit (it was not cancelled). The
  /// value returned is nil unless an adaptive limit changed.
  @discardableResult
  package func release(_ permit: Permit, isMeasured: Bool = true) -> Int? {
    if countedLimit.load(ordering: .relaxed) > 0 {
      counted.pointee.wrappingSubtract(1, ordering: .releasing)
      return nil
    }
    if control.pointee.load(ordering: .relaxed) != 0 {
      return releaseAdaptive(permit, isMeasured: isMeasured)
    }
    lock.lock()
    var woken: [(CheckedContinuation<Bool, Never>, UInt64)] = []
    if let ticket = machine?.release() { collect(ticket, into: &woken) }
    lock.unlock()
    for (continuation, _) in woken { continuation.resume(returning: true) }
    return nil
  }

  /// Gives back a slot of `limit adaptive`: one atomic subtraction, and for a timed attempt
  /// whose latency counts, the controller's sample under the lock; returns the new limit when
  /// it changed.
  private func releaseAdaptive(_ permit: Permit, isMeasured: Bool) -> Int? {
    let before = counted.pointee.wrappingSubtract(1, ordering: .releasing).oldValue
    guard isMeasured, permit.isTimed else { return nil }
    return record(start: permit.start, inFlight: before & Self.lowBits)
  }

  /// The start of an adaptive attempt that is timed: now on the limiter's clock.
  @usableFromInline
  func timedStart() -> Int64 {
    now()
  }

  /// Now, in nanoseconds on the limiter's clock (never negative).
  private func now() -> Int64 {
    guard let hostClock else {
      let elapsed = (platformMonotonicNanoseconds() ?? origin) &- origin
      return elapsed > 0 ? elapsed : 0
    }
    return hostClock.now()
  }

  /// The error that refuses an attempt under an adaptive limit of `limit`: boxed once for
  /// each limit in force, and kept.
  @usableFromInline
  func adaptiveRefusal(limit: Int) -> any Error {
    lock.lock()
    defer { lock.unlock() }
    if let kept = adaptiveRefusal, kept.limit == limit { return kept.error }
    let error: any Error = LimitExceededError(limit: limit)
    adaptiveRefusal = (limit, error)
    return error
  }

  /// Records the latency of an adaptive attempt that started at `start` and ends now, with
  /// `inFlight` attempts in flight (itself included); returns the new limit when it changed.
  @usableFromInline
  @discardableResult
  func record(start: Int64, inFlight: Int) -> Int? {
    let end = now()
    lock.lock()
    // In place: the controller's samples are never copied.
    let change = controller?.record(start: start, end: end, inFlight: inFlight)
    let limit = controller?.limit ?? 1
    let mask = timingMask(at: end)
    control.pointee.store(limit | (mask << 32), ordering: .releasing)
    lock.unlock()
    return change
  }

  /// Called with the lock held at a timed attempt's end, `now`: the mask of the timing
  /// stride, set again from the attempts that asked when 100 ms passed since it was last.
  private func timingMask(at now: Int64) -> Int {
    let mask = control.pointee.load(ordering: .relaxed) >> 32
    let asked = (counted.pointee.load(ordering: .relaxed) >> 32) & Self.lowBits
    guard let last = strideCount else {
      strideCount = (now, asked)
      return mask
    }
    let elapsed = now.subtractingClamped(last.since)
    guard elapsed >= AdaptiveLimitController.minimumWindow else { return mask }
    strideCount = (now, asked)
    return Self.timingMask(
      asked: (asked &- last.asked) & Self.lowBits, overNanoseconds: elapsed)
  }

  /// Called with the lock held: the waiter of `ticket` gets its slot.
  private func collect(
    _ ticket: UInt64, into woken: inout [(CheckedContinuation<Bool, Never>, UInt64)]
  ) {
    if let continuation = continuations.removeValue(forKey: ticket) {
      woken.append((continuation, ticket))
    } else {
      decided[ticket] = true
    }
  }

  /// Called with the lock held: sets the limit up for the first policy that uses it.
  private func configure(_ policy: ConcurrencyLimitPolicy) {
    switch policy {
    case .fixed(let limit, let queue):
      let fixed = ConcurrencyLimitStateMachine(limit: limit, queue: queue)
      machine = fixed
      if fixed.queueCapacity == 0 {
        countedRefusal = LimitExceededError(limit: fixed.limit)
        countedLimit.store(fixed.limit, ordering: .releasing)
      }
    case .adaptive(let minimum, let maximum):
      let adaptive = AdaptiveLimitController(minimum: minimum, maximum: maximum)
      controller = adaptive
      // Published last: a run that finds it set needs nothing else.
      control.pointee.store(adaptive.limit, ordering: .releasing)
    }
  }
}
