import RetryPolicy
import RetryPolicyTesting

/// A host's own error type, matched by a registered predicate in the classification scenario.
struct HTTPStatusError: Error {
  var status: Int
}

/// Runs of a policy whose operation fails `failures` times with one error, then succeeds, on
/// an immediate clock: each failure is classified against the rule's `on` classes once.
///
/// Comparing a rule that names a class with `retry N immediately` (any error, nothing to
/// match) gives the cost of matching, per failed attempt, through the public API only.
func classificationVariant(
  _ title: String, policy text: String, error: any Error, failures: Int,
  environment: RetryEnvironment = RetryEnvironment(clock: ImmediateClock())
) -> Variant? {
  guard let policy = try? compile(policy: text, vocabulary: environment.vocabulary) else {
    return nil
  }
  let operation = FailingOperation(error: error)
  return Variant("\(title): '\(text)'") { iterations in
    for _ in 0..<iterations {
      operation.reset(failures: failures)
      blackHole(try await policy.run(in: environment) { try await operation() })
    }
  }
}

/// The cost of matching per failed attempt: (variant − baseline) / failures, as a remark.
func reportMatchingCost(
  _ benchmark: Benchmark, scenario: String, titles: [String], measurements: [Measurement?],
  failures: Int
) {
  guard let baseline = measurements.first ?? nil else { return }
  for (title, measurement) in zip(titles, measurements).dropFirst() {
    guard let measurement else { continue }
    let cost =
      (measurement.nanosecondsPerOperation - baseline.nanosecondsPerOperation) / Double(failures)
    benchmark.addRemark(
      "\(scenario): \(title) costs \(Format.time(nanoseconds: cost)) per failed attempt "
        + "beyond 'any'")
  }
}

/// An operation that throws a set number of times, then returns: the error `make` gives for
/// a running count; with `varies`, every failure throws a value never thrown before.
final class FailingOperation: @unchecked Sendable {
  // Sound: one variant's iterations call it one after another.
  private let make: (Int) -> any Error
  private let varies: Bool
  private var remaining = 0
  private var count = 0

  init(varies: Bool = false, _ make: @escaping (Int) -> any Error) {
    self.make = make
    self.varies = varies
  }

  /// Throws `error` on every failure.
  convenience init(error: any Error) {
    self.init { _ in error }
  }

  /// Fails the next `failures` calls.
  func reset(failures: Int) {
    remaining = failures
  }

  @inline(never)
  func callAsFunction() async throws -> Int {
    if remaining > 0 {
      remaining -= 1
      if varies { count &+= 1 }
      throw make(count)
    }
    return 1
  }
}

/// Matching an error against an `on` class name: by registered predicate, by type name, by
/// enum case name, against a rule that matches any error, through `policy.run`.
///
/// Each operation is one run of eight failed attempts and a success; the remarks give the
/// cost per failed attempt of each kind of name.
enum ClassificationScenario {
  static let name = "classify"
  static let failures = 8

  static let scenario = Scenario(
    name: name,
    summary: "error classification by registered predicate, type name and enum case name, "
      + "per failed attempt of policy.run"
  ) { benchmark in
    let enumError: any Error = BenchmarkError.serverError(code: 503)
    let structError: any Error = HTTPStatusError(status: 503)
    let predicates = RetryEnvironment(
      clock: ImmediateClock(),
      errorClasses: [
        "transient": { ($0 as? HTTPStatusError).map { $0.status >= 500 } ?? false }
      ])
    let cases: [(String, String, any Error, RetryEnvironment?)] = [
      ("any error (baseline)", "retry 8 immediately", enumError, nil),
      ("registered predicate", "retry 8 on transient immediately", structError, predicates),
      ("type name", "retry 8 on HTTPStatusError immediately", structError, nil),
      ("enum case name", "retry 8 on serverError immediately", enumError, nil),
    ]
    let variants = cases.compactMap { title, text, error, environment in
      environment.map {
        classificationVariant(
          title, policy: text, error: error, failures: failures, environment: $0)
      } ?? classificationVariant(title, policy: text, error: error, failures: failures)
    }
    guard variants.count == cases.count else {
      benchmark.skip(name, "every variant", because: "a policy did not compile")
      return
    }
    let measurements = await benchmark.compare(name, variants)
    reportMatchingCost(
      benchmark, scenario: name, titles: cases.map(\.0), measurements: measurements,
      failures: failures)
  }
}
