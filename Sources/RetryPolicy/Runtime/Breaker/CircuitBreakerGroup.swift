/// Circuit breakers by key, each made on first use: one per downstream host, at most
/// ``maximumCount`` of them.
///
/// Given to an environment with `RetryPolicyHTTP`'s `breakers(perHost:)` (or its
/// `breakerGroup` property), it lets `RetryPolicyHTTP` keep one breaker per URL host, so that
/// one failing host does not open the circuit for the others.
///
///     let hosts = CircuitBreakerGroup()
///     let environment = RetryEnvironment().breakers(perHost: hosts)
///     let (data, _) = try await URLSession.shared.data(from: url, policy: policy, in: environment)
///     print(hosts.breaker(for: "api.example.com").state)
///
/// A group is bounded, so that a crawler or a webhook sender that meets ever-new hosts does
/// not grow without end (a breaker costs about 17 KB; see BENCHMARKS.md). When a new key
/// arrives and the group is full, it forgets the closed breakers used least recently (an
/// eighth of the group at a time, so the cost of a scan is shared by many new keys). An open
/// or half-open breaker, or one held open by ``CircuitBreaker/isolate()``, is never
/// forgotten: a host whose circuit is open stays refused. When every breaker of a full
/// group is open, the new key gets a fresh closed breaker that the group does not keep.
/// A key forgotten and seen again starts with a fresh closed breaker.
public final class CircuitBreakerGroup: Sendable {
  /// The default of ``maximumCount``: 1,000 keys.
  public static let defaultMaximumCount = 1_000

  /// A breaker and when its key was last asked for (the group's own count of lookups).
  private struct Entry {
    var breaker: CircuitBreaker
    var lastUse: UInt64
  }

  private struct Table {
    var entries: [String: Entry] = [:]
    var uses: UInt64 = 0
  }

  /// The most keys the group keeps a breaker for.
  public let maximumCount: Int
  private let makeBreaker: @Sendable () -> CircuitBreaker
  private let table = Locked(Table())

  /// Creates an empty group whose breakers are made without a clock: each reads the clock of
  /// the environment whose run uses it (see ``CircuitBreaker``), a test's manual clock
  /// included.
  ///
  /// - Parameter maximumCount: the most keys kept (at least 1; 1,000 by default).
  public init(maximumCount: Int = defaultMaximumCount) {
    self.maximumCount = max(1, maximumCount)
    makeBreaker = { CircuitBreaker() }
  }

  /// Creates an empty group whose breakers measure time on `clock`.
  ///
  /// - Parameters:
  ///   - clock: The clock every breaker of the group measures its windows and `for` on.
  ///   - maximumCount: the most keys kept (at least 1; 1,000 by default).
  public init<C: Clock<Duration>>(clock: C, maximumCount: Int = defaultMaximumCount) {
    self.maximumCount = max(1, maximumCount)
    makeBreaker = { CircuitBreaker(clock: clock) }
  }

  /// The breaker of `key`, made closed on first use.
  public func breaker(for key: String) -> CircuitBreaker {
    table.withLock { table in
      table.uses &+= 1
      if let found = table.entries[key] {
        table.entries[key]?.lastUse = table.uses
        return found.breaker
      }
      let breaker = makeBreaker()
      if table.entries.count >= maximumCount {
        evictClosed(from: &table)
        // Every breaker is open: this one is not kept.
        guard table.entries.count < maximumCount else { return breaker }
      }
      table.entries[key] = Entry(breaker: breaker, lastUse: table.uses)
      return breaker
    }
  }

  /// The keys that have a breaker, sorted.
  public var keys: [String] {
    table.withLock { $0.entries.keys.sorted() }
  }

  /// How many keys have a breaker now.
  public var count: Int {
    table.withLock { $0.entries.count }
  }

  /// Forgets the closed breakers used least recently: an eighth of the group, at least one.
  private func evictClosed(from table: inout Table) {
    let closed = table.entries.filter { $0.value.breaker.state == .closed }
    let batch = max(1, maximumCount / 8)
    for (key, _) in closed.sorted(by: { $0.value.lastUse < $1.value.lastUse }).prefix(batch) {
      table.entries[key] = nil
    }
  }
}
