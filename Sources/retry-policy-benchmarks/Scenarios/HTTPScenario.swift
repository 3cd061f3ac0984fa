import Foundation
import RetryPolicy
import RetryPolicyHTTP

/// An error of some HTTP client that conforms to the core's `HTTPStatusProviding`.
struct ClientStatusError: HTTPStatusProviding {
  var statusCode: Int
}

/// The HTTP classes (issue 11): matching an error by status code, status class and
/// `transient`, as the runtime does once per failed attempt, and reading both forms of
/// `Retry-After`.
enum HTTPScenario {
  static let name = "http"

  static let scenario = Scenario(
    name: name,
    summary: "HTTP classes (status, 5xx, transient) and Retry-After parsing"
  ) { benchmark in
    let statusError: any Error = ClientStatusError(statusCode: 503)
    let urlError: any Error = URLError(.timedOut)
    let now: Int64 = 784_111_777
    await benchmark.compare(
      name,
      [
        Variant("hand-written `statusCode >= 500` (baseline)") { iterations in
          for _ in 0..<iterations {
            blackHole(((opaque(statusError) as? ClientStatusError)?.statusCode ?? 0) >= 500)
          }
        },
        Variant("status code '503'") { iterations in
          for _ in 0..<iterations {
            blackHole(ErrorClassification(opaque(statusError)).matches("503"))
          }
        },
        Variant("status class '5xx'") { iterations in
          for _ in 0..<iterations {
            blackHole(ErrorClassification(opaque(statusError)).matches("5xx"))
          }
        },
        Variant("'transient', status 503") { iterations in
          for _ in 0..<iterations {
            blackHole(ErrorClassification(opaque(statusError)).matches("transient"))
          }
        },
        Variant("'transient', URLError timedOut") { iterations in
          for _ in 0..<iterations {
            blackHole(ErrorClassification(opaque(urlError)).matches("transient"))
          }
        },
        Variant("Retry-After '120' (delay-seconds)") { iterations in
          for _ in 0..<iterations {
            blackHole(RetryAfterHeader.delay(opaque("120"), now: now))
          }
        },
        Variant("Retry-After IMF-fixdate") { iterations in
          for _ in 0..<iterations {
            blackHole(RetryAfterHeader.delay(opaque("Sun, 06 Nov 1994 08:49:40 GMT"), now: now))
          }
        },
        Variant("Retry-After RFC 850 date") { iterations in
          for _ in 0..<iterations {
            blackHole(RetryAfterHeader.delay(opaque("Sunday, 06-Nov-94 08:49:40 GMT"), now: now))
          }
        },
        Variant("Retry-After asctime date") { iterations in
          for _ in 0..<iterations {
            blackHole(RetryAfterHeader.delay(opaque("Sun Nov  6 08:49:40 1994"), now: now))
          }
        },
      ])
  }
}
