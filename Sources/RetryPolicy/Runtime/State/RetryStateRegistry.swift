import Foundation

/// The state that runs of a policy share, kept by the host in one place: each policy's
/// budget tokens, circuit, concurrency slots, throttling window and rate tokens.
///
/// A registry keeps one entry per policy name, made on first use from the policy's clauses:
/// a ``RetryBudget`` for `budget P%`, a ``CircuitBreaker`` for `breaker`, a
/// ``ConcurrencyLimiter`` for `limit`, an ``AdaptiveThrottle`` for `throttle` and a
/// ``RateLimiter`` for `rate`. Every run of that name in an environment with the registry
/// shares them:
///
///     let registry = RetryStateRegistry()
///     let environment = RetryEnvironment(registry: registry)
///     let value = try await payments.run(in: environment) { try await api.charge(order) }
///     print(registry.breaker(named: "payments")?.state ?? .closed)
///
/// When a run brings a policy of that name whose clause differs from the one an entry's part
/// was made for (a new `breaker` clause, say), that part starts afresh; the other parts keep
/// their state. A ``PolicyStore`` owns a registry and applies this rule at each reload
/// instead: a reload that keeps a clause keeps its state (counts, open circuits, tokens), a
/// reload that changes it starts fresh, and a reload that removes the name forgets it.
///
/// A policy without a name (compiled from one line) has its entry keyed by its value. The
/// environment's ``RetryEnvironment/budget``, ``RetryEnvironment/breaker`` and the objects it
/// binds by name (``RetryEnvironment/budgets``, ``RetryEnvironment/breakers``) win over the
/// registry's. An environment without a registry uses ``processWide``.
///
/// A breaker of a registry is made without a clock: it reads the clock of the environment
/// that runs it. A registry is safe to use from any task.
public final class RetryStateRegistry: Sendable {
  /// The registry of environments that give none: one entry per policy *value* for the life
  /// of the process, so that two files that both name a policy `payments` never share state.
  ///
  /// Its breakers are kept per policy value and clock: a test on a manual clock and a run on
  /// the real clock never share a circuit. See <doc:ProcessWideState>.
  public static let processWide = RetryStateRegistry(isKeyedByValue: true)

  /// Whether entries are keyed by the policy's value rather than its name.
  private let isKeyedByValue: Bool
  // `Locked` (an `NSLock`), not `Mutex`: ThreadSanitizer sees it (see ProcessWideState.md).
  private let table = Locked(Table())
  /// The limiters of named policies whose only shared state is `limit N` without `queue`,
  /// read without the lock (see ``NamedCountedLimits``); unused by ``processWide``.
  private let countedLimits = NamedCountedLimits()

  /// Creates an empty registry, keyed by policy name.
  public convenience init() {
    self.init(isKeyedByValue: false)
  }

  private init(isKeyedByValue: Bool) {
    self.isKeyedByValue = isKeyedByValue
  }

  /// The budget of the policy of that name, when a run of it (or a store's reload) has
  /// made one.
  public func budget(named name: String) -> RetryBudget? {
    table.withLock { $0.entries[.name(name)]?.state.budget }
  }

  /// The circuit breaker of the policy of that name, when a run of it (or a store's reload)
  /// has made one: for a host's metrics or an operator's ``CircuitBreaker/isolate()``.
  public func breaker(named name: String) -> CircuitBreaker? {
    table.withLock { $0.entries[.name(name)]?.state.breaker }
  }

  /// The concurrency limiter of the policy of that name, when one was made.
  public func limiter(named name: String) -> ConcurrencyLimiter? {
    table.withLock { $0.entries[.name(name)]?.state.limiter }
  }

  /// The throttle of the policy of that name, when one was made: for a host's metrics or its
  /// ``AdaptiveThrottle/refusalProbability(for:)``.
  public func throttle(named name: String) -> AdaptiveThrottle? {
    table.withLock { $0.entries[.name(name)]?.state.throttle }
  }

  /// The rate limiter of the policy of that name, when one was made: for a host's metrics or
  /// its ``RateLimiter/tokens(for:)``.
  public func rateLimiter(named name: String) -> RateLimiter? {
    table.withLock { $0.entries[.name(name)]?.state.rateLimiter }
  }

  /// The names that have an entry, sorted.
  public var names: [String] {
    table.withLock { table in
      table.entries.keys.compactMap { key in
        guard case .name(let name) = key else { return nil }
        return name
      }.sorted()
    }
  }

  /// Forgets the state of the policy of that name: its next run starts afresh.
  public func removeState(named name: String) {
    table.withLock { table in
      table.entries[.name(name)] = nil
      revalidateCountedLimits(in: table)
    }
  }

  /// The slot of a run of `policy`, named, whose only shared state is `limit N` without
  /// `queue` (N = `limit`), read without the lock; nil when no current entry holds it.
  package func countedLimitSlot(
    for policy: borrowing CompiledPolicy, limit: Int
  ) -> CountedLimitSlot? {
    guard !isKeyedByValue, let name = policy.name else { return nil }
    return countedLimits.slot(named: name, limit: limit)
  }

  /// Keeps `limiter`, which counts N = `limit` for `policy` (named, its only shared state
  /// `limit N` without `queue`), for lookups without the lock, while the entry of the name
  /// has that limiter and no other clause.
  package func keepCountedLimiter(
    _ limiter: ConcurrencyLimiter, limit: Int, for policy: borrowing CompiledPolicy
  ) {
    guard !isKeyedByValue, let name = policy.name else { return }
    table.withLock { table in
      guard let entry = table.entries[.name(name)], entry.state.limiter === limiter,
        entry.clauses == .counted(limit)
      else { return }
      countedLimits.keep(limiter, limit: limit, named: name)
    }
  }

  /// Called with the lock held, after the entries changed: the limiters kept for lookups
  /// without the lock stay only while their name's entry still has them and no other clause.
  private func revalidateCountedLimits(in table: Table) {
    guard !isKeyedByValue else { return }
    countedLimits.revalidate { name, limit, limiter in
      guard let entry = table.entries[.name(name)] else { return false }
      return entry.state.limiter === limiter && entry.clauses == .counted(limit)
    }
  }

  /// The shared state of a run of `policy` on `clock`, made on first use; a part whose clause
  /// changed since it was made starts afresh, unless a store pinned the entry.
  package func state(
    for policy: borrowing CompiledPolicy, clock: any Clock<Duration>
  ) -> PolicyState {
    guard policy.hasSharedState else { return PolicyState() }
    let copy = copy policy
    let clockKey: ClockIdentity? =
      isKeyedByValue && policy.breaker != nil && !(clock is ContinuousClock)
      ? ClockIdentity(clock) : nil
    return table.withLock { table in
      let key = key(of: copy)
      let before = table.entries[key]
      var entry = before ?? Entry()
      if !entry.isPinned || entry.clauses == nil {
        entry.update(to: copy, isKeyedByValue: isKeyedByValue)
      }
      table.entries[key] = entry
      if before?.clauses != entry.clauses || before?.state.limiter !== entry.state.limiter {
        revalidateCountedLimits(in: table)
      }
      var state = entry.state
      if let clockKey, copy.breaker != nil {
        // A breaker of the process-wide table reads the clock it was made for.
        let clocked = ClockedPolicy(policy: copy, clock: clockKey)
        if let found = table.clockedBreakers[clocked] {
          state.breaker = found
        } else {
          let breaker = CircuitBreaker(clock: clock)
          table.clockedBreakers[clocked] = breaker
          state.breaker = breaker
        }
      }
      return state
    }
  }

  /// Makes the entries of a store's policies current; returns each policy's state, by name.
  ///
  /// Each part whose clause is unchanged is kept; the entries are pinned, so that runs of an
  /// older version never reset them; every other name is forgotten.
  package func apply(_ policies: [CompiledPolicy]) -> [String: PolicyState] {
    table.withLock { table in
      var states: [String: PolicyState] = [:]
      var kept: [Key: Entry] = [:]
      for policy in policies {
        guard let name = policy.name, states[name] == nil else { continue }
        guard policy.hasSharedState else {
          states[name] = PolicyState()
          continue
        }
        var entry = table.entries[.name(name)] ?? Entry()
        entry.update(to: policy, isKeyedByValue: false)
        entry.isPinned = true
        kept[.name(name)] = entry
        states[name] = entry.state
      }
      table.entries = kept
      revalidateCountedLimits(in: table)
      return states
    }
  }

  private func key(of policy: CompiledPolicy) -> Key {
    if !isKeyedByValue, let name = policy.name { return .name(name) }
    return .value(Self.normalized(policy))
  }

  /// `policy` with its budget ratio as the budget uses it: a ratio set through the public
  /// property bypasses the initializer's clamp, and NaN (never equal to itself) would make a
  /// new entry at every run.
  private static func normalized(_ policy: CompiledPolicy) -> CompiledPolicy {
    var policy = policy
    if let ratio = policy.budgetRatio, ratio.isNaN || !(0...1).contains(ratio) {
      policy.budgetRatio = RetryBudget.clampedRatio(ratio)
    }
    return policy
  }

  private enum Key: Hashable, Sendable {
    case name(String)
    case value(CompiledPolicy)
  }

  /// The clauses an entry's parts were made for.
  private struct Clauses: Equatable {
    var budgetRatio: Double?
    var breaker: CircuitBreakerPolicy?
    var limit: ConcurrencyLimitPolicy?
    var throttle: ThrottlePolicy?
    var rate: RatePolicy?

    /// `limit N` without `queue`, and no other clause.
    static func counted(_ limit: Int) -> Clauses {
      Clauses(limit: .fixed(limit: limit, queue: 0))
    }
  }

  private struct Entry {
    var clauses: Clauses?
    var state = PolicyState()
    /// Made by a store's reload: runs never replace its parts.
    var isPinned = false

    /// Keeps each part whose clause is unchanged; makes a fresh one where it changed.
    mutating func update(to policy: CompiledPolicy, isKeyedByValue: Bool) {
      let old = clauses
      let ratio = policy.budgetRatio.map(RetryBudget.clampedRatio)
      if ratio == nil || old?.budgetRatio != ratio || state.budget == nil {
        state.budget = ratio == nil ? nil : RetryBudget()
      }
      if policy.breaker == nil || old?.breaker != policy.breaker || state.breaker == nil {
        state.breaker = policy.breaker == nil ? nil : CircuitBreaker()
      }
      if policy.limit == nil || old?.limit != policy.limit || state.limiter == nil {
        state.limiter = policy.limit == nil ? nil : ConcurrencyLimiter()
      }
      if policy.throttle == nil || old?.throttle != policy.throttle || state.throttle == nil {
        state.throttle = policy.throttle == nil ? nil : AdaptiveThrottle()
      }
      if policy.rate == nil || old?.rate != policy.rate || state.rateLimiter == nil {
        state.rateLimiter = policy.rate == nil ? nil : RateLimiter()
      }
      clauses = Clauses(
        budgetRatio: ratio, breaker: policy.breaker, limit: policy.limit,
        throttle: policy.throttle, rate: policy.rate)
    }
  }

  private struct Table {
    var entries: [Key: Entry] = [:]
    /// The process-wide registry's breakers of runs on clocks other than the continuous one.
    var clockedBreakers: [ClockedPolicy: CircuitBreaker] = [:]
  }
}

/// The shared state of one policy's runs: one object per clause that has state.
package struct PolicyState: Sendable {
  package var budget: RetryBudget?
  package var breaker: CircuitBreaker?
  package var limiter: ConcurrencyLimiter?
  package var throttle: AdaptiveThrottle?
  package var rateLimiter: RateLimiter?

  package init() {}
}

extension CompiledPolicy {
  /// Whether runs of the policy share state: it has `budget`, `breaker`, `limit`,
  /// `throttle` or `rate`.
  var hasSharedState: Bool {
    budgetRatio != nil || breaker != nil || limit != nil || throttle != nil || rate != nil
  }
}

/// A policy value and the clock of the runs that share its process-wide breaker (nil: the
/// continuous clock).
struct ClockedPolicy: Hashable, Sendable {
  var policy: CompiledPolicy
  var clock: ClockIdentity?
}
