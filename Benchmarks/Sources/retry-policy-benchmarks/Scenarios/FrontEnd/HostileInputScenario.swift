import RetryPolicy
import RetryPolicyTesting

/// `retry-policy check`'s work on hostile inputs of 1 MB and 10 MB each.
///
/// The work is what `check` does with a file (analyze its bytes, render every diagnostic
/// shown), timed once each, with the peak resident memory of the process while it runs.
/// Each must take under 5 s and 500 MB.
enum HostileInputScenario {
  static let name = "hostile-input"
  static let sizes = [1 << 20, 10 << 20]
  static let timeLimitSeconds = 5.0
  static let memoryLimitBytes = 500.0 * 1024 * 1024

  /// One kind of input: a name, and a generator of about `size` bytes.
  struct Kind: Sendable {
    var name: String
    var make: @Sendable (_ size: Int) -> [UInt8]
  }

  static let kinds: [Kind] = [
    Kind(name: "random binary") { size in
      var random = SeededRandomNumberGenerator(seed: 8)
      return (0..<size).map { _ in UInt8.random(in: 0...255, using: &random) }
    },
    Kind(name: "one line of errors") { size in
      repeated("policy p = retry 3", " @ delay 5d jitter 500% x", until: size, then: "\n")
    },
    Kind(name: "many erroneous policies") { size in
      numbered(until: size) { "policy p\($0) = retry 3 bakoff 1s jitter 500% max 0s\n" }
    },
    Kind(name: "many warnings") { size in
      numbered(until: size) { "policy p\($0) = retry 3 delay 0s max 1s\n" }
    },
    Kind(name: "long on/except lists") { size in
      // Every class in both lists: one `class-in-on-and-except` per name of `except`.
      let half = numbered(until: size / 2 - 20) { "c\($0), " }
      let names = half.dropLast(2)
      return Array("policy p = retry 3 on ".utf8) + names + Array(" except ".utf8) + names
        + [0x0A]
    },
    Kind(name: "unterminated blocks") { size in
      numbered(until: size) { "policy b\($0) {\n    retry 3 backoff 1s\n" }
    },
    Kind(name: "one line of braces") { size in
      repeated("policy p {\n", "{", until: size, then: "\n")
    },
    Kind(name: "lone CRs and NULs") { size in
      repeated("policy p = retry 3", "\r\r\0 @", until: size, then: "\n")
    },
    Kind(name: "one long comment line") { size in
      repeated("# ", "é東😀\u{202E} comment ", until: size, then: "\npolicy p = retry 3\n")
    },
  ]

  static let scenario = Scenario(
    name: name,
    summary: "check (analyze + render) of 1 MB and 10 MB hostile inputs: time and peak memory"
  ) { benchmark in
    var table = ReportTable(
      headers: ["input", "size", "time", "peak memory", "diagnostics shown", "found in all"],
      alignments: [.left, .right, .right, .right, .right, .right])
    var failures: [String] = []
    for kind in kinds {
      for size in sizes {
        let input = kind.make(size)
        ProcessMemory.trimAllocator()
        ProcessMemory.resetPeak()
        let clock = ContinuousClock()
        let start = clock.now
        let (shown, found, outputBytes) = check(input)
        let elapsed = clock.now - start
        let peak = ProcessMemory.peakResidentBytes().map(Double.init)
        let seconds =
          Double(elapsed.components.seconds)
          + Double(elapsed.components.attoseconds) / 1e18
        table.append([
          kind.name, Format.bytes(Double(input.count)),
          Format.time(nanoseconds: seconds * 1e9), peak.map(Format.bytes) ?? "n/a",
          Format.integer(shown), Format.integer(found),
        ])
        blackHole(outputBytes)
        if seconds >= timeLimitSeconds || (peak ?? 0) >= memoryLimitBytes {
          failures.append("\(kind.name), \(Format.bytes(Double(input.count)))")
        }
      }
    }
    benchmark.addTable("Hostile input: retry-policy check's work, one run each", table)
    benchmark.addFinding(
      "every hostile input checked in < 5 s and < 500 MB",
      measured: failures.isEmpty ? "all rows" : "over: " + failures.joined(separator: "; "),
      holds: failures.isEmpty)
  }

  /// What `retry-policy check` does with a file's bytes: analyze, then render what is shown.
  ///
  /// Returns the diagnostics shown, the errors and warnings found, and the output's size.
  static func check(_ bytes: [UInt8]) -> (Int, Int, Int) {
    let analysis = analyze(policyFile: bytes)
    let renderer = DiagnosticRenderer(bytes: bytes, sourceName: "hostile.retry")
    let output = renderer.render(analysis.diagnostics)
    let found =
      analysis.diagnostics.count { $0.severity != .note } + analysis.omittedErrorCount
      + analysis.omittedWarningCount
    return (analysis.diagnostics.count, found, output.utf8.count)
  }

  /// `head`, then `unit` as many times as fit in `size` bytes, then `tail`.
  static func repeated(_ head: String, _ unit: String, until size: Int, then tail: String)
    -> [UInt8]
  {
    var bytes = Array(head.utf8)
    bytes.reserveCapacity(size + tail.utf8.count)
    let unitBytes = Array(unit.utf8)
    while bytes.count + unitBytes.count <= size { bytes += unitBytes }
    return bytes + Array(tail.utf8)
  }

  /// `line(0)`, `line(1)`, … while they fit in `size` bytes.
  static func numbered(until size: Int, _ line: (Int) -> String) -> [UInt8] {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(size)
    var index = 0
    while true {
      let next = Array(line(index).utf8)
      guard bytes.count + next.count <= size else { return bytes }
      bytes += next
      index += 1
    }
  }
}
