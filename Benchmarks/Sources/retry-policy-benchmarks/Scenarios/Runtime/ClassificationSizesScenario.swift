import RetryPolicy
import RetryPolicyTesting

/// A 9-byte error: a case with a code, and cases without payload.
private enum SmallError: Error {
  case serverError(code: Int)
  case notFound
}

/// A 24-byte error: a code and a message, the most common shape.
private enum MessageError: Error {
  case serverError(code: Int, message: String)
  case notFound
}

/// A 64-byte payload (65 bytes with its tag).
private enum WideError: Error {
  case serverError(code: Int, b: Int, c: Int, d: Int, e: Int, f: Int, g: Int, h: Int)
  case notFound
}

/// Matching `serverError` by case name for enums of 9, 24 and 64 bytes, through `policy.run`.
///
/// The same value on every failure, and a value never seen before on every failure (a new
/// code each time). Each operation is a run of eight failed attempts and a success; the
/// baseline of each pair is `retry 8 immediately` (any error, no name to match) with the same
/// errors, so the remarks give the cost of matching per failed attempt.
enum ClassificationSizesScenario {
  static let name = "classify-sizes"
  static let failures = 8

  static let scenario = Scenario(
    name: name,
    summary: "case-name matching for 9-, 24- and 64-byte enums, repeated and new payloads, "
      + "per failed attempt of policy.run"
  ) { benchmark in
    let message = "the upstream service is unavailable"
    let shapes: [(String, (Int) -> any Error)] = [
      ("9 bytes", { SmallError.serverError(code: $0) }),
      ("24 bytes (code, message)", { MessageError.serverError(code: $0, message: message) }),
      ("64 bytes", { WideError.serverError(code: $0, b: 1, c: 2, d: 3, e: 4, f: 5, g: 6, h: 7) }),
    ]
    let environment = RetryEnvironment(clock: ImmediateClock())
    guard let any = try? compile(policy: "retry 8 immediately"),
      let named = try? compile(policy: "retry 8 on serverError immediately")
    else {
      benchmark.skip(name, "every variant", because: "a policy did not compile")
      return
    }
    for (shape, make) in shapes {
      for varies in [false, true] {
        let label = "\(shape), \(varies ? "new code each failure" : "same value")"
        let titles = ["\(label), any error (baseline)", "\(label), on serverError"]
        let variants = zip(titles, [any, named]).map { title, policy in
          let operation = FailingOperation(varies: varies, make)
          return Variant(title) { iterations in
            for _ in 0..<iterations {
              operation.reset(failures: failures)
              blackHole(try await policy.run(in: environment) { try await operation() })
            }
          }
        }
        let measurements = await benchmark.compare("\(name): \(label)", variants)
        reportMatchingCost(
          benchmark, scenario: name, titles: titles, measurements: measurements,
          failures: failures)
      }
    }
  }
}
