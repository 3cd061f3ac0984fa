import RetryPolicy

/// Parsing and checking generated policy files of 1,000, 10,000 and 100,000 policies.
enum PolicyFileScenario {
  static let name = "policy-file"
  static let sizes = [1_000, 10_000, 100_000]

  static let scenario = Scenario(
    name: name,
    summary: "compile(policyFile:) of generated files of 1,000, 10,000 and 100,000 policies"
  ) { benchmark in
    var generator = PolicyFileGenerator()
    var perPolicy: [(count: Int, nanoseconds: Double)] = []
    var baseline: String?
    for count in sizes {
      let file = generator.makeFile(policies: count)
      let variant =
        "compile(policyFile:), \(Format.integer(count)) policies, "
        + Format.bytes(Double(file.utf8.count))
      baseline = baseline ?? variant
      let warnings = analyze(policyFile: file).diagnostics.count
      do {
        let compiled = try compile(policyFile: file)
        guard compiled.policies.count == count else {
          benchmark.skip(
            name, variant,
            because: "compiled \(compiled.policies.count) policies of \(count) (placeholder?)")
          continue
        }
      } catch {
        benchmark.skip(name, variant, because: "compile(policyFile:) throws: \(error)")
        continue
      }
      let measurement = await benchmark.measure(name, variant, against: baseline) { iterations in
        for _ in 0..<iterations {
          blackHole(try compile(policyFile: opaque(file)))
        }
      }
      if let measurement {
        let each = measurement.nanosecondsPerOperation / Double(count)
        perPolicy.append((count, each))
        benchmark.annotateLastRow(
          "\(Format.time(nanoseconds: each)) per policy"
            + (warnings == 0 ? "" : "; the file has \(warnings) warnings"))
      }
    }
    let timeTarget = "100,000-policy file checked ≤ 0.6 s on one core"
    let growthTarget = "policy files grow linearly (per policy: 100,000 ≤ 1.5× 1,000)"
    guard let first = perPolicy.first, let last = perPolicy.last, first.count == 1_000,
      last.count == 100_000
    else {
      benchmark.addFinding(timeTarget, measured: "not measured", verdict: .notMeasured)
      benchmark.addFinding(growthTarget, measured: "not measured", verdict: .notMeasured)
      return
    }
    let growth = last.nanoseconds / first.nanoseconds
    let total = last.nanoseconds * Double(last.count)
    benchmark.addFinding(
      timeTarget,
      measured:
        "\(Format.time(nanoseconds: total)) "
        + "(\(Format.time(nanoseconds: last.nanoseconds)) per policy)",
      holds: total <= 0.6e9)
    let perPolicyText = perPolicy.map {
      "\(Format.integer($0.count)): \(Format.time(nanoseconds: $0.nanoseconds))"
    }.joined(separator: ", ")
    benchmark.addFinding(
      growthTarget, measured: "per policy \(perPolicyText): \(Format.ratio(growth))",
      holds: growth <= 1.5)
  }
}
