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
/// clock, the system's continuous clock unless ``init(clock:)`` gives another.
///
/// The limit's kind and size are set by the first policy that uses the limiter; share a
/// limiter only between policies whose `limit` clauses agree. A limiter is safe to use from
/// any task; its state is kept behind a lock, except for `limit N` without `queue`, whose
/// attempts in flight are one atomic count: an attempt takes and gives back its slot without
/// the lock. Such a limit never has more than N attempts in flight. An attempt that finds
/// every slot taken counts itself for a few nanoseconds before it gives its count back and
/// asks once more; an attempt that asks in those nanoseconds, just as a slot is freed, may
/// count it too and be refused.
public final class ConcurrencyLimiter: @unchecked Sendable {
  // Sound: every stored `var` is written only while `lock` is held, and read with it held,
  // except `countedRefusal`, written once before `countedLimit` is published (releasing) and
  // read only after a load of it (acquiring) found it set; `counted` and `countedLimit` are
  // atomics.
  private let lock = NSLock()
  /// For `limit N` without `queue`: N, set once when the first policy configures the
  /// limiter; 0 for another kind of limit, or before.
  private let countedLimit = Atomic<Int>(0)
  /// For `limit N` without `queue`: the attempts holding a slot, alone on its cache lines
  /// (see ``CountedLimitSlot``); freed with the limiter.
  let counted: UnsafeMutablePointer<Atomic<Int>>
  /// For `limit N` without `queue`: the error of a refused first attempt, boxed once (a
  /// refusal then throws it without an allocation); set with `countedLimit`.
  private(set) var countedRefusal: any Error = LimitExceededError(limit: 0)
  private let clock: CircuitBreakerClock
  private var machine: ConcurrencyLimitStateMachine?
  private var controller: AdaptiveLimitController?
  /// Waiters that wait for their ticket, by ticket.
  private var continuations: [UInt64: CheckedContinuation<Bool, Never>] = [:]
  /// Tickets given a slot, or sent out of line, before their waiter began to wait.
  private var decided: [UInt64: Bool] = [:]

  /// What an attempt holds while it runs: when it started, for an adaptive limit.
  package struct Permit: Sendable, Hashable {
    /// The start, in nanoseconds on the limiter's clock (0 for a fixed limit).
    package var start: Int64
  }

  /// What happens to an attempt that asks for a slot.
  package enum Admission: Sendable, Hashable {
    /// It holds a slot.
    case admitted(Permit)
    /// It waits in line: call ``wait(for:until:on:)`` with the ticket.
    case queued(ticket: UInt64)
    /// It is refused; `limit` is the limit in force.
    case refused(limit: Int)
  }

  /// Creates a limiter on the system's continuous clock.
  public init() {
    clock = CircuitBreakerClock(clock: ContinuousClock())
    counted = Self.makeCount()
  }

  /// Creates a limiter that measures latency on `clock` (a test's manual clock).
  public init(clock: some Clock<Duration>) {
    self.clock = CircuitBreakerClock(clock: clock)
    counted = Self.makeCount()
  }

  /// Creates a limiter that reads the time from `now`: a simulation's virtual time.
  package init(reading now: @escaping @Sendable () -> Duration) {
    clock = CircuitBreakerClock(reading: now)
    counted = Self.makeCount()
  }

  deinit {
    counted.deinitialize(count: 1)
    UnsafeMutableRawPointer(counted).deallocate()
  }

  /// The bytes of the count of a counted limit: two cache lines of 64 bytes, aligned, so that
  /// neither another object's fields nor the next line (which processors fetch in pairs)
  /// share them, and runs on other cores write only the count.
  private static var countBytes: Int { 128 }

  private static func makeCount() -> UnsafeMutablePointer<Atomic<Int>> {
    let bytes = UnsafeMutableRawPointer.allocate(byteCount: countBytes, alignment: countBytes)
    let count = bytes.bindMemory(to: Atomic<Int>.self, capacity: 1)
    count.initialize(to: Atomic(0))
    return count
  }

  /// The limit in force: nil before a policy used the limiter.
  public var limit: Int? {
    lock.withLock { machine?.limit }
  }

  /// The attempts holding a slot now.
  public var inFlight: Int {
    if countedLimit.load(ordering: .acquiring) > 0 {
      return counted.pointee.load(ordering: .relaxed)
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
    lock.lock()
    if machine == nil { configure(policy) }
    fixed = countedLimit.load(ordering: .relaxed)
    if fixed > 0 {
      lock.unlock()
      return acquireCounted(limit: fixed)
    }
    let isAdaptive = controller != nil
    // In place: the state machine's line is never copied.
    guard let acquisition = machine?.acquire() else {
      lock.unlock()
      return .refused(limit: 0)
    }
    let limit = machine?.limit ?? 0
    lock.unlock()
    switch acquisition {
    case .admitted: return .admitted(Permit(start: isAdaptive ? clock.now() : 0))
    case .queued(let ticket): return .queued(ticket: ticket)
    case .refused: return .refused(limit: limit)
    }
  }

  /// Takes a slot of `limit N` without `queue` (see ``CountedLimitSlot/acquire()``).
  private func acquireCounted(limit: Int) -> Admission {
    Self.takeCounted(counted, limit: limit)
      ? .admitted(Permit(start: 0)) : .refused(limit: limit)
  }

  /// Takes a slot of a counted limit of `limit` whose attempts in flight `count` counts;
  /// returns whether it did.
  ///
  /// One atomic addition admits an attempt that finds a slot free. One that finds none gives
  /// its addition back, then asks again with a compare-and-exchange, which is refused only
  /// when the count it reads has every slot taken: a slot freed in between is taken.
  @inlinable
  static func takeCounted(_ count: UnsafeMutablePointer<Atomic<Int>>, limit: Int) -> Bool {
    if count.pointee.wrappingAdd(1, ordering: .acquiring).oldValue < limit { return true }
    return retakeCounted(count, limit: limit)
  }

  /// The end of ``takeCounted(_:limit:)`` for an attempt whose addition found every slot
  /// taken.
  @usableFromInline
  static func retakeCounted(_ count: UnsafeMutablePointer<Atomic<Int>>, limit: Int) -> Bool {
    count.pointee.wrappingSubtract(1, ordering: .relaxed)
    var current = count.pointee.load(ordering: .relaxed)
    while current < limit {
      let (exchanged, original) = count.pointee.weakCompareExchange(
        expected: current, desired: current &+ 1, successOrdering: .acquiring,
        failureOrdering: .relaxed)
      if exchanged { return true }
      current = original
    }
    return false
  }

  /// The limit of `limit N` without `queue` this limiter counts for a policy with `policy`,
  /// configuring it for `policy` when no policy used it yet; 0 when it keeps another kind of
  /// limit.
  func countedLimit(for policy: ConcurrencyLimitPolicy) -> Int {
    let fixed = countedLimit.load(ordering: .acquiring)
    if fixed > 0 { return fixed }
    return lock.withLock {
      if machine == nil { configure(policy) }
      return countedLimit.load(ordering: .relaxed)
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
    guard admitted else { return nil }
    let isAdaptive = lock.withLock { controller != nil }
    return Permit(start: isAdaptive ? self.clock.now() : 0)
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
    lock.lock()
    guard let inFlight = machine?.inFlight else {
      lock.unlock()
      return nil
    }
    var change: Int?
    if isMeasured, controller != nil {
      // In place: the controller's samples are never copied.
      change = controller?.record(start: permit.start, end: clock.now(), inFlight: inFlight)
    }
    var woken: [(CheckedContinuation<Bool, Never>, UInt64)] = []
    if let ticket = machine?.release() { collect(ticket, into: &woken) }
    if let change, let tickets = machine?.setLimit(change) {
      for ticket in tickets { collect(ticket, into: &woken) }
    }
    lock.unlock()
    for (continuation, _) in woken { continuation.resume(returning: true) }
    return change
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
      machine = ConcurrencyLimitStateMachine(limit: adaptive.limit, queue: 0)
    }
  }
}
