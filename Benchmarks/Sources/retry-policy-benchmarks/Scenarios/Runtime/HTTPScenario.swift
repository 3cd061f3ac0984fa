import Foundation
import RetryPolicy
import RetryPolicyHTTP

/// An error of some HTTP client that conforms to the core's `HTTPStatusProviding`.
struct ClientStatusError: HTTPStatusProviding {
  var statusCode: Int
}

/// The HTTP classes (issue 11): matching an error by status code, status class and
/// `transient`, through `policy.run`, per failed attempt beyond a rule that takes any error.
enum HTTPScenario {
  static let name = "http"
  static let failures = 8

  static let scenario = Scenario(
    name: name,
    summary: "HTTP classes (status, 5xx, transient) per failed attempt of policy.run"
  ) { benchmark in
    let statusError: any Error = ClientStatusError(statusCode: 503)
    let urlError: any Error = URLError(.timedOut)
    let cases: [(String, String, any Error)] = [
      ("any error (baseline)", "retry 8 immediately", statusError),
      ("status code", "retry 8 on 503 immediately", statusError),
      ("status class", "retry 8 on 5xx immediately", statusError),
      ("'transient', status 503", "retry 8 on transient immediately", statusError),
      ("'transient', URLError timedOut", "retry 8 on transient immediately", urlError),
    ]
    let variants = cases.compactMap { title, text, error in
      classificationVariant(title, policy: text, error: error, failures: failures)
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
