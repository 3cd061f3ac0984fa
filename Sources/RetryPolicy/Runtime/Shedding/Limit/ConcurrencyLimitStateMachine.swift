/// The slots and the line of a concurrency limit, as a pure state machine: `limit N queue M`.
///
/// It performs nothing: no clock, no lock, no waking. ``ConcurrencyLimiter`` keeps it behind a
/// lock and wakes the waiters whose tickets it returns.
///
/// - an attempt takes a free slot at once (``acquire()`` returns `.admitted`);
/// - with every slot taken, it joins the line when the line has room (`.queued(ticket)`), and
///   is refused otherwise;
/// - a released slot goes to the head of the line (first come, first served);
/// - a waiter leaves the line when its task is cancelled or its wait would pass `within`
///   (``leave(_:)``); a ticket that already holds its slot cannot leave, so its slot must be
///   released;
/// - a change of the limit (``setLimit(_:)``, an adaptive limit's) admits waiters when slots
///   are freed by it; a lower limit takes effect as attempts end.
package struct ConcurrencyLimitStateMachine: Sendable {
  /// What happens to an attempt that asks for a slot.
  package enum Acquisition: Sendable, Hashable {
    /// It holds a slot now.
    case admitted
    /// It waits in line under this ticket until ``release()`` or ``setLimit(_:)`` returns it.
    case queued(ticket: UInt64)
    /// Every slot and every place in line is taken.
    case refused
  }

  /// The most attempts in flight.
  package private(set) var limit: Int
  /// The most attempts waiting in line.
  package let queueCapacity: Int
  /// The attempts holding a slot.
  package private(set) var inFlight = 0
  /// The attempts waiting in line.
  package private(set) var waiting = 0

  /// The line: tickets in order of arrival, 0 for one that left; `head` is the first place
  /// still in use.
  private var line: [UInt64] = []
  private var head = 0
  private var lastTicket: UInt64 = 0

  /// A limit of `limit` slots (at least 1) and a line of `queue` places (at least 0).
  package init(limit: Int, queue: Int) {
    self.limit = Swift.max(limit, 1)
    self.queueCapacity = Swift.max(queue, 0)
  }

  /// Asks for a slot.
  package mutating func acquire() -> Acquisition {
    if inFlight < limit, waiting == 0 {
      inFlight += 1
      return .admitted
    }
    guard waiting < queueCapacity else { return .refused }
    lastTicket = lastTicket == .max ? 1 : lastTicket + 1
    if head > 0, head == line.count {
      line.removeAll(keepingCapacity: true)
      head = 0
    }
    line.append(lastTicket)
    waiting += 1
    return .queued(ticket: lastTicket)
  }

  /// Gives a slot back; returns the ticket of the waiter that takes it, if any.
  package mutating func release() -> UInt64? {
    inFlight = Swift.max(inFlight - 1, 0)
    return admitNext()
  }

  /// Removes a waiter from the line; false when the ticket is not waiting (it holds its slot
  /// already, or left before).
  package mutating func leave(_ ticket: UInt64) -> Bool {
    guard ticket != 0, waiting > 0 else { return false }
    var index = head
    while index < line.count {
      if line[index] == ticket {
        line[index] = 0
        waiting -= 1
        skipLeavers()
        return true
      }
      index += 1
    }
    return false
  }

  /// Changes the limit (clamped to at least 1); returns the tickets of the waiters it admits.
  package mutating func setLimit(_ newLimit: Int) -> [UInt64] {
    limit = Swift.max(newLimit, 1)
    var admitted: [UInt64] = []
    while let ticket = admitNext() { admitted.append(ticket) }
    return admitted
  }

  /// Gives a free slot to the head of the line.
  private mutating func admitNext() -> UInt64? {
    guard inFlight < limit, waiting > 0 else { return nil }
    skipLeavers()
    guard head < line.count else { return nil }
    let ticket = line[head]
    head += 1
    waiting -= 1
    inFlight += 1
    skipLeavers()
    return ticket
  }

  /// Moves `head` past places whose waiter left, and compacts a long-drained line.
  private mutating func skipLeavers() {
    while head < line.count, line[head] == 0 { head += 1 }
    if head == line.count {
      line.removeAll(keepingCapacity: true)
      head = 0
    } else if head >= 1024, head * 2 >= line.count {
      line.removeFirst(head)
      head = 0
    }
  }
}
