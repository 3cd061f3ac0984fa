import RetryPolicy

/// A host's own error type, matched by a registered predicate in the classification scenario.
struct HTTPStatusError: Error {
  var status: Int
}

/// Matching an error against an `on` class name: by registered predicate, by type name, by
/// enum case name, beside the `if case` a hand-written loop would use.
///
/// Each operation classifies one error and matches one name, as the runtime does once per
/// failed attempt.
enum ClassificationScenario {
  static let name = "classify"

  static let scenario = Scenario(
    name: name,
    summary: "error classification by registered predicate, type name and enum case name"
  ) { benchmark in
    let enumError: any Error = BenchmarkError.serverError(code: 503)
    let structError: any Error = HTTPStatusError(status: 503)
    let predicates: [String: @Sendable (any Error) -> Bool] = [
      "transient": { ($0 as? HTTPStatusError).map { $0.status >= 500 } ?? false }
    ]
    await benchmark.compare(
      name,
      [
        Variant("hand-written `if case .serverError` (baseline)") { iterations in
          for _ in 0..<iterations {
            let error = opaque(enumError)
            if case BenchmarkError.serverError = error {
              blackHole(true)
            } else {
              blackHole(false)
            }
          }
        },
        Variant("registered predicate 'transient'") { iterations in
          for _ in 0..<iterations {
            let classification = ErrorClassification(opaque(structError), predicates: predicates)
            blackHole(classification.matches("transient"))
          }
        },
        Variant("type name 'HTTPStatusError'") { iterations in
          for _ in 0..<iterations {
            let classification = ErrorClassification(opaque(structError))
            blackHole(classification.matches("HTTPStatusError"))
          }
        },
        Variant("enum case name 'serverError'") { iterations in
          for _ in 0..<iterations {
            let classification = ErrorClassification(opaque(enumError))
            blackHole(classification.matches("serverError"))
          }
        },
      ])
  }
}
