import RetryPolicy

/// Per-host circuit breakers (`CircuitBreakerGroup`) of a client that meets ever-new hosts (a
/// crawler, a webhook sender): the resident memory a breaker costs, and what a default group
/// fed 100,000 hosts keeps.
enum CircuitBreakerGroupScenario {
  static let name = "breaker-group"
  static let hosts = 100_000

  static let scenario = Scenario(
    name: name,
    summary: "CircuitBreakerGroup fed 100,000 hosts: resident memory per host, and with the bound"
  ) { benchmark in
    var table = ReportTable(
      headers: ["group", "hosts asked for", "kept", "resident growth", "growth/kept host"],
      alignments: [.left, .right, .right, .right, .right])
    var bounded: Double?
    for (label, maximum) in [
      ("maximumCount 100,000 (every host kept)", hosts),
      ("default (maximumCount 1,000)", CircuitBreakerGroup.defaultMaximumCount),
    ] {
      ProcessMemory.trimAllocator()
      let before = ProcessMemory.residentBytes()
      let group = CircuitBreakerGroup(maximumCount: maximum)
      for host in 0..<hosts {
        blackHole(group.breaker(for: "host-\(host).example.com"))
      }
      ProcessMemory.trimAllocator()
      let after = ProcessMemory.residentBytes()
      let kept = group.count
      let growth = before.flatMap { before in after.map { Double($0 - before) } }
      if maximum != hosts { bounded = growth }
      table.append([
        label, Format.integer(hosts), Format.integer(kept),
        growth.map(Format.bytes) ?? "n/a",
        growth.map { Format.bytes($0 / Double(Swift.max(1, kept))) } ?? "n/a",
      ])
      blackHole(group)
    }
    benchmark.addTable("CircuitBreakerGroup: resident memory of per-host breakers", table)
    let target = "a default CircuitBreakerGroup fed 100,000 hosts grows resident memory < 100 MB"
    guard let bounded else {
      benchmark.addFinding(target, measured: "not measured", verdict: .notMeasured)
      return
    }
    benchmark.addFinding(
      target, measured: "\(Format.bytes(bounded)) resident growth", holds: bounded < 100 * 1_048_576
    )
  }
}
