import RetryPolicy
import RetryPolicyTesting
import Testing

@Suite("CircuitBreakerGroup is bounded")
struct CircuitBreakerGroupTests {
  @Test("a group keeps at most its maximum, 1,000 by default")
  func bounded() {
    #expect(CircuitBreakerGroup().maximumCount == 1_000)
    let group = CircuitBreakerGroup(clock: ManualClock(), maximumCount: 64)
    for host in 0..<10_000 { _ = group.breaker(for: "host-\(host)") }
    #expect(group.count <= 64)
    #expect(group.keys.contains("host-9999"))
    #expect(CircuitBreakerGroup(maximumCount: 0).maximumCount == 1)
  }

  @Test("closed breakers used least recently go first; an open one is never forgotten")
  func evictsClosedFirst() {
    let group = CircuitBreakerGroup(clock: ManualClock(), maximumCount: 8)
    let open = group.breaker(for: "failing")
    open.isolate()
    let kept = group.breaker(for: "busy")
    for host in 0..<6 { _ = group.breaker(for: "idle-\(host)") }
    #expect(group.count == 8)
    // "busy" is used again, so it is no longer among the least recent.
    #expect(group.breaker(for: "busy") === kept)
    _ = group.breaker(for: "new")
    #expect(group.count == 8)
    #expect(!group.keys.contains("idle-0"))
    #expect(group.keys.contains("busy"))
    for host in 0..<100 { _ = group.breaker(for: "more-\(host)") }
    #expect(group.breaker(for: "failing") === open)
    #expect(open.state == .open)
  }

  @Test("when every breaker is open, a new key's breaker is not kept")
  func allOpen() {
    let group = CircuitBreakerGroup(clock: ManualClock(), maximumCount: 2)
    group.breaker(for: "a").isolate()
    group.breaker(for: "b").isolate()
    let fresh = group.breaker(for: "c")
    #expect(fresh.state == .closed)
    #expect(group.keys == ["a", "b"])
    #expect(group.breaker(for: "a").state == .open)
  }
}
