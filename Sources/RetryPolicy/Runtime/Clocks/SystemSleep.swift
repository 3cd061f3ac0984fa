import Dispatch
import Foundation
import Synchronization

// Waits that free their memory when they end, however they end, and cost little while they
// last.
//
// On Linux, a cancelled `Task.sleep` (and so `ContinuousClock.sleep`) resumes its task at
// once but keeps its timer, about 0.7 KB, until the deadline it was given: a run cancelled
// during `delay 1h`, or a hedge timer cut short by a winning attempt, held that memory for an
// hour. On the continuous and suspending clocks every wait of the runtime (a retry's delay, a
// Retry-After wait, a hedge timer, a `timeout` timer) is therefore an entry in one timer heap
// for the process (``SystemTimerHeap``): a deadline and the waiting task's continuation, some
// 50 bytes, behind a single Dispatch timer set to the earliest deadline (rounded up to the
// millisecond, so that the waits due within one end together). Cancellation takes
// the continuation out and resumes it at once. Other clocks keep their own `sleep`:
// `ManualClock` frees a cancelled sleeper at once.

/// Sleeps `duration` on `clock`, freeing its timer as soon as the wait ends.
///
/// On the continuous and suspending clocks the wait is an entry of the process's timer heap
/// that cancellation removes at once; throws `CancellationError` when cancelled.
nonisolated(nonsending) func sleepFreeingOnCancel<C: Clock<Duration>>(
  for duration: Duration, on clock: C
) async throws {
  guard isSystemClock(C.self) else {
    try await clock.sleep(for: duration)
    return
  }
  try await sleepOnTimer(for: duration)
}

/// Whether `C` is the continuous or the suspending clock: types compared, not a cast of the
/// clock (a cast of another clock type, a class such as a test's clock, costs a dynamic cast
/// on every wait).
@inlinable
@inline(__always)
func isSystemClock<C: Clock<Duration>>(_: C.Type) -> Bool {
  let type = ObjectIdentifier(C.self)
  return type == ObjectIdentifier(ContinuousRunClock.self)
    || type == ObjectIdentifier(ContinuousClock.self)
    || type == ObjectIdentifier(SuspendingClock.self)
}

/// The continuous clock as the driver of a run sees it: the same time as `ContinuousClock`,
/// with instants of a fixed layout.
///
/// `ContinuousClock` and its `Instant` come from a module built for library evolution: in a
/// driver specialized for it, each instant is a task allocation of a size known only at run
/// time, each reading of the clock a call through the protocol's witness table, and each of
/// their type's metadata a value kept in the driver's frame. A run waiting for its retry holds
/// all of them. This clock's instants are a `Duration` since a fixed instant of the process;
/// it waits as `ContinuousClock` does.
@usableFromInline
package struct ContinuousRunClock: Clock {
  /// A time on the clock: the time since ``origin``.
  @usableFromInline
  package struct Instant: InstantProtocol {
    /// The time since ``ContinuousRunClock/origin``.
    @usableFromInline let offset: Duration

    @usableFromInline
    init(offset: Duration) {
      self.offset = offset
    }

    /// The instant `duration` later (at most about 8.9 billion years from the origin).
    @usableFromInline
    package func advanced(by duration: Duration) -> Instant {
      Instant(offset: offset.addingClamped(duration))
    }

    /// The time from this instant to `other`.
    @usableFromInline
    package func duration(to other: Instant) -> Duration {
      other.offset.subtractingClamped(offset)
    }

    @usableFromInline
    package static func < (lhs: Instant, rhs: Instant) -> Bool {
      lhs.offset < rhs.offset
    }
  }

  /// The instant of the process the clock counts from.
  static let origin = ContinuousClock.now

  /// The clock.
  @inlinable
  package init() {}

  /// Now, read on `ContinuousClock`.
  @usableFromInline
  package var now: Instant {
    Instant(offset: Self.origin.duration(to: .now))
  }

  @usableFromInline
  package var minimumResolution: Duration {
    ContinuousClock().minimumResolution
  }

  /// Sleeps until `deadline` on `ContinuousClock`.
  @usableFromInline
  package func sleep(until deadline: Instant, tolerance: Duration?) async throws {
    try await ContinuousClock().sleep(
      until: Self.origin.advanced(by: deadline.offset), tolerance: tolerance)
  }
}

/// Sleeps `duration` in the process's timer heap, freed when it ends or is cancelled.
///
/// Inlined into its caller: while a run waits, every async frame from the run down to the
/// continuation stays allocated, and past the task's first slab (984 bytes) each new slab
/// costs about a kilobyte. Inlined, the wait adds only the cancellation handler's frame and
/// one small closure's to the caller's.
@inlinable
@inline(__always)
nonisolated(nonsending) func sleepOnTimer(for duration: Duration) async throws {
  let heap = SystemTimerHeap.shared
  let wait = heap.prepare(for: duration)
  try await withTaskCancellationHandler {
    try await withUnsafeThrowingContinuation { continuation in
      heap.insert(wait, continuation)
    }
  } onCancel: {
    heap.cancel(id: wait.id)
  }
}

extension RetryRun {
  /// Sleeps `delay` on the process's timer heap, timed without an instant of the run's clock;
  /// throws as ``perform(_:after:in:on:)`` does.
  ///
  /// Small and not generic, because a waiting run holds every frame down to its wait: in a
  /// driver generic over the clock, each instant of the clock is a task allocation of its own,
  /// and past the task's first slab (984 bytes) each new slab costs about a kilobyte.
  @usableFromInline
  nonisolated(nonsending) mutating func waitOnTimer(
    _ delay: Duration, after error: any Error, in environment: RetryEnvironment
  ) async throws {
    let start = ContinuousClock.now
    do {
      try await sleepOnTimer(for: delay)
    } catch {
      throw stopCancelled(waiting: delay, since: start, error, in: environment)
    }
    addWaited(delay)
    if Task.isCancelled { throw stopCancelled(waiting: delay, since: nil, error, in: environment) }
  }

  /// Ends the run as cancelled after a wait of `delay`, and returns the error to throw.
  ///
  /// Counts the part of the wait that passed since `start` (nil: all of it, counted already).
  /// Never inlined, so that the event it reports takes no room in the waiting frame.
  @inline(never)
  mutating func stopCancelled(
    waiting delay: Duration, since start: ContinuousClock.Instant?, _ error: any Error,
    in environment: RetryEnvironment
  ) -> any Error {
    if let start {
      addWaited(delay, remaining: delay.subtractingClamped(start.duration(to: .now)))
    }
    return stop(.cancelled, error, in: environment)
  }
}

/// Sleeps until `deadline` on `clock`, as ``sleepFreeingOnCancel(for:on:)`` does: on the
/// system clocks for the time left until the deadline, measured now.
@inlinable
nonisolated(nonsending) func sleepFreeingOnCancel<C: Clock<Duration>>(
  until deadline: C.Instant, on clock: C
) async throws {
  guard isSystemClock(C.self) else {
    try await clock.sleep(until: deadline, tolerance: nil)
    return
  }
  try await sleepOnTimer(for: clock.now.duration(to: deadline))
}

/// Counts the system timers armed by the waits of a task and its child tasks, and those not
/// yet freed: how tests see that a wait frees its timer when it ends.
///
///     let census = SystemTimerCensus()
///     try await SystemTimerCensus.$current.withValue(census) { try await policy.run { … } }
///     census.live  // 0 once every wait has ended
package final class SystemTimerCensus: Sendable {
  /// The census the current task's waits report to, if any.
  @TaskLocal package static var current: SystemTimerCensus?

  // `Locked`, not `Mutex`: ThreadSanitizer sees it (see ProcessWideState.md).
  private let counts = Locked((armed: 0, live: 0))

  /// Creates an empty census.
  package init() {}

  /// The timers armed so far.
  package var armed: Int { counts.withLock { $0.armed } }
  /// The timers armed and not yet freed.
  package var live: Int { counts.withLock { $0.live } }

  fileprivate func timerArmed() {
    counts.withLock {
      $0.armed += 1; $0.live += 1
    }
  }
  fileprivate func timerFreed() { counts.withLock { $0.live -= 1 } }
}

/// One timer for every wait of the process on the system clocks: a min-heap of deadlines,
/// with the waiting continuations by number, behind one Dispatch timer set to the earliest
/// deadline's next whole millisecond.
///
/// A wait costs an entry of the heap and one of the table of continuations, instead of a
/// Dispatch timer of its own. Cancellation takes the continuation out of the table and
/// resumes it at once; its heap entry, 16 bytes, goes when the heap is next compacted (when
/// more than half of it is such entries) or when its deadline comes. Deadlines are on
/// Dispatch's monotonic clock, as the timers of each wait were.
@usableFromInline
package final class SystemTimerHeap: @unchecked Sendable {
  // Sound: `state` is a `Locked`; `timer` is set up in `init` and afterwards only
  // rescheduled, always while `state`'s lock is held; `ids` is atomic.

  /// The heap of the process.
  @usableFromInline
  package static let shared = SystemTimerHeap()

  /// A wait in the heap: its deadline in Dispatch uptime nanoseconds, and its number.
  fileprivate struct Entry: Sendable {
    var deadline: UInt64
    var id: UInt64
  }

  /// A waiting task.
  fileprivate struct Waiter: Sendable {
    var continuation: UnsafeContinuation<Void, any Error>
    var census: SystemTimerCensus?
  }

  fileprivate struct State: Sendable {
    /// A binary min-heap by deadline, then number.
    var heap: [Entry] = []
    /// The waits not yet ended, by number.
    var waiters: [UInt64: Waiter] = [:]
    /// The deadline the Dispatch timer is set to; `UInt64.max` for none.
    var armedDeadline = UInt64.max
  }

  // `Locked` (an `NSLock`), not `Mutex`: ThreadSanitizer sees it (see ProcessWideState.md).
  private let state = Locked(State())
  private let ids = Atomic<UInt64>(0)
  private let timer: any DispatchSourceTimer

  private init() {
    timer = DispatchSource.makeTimerSource(
      queue: DispatchQueue(label: "RetryPolicy.SystemTimerHeap", qos: .userInitiated))
    timer.setEventHandler { [self] in fire() }
    timer.resume()
  }

  /// A wait about to start: its number, its deadline and the census it reports to.
  @usableFromInline
  struct PendingWait: Sendable {
    @usableFromInline let id: UInt64
    let deadline: UInt64
    let census: SystemTimerCensus?
  }

  /// Sleeps `duration` (a century or more: until cancelled).
  ///
  /// Throws `CancellationError` when the task is cancelled, at once. The waits of runs use
  /// ``sleepOnTimer(for:)``, which is this inlined.
  nonisolated(nonsending) package func sleep(
    for duration: Duration, census: SystemTimerCensus?
  ) async throws {
    let wait = prepare(for: duration, census: census)
    try await withTaskCancellationHandler {
      try await withUnsafeThrowingContinuation { continuation in
        insert(wait, continuation)
      }
    } onCancel: {
      cancel(id: wait.id)
    }
  }

  /// Numbers a wait of `duration` from now and counts it in the current task's census.
  @usableFromInline
  func prepare(for duration: Duration) -> PendingWait {
    prepare(for: duration, census: SystemTimerCensus.current)
  }

  /// Numbers a wait of `duration` from now and counts it in `census`.
  func prepare(for duration: Duration, census: SystemTimerCensus?) -> PendingWait {
    let deadline = Self.deadline(after: duration)
    let id = ids.wrappingAdd(1, ordering: .relaxed).newValue
    census?.timerArmed()
    return PendingWait(id: id, deadline: deadline, census: census)
  }

  /// Adds a wait, unless its task is already cancelled (then it ends at once).
  @usableFromInline
  func insert(_ wait: PendingWait, _ continuation: UnsafeContinuation<Void, any Error>) {
    let id = wait.id
    let deadline = wait.deadline
    let waiter = Waiter(continuation: continuation, census: wait.census)
    // Checked under the lock: a cancellation either comes before (seen here) or finds the
    // waiter in the table.
    let isCancelled = state.withLock { state -> Bool in
      if Task.isCancelled { return true }
      state.waiters[id] = waiter
      state.push(Entry(deadline: deadline, id: id))
      let firing = Self.firing(for: deadline)
      if firing < state.armedDeadline {
        state.armedDeadline = firing
        timer.schedule(deadline: DispatchTime(uptimeNanoseconds: firing))
      }
      return false
    }
    guard isCancelled else { return }
    waiter.census?.timerFreed()
    waiter.continuation.resume(throwing: CancellationError())
  }

  /// Ends the wait `id` as cancelled, if it has not ended.
  @usableFromInline
  func cancel(id: UInt64) {
    let waiter = state.withLock { state -> Waiter? in
      guard let waiter = state.waiters.removeValue(forKey: id) else { return nil }
      state.compactIfMostlyEnded()
      return waiter
    }
    guard let waiter else { return }
    waiter.census?.timerFreed()
    waiter.continuation.resume(throwing: CancellationError())
  }

  /// Ends every wait whose deadline has come, and sets the timer to the next deadline.
  private func fire() {
    let now = DispatchTime.now().uptimeNanoseconds
    let due = state.withLock { state -> [Waiter] in
      var due: [Waiter] = []
      while let first = state.heap.first, first.deadline <= now {
        state.popFirst()
        if let waiter = state.waiters.removeValue(forKey: first.id) { due.append(waiter) }
      }
      state.compactIfMostlyEnded()
      state.armedDeadline = state.heap.first.map { Self.firing(for: $0.deadline) } ?? .max
      if state.armedDeadline != .max {
        timer.schedule(deadline: DispatchTime(uptimeNanoseconds: state.armedDeadline))
      }
      return due
    }
    for waiter in due {
      // Counted as freed before the task resumes, so that the task sees its wait gone.
      waiter.census?.timerFreed()
      waiter.continuation.resume()
    }
  }

  /// When the timer fires for a wait due at `deadline`: the next whole millisecond.
  ///
  /// The waits due within one millisecond of the uptime clock then end in one firing, not one
  /// each (100,000 runs started over a second otherwise wake the timer every few
  /// microseconds). A wait never ends before its deadline, and at most a millisecond after.
  private static func firing(for deadline: UInt64) -> UInt64 {
    let quantum: UInt64 = 1_000_000
    let (rounded, overflow) = deadline.addingReportingOverflow(quantum - 1)
    return overflow ? .max : rounded / quantum * quantum
  }

  /// The deadline `duration` from now, in Dispatch uptime nanoseconds; `UInt64.max` (never)
  /// for a century or more.
  private static func deadline(after duration: Duration) -> UInt64 {
    let (seconds, attoseconds) = duration.components
    let now = DispatchTime.now().uptimeNanoseconds
    guard seconds >= 0, attoseconds >= 0 else { return now }
    guard seconds < 100 * 365 * 86_400 else { return .max }
    let nanoseconds = UInt64(seconds) * 1_000_000_000 + UInt64(attoseconds / 1_000_000_000)
    let (sum, overflow) = now.addingReportingOverflow(nanoseconds)
    return overflow ? .max : sum
  }

  /// The waits in the heap, ended or not, and those not ended: for tests.
  package var counts: (entries: Int, waiting: Int) {
    state.withLock { ($0.heap.count, $0.waiters.count) }
  }
}

extension SystemTimerHeap.State {
  /// Whether `a` comes before `b`: by deadline, then by number.
  private static func precedes(_ a: SystemTimerHeap.Entry, _ b: SystemTimerHeap.Entry) -> Bool {
    a.deadline != b.deadline ? a.deadline < b.deadline : a.id < b.id
  }

  fileprivate mutating func push(_ entry: SystemTimerHeap.Entry) {
    heap.append(entry)
    var child = heap.count - 1
    while child > 0 {
      let parent = (child - 1) / 2
      guard Self.precedes(heap[child], heap[parent]) else { break }
      heap.swapAt(child, parent)
      child = parent
    }
  }

  fileprivate mutating func popFirst() {
    guard let last = heap.popLast() else { return }
    guard !heap.isEmpty else { return }
    heap[0] = last
    siftDown(from: 0)
  }

  private mutating func siftDown(from start: Int) {
    var parent = start
    while true {
      let left = 2 * parent + 1
      guard left < heap.count else { return }
      let right = left + 1
      let child = right < heap.count && Self.precedes(heap[right], heap[left]) ? right : left
      guard Self.precedes(heap[child], heap[parent]) else { return }
      heap.swapAt(child, parent)
      parent = child
    }
  }

  /// Drops the entries of ended waits when they are more than half of the heap, and gives
  /// back the memory of a heap that emptied after a burst of waits.
  fileprivate mutating func compactIfMostlyEnded() {
    if waiters.isEmpty {
      if heap.capacity > 1024 { heap = [] } else { heap.removeAll(keepingCapacity: true) }
      if waiters.capacity > 1024 { waiters = [:] }
      return
    }
    guard heap.count >= 64, heap.count > 2 * waiters.count else { return }
    heap = heap.filter { waiters[$0.id] != nil }
    if waiters.capacity > 4 * waiters.count + 1024 {
      var kept = [UInt64: SystemTimerHeap.Waiter](minimumCapacity: waiters.count)
      for (id, waiter) in waiters { kept[id] = waiter }
      waiters = kept
    }
    var index = heap.count / 2
    while index > 0 {
      index -= 1
      siftDown(from: index)
    }
  }
}
