import RetryPolicy

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

/// Matching `serverError` by case name for enums of 9, 24 and 64 bytes: the same value on
/// every failure, and a value never seen before on every failure (a new code each time).
enum ClassificationSizesScenario {
  static let name = "classify-sizes"

  static let scenario = Scenario(
    name: name,
    summary: "case-name matching for 9-, 24- and 64-byte enums, repeated and new payloads"
  ) { benchmark in
    let message = "the upstream service is unavailable"
    await benchmark.compare(
      name,
      [
        Variant("hand-written `if case .serverError`, 24 bytes, new code (baseline)") {
          iterations in
          let counter = Counter()
          for _ in 0..<iterations {
            let error: any Error = opaque(
              MessageError.serverError(code: counter.next(), message: message))
            if case MessageError.serverError = error { blackHole(true) } else { blackHole(false) }
          }
        },
        variant("9 bytes, same value") { _ in SmallError.serverError(code: 503) },
        variant("9 bytes, new code each failure") { SmallError.serverError(code: $0) },
        variant("24 bytes (code, message), same value") { _ in
          MessageError.serverError(code: 503, message: message)
        },
        variant("24 bytes (code, message), new code each failure") {
          MessageError.serverError(code: $0, message: message)
        },
        variant("64 bytes, same value") { _ in
          WideError.serverError(code: 503, b: 1, c: 2, d: 3, e: 4, f: 5, g: 6, h: 7)
        },
        variant("64 bytes, new code each failure") {
          WideError.serverError(code: $0, b: 1, c: 2, d: 3, e: 4, f: 5, g: 6, h: 7)
        },
      ])
  }

  /// Classifies the error `make` gives for each iteration and matches `serverError`.
  private static func variant(
    _ title: String, _ make: @escaping @Sendable (Int) -> any Error
  ) -> Variant {
    let counter = Counter()
    return Variant(title) { iterations in
      for _ in 0..<iterations {
        let error = opaque(make(counter.next()))
        blackHole(ErrorClassification(error).matches("serverError"))
      }
    }
  }

  /// A count that never repeats across repetitions, so "new" values are never seen before.
  private final class Counter: @unchecked Sendable {
    // Sound: used by one variant's iterations, which run one after another.
    private var value = 0
    func next() -> Int {
      value &+= 1
      return value
    }
  }
}
