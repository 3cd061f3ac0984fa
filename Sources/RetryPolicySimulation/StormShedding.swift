import RetryPolicy

/// What refused an attempt in a storm: the client's breaker, or one of its shedding stages.
package enum StormRefusal: Int, Sendable, Hashable, CaseIterable {
  /// The circuit breaker (`breaker`).
  case breaker
  /// The concurrency limit (`limit`): no slot, and no place in line or a wait past `within`.
  case limit
  /// Adaptive client throttling (`throttle`).
  case throttle
  /// The rate limit (`rate`): the token would come past `within`.
  case rate

  /// The name in `refusedBy` (contract §14): the clause's keyword.
  package var name: String {
    switch self {
    case .breaker: Keyword.breaker.text
    case .limit: Keyword.limit.text
    case .throttle: Keyword.throttle.text
    case .rate: Keyword.rate.text
    }
  }
}

/// One client's shedding state in a storm, on the simulation's virtual time: the pure state
/// machines the runtime's host objects keep behind their locks, driven by the simulator.
struct StormClientShedding {
  var limit: ConcurrencyLimitStateMachine?
  var controller: AdaptiveLimitController?
  var throttle: ThrottleWindow?
  var rate: RateLimitStateMachine?
  /// The slot of each request waiting in line, by ticket.
  var waiters: [UInt64: Int32] = [:]

  /// The state of a client of `policy`.
  init(policy: CompiledPolicy) {
    switch policy.limit {
    case .fixed(let limit, let queue):
      self.limit = ConcurrencyLimitStateMachine(limit: limit, queue: queue)
    case .adaptive(let minimum, let maximum):
      let controller = AdaptiveLimitController(minimum: minimum, maximum: maximum)
      self.controller = controller
      self.limit = ConcurrencyLimitStateMachine(limit: controller.limit, queue: 0)
    case nil:
      break
    }
    throttle = policy.throttle.map { ThrottleWindow(window: $0.window) }
    rate = policy.rate.map { RateLimitStateMachine(policy: $0) }
  }

  /// Gives back the slot of an attempt that ran from `start` to `end`; returns the slots of
  /// the waiters that now start.
  mutating func release(start: Int64, end: Int64) -> [Int32] {
    guard var machine = limit else { return [] }
    var tickets: [UInt64] = []
    var change: Int?
    if var controller {
      change = controller.record(start: start, end: end, inFlight: machine.inFlight)
      self.controller = controller
    }
    if let ticket = machine.release() { tickets.append(ticket) }
    if let change { tickets += machine.setLimit(change) }
    limit = machine
    return tickets.compactMap { waiters.removeValue(forKey: $0) }
  }
}
