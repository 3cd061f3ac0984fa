import RetryPolicy

/// The errors of the pretend payments API.
enum PaymentsError: Error {
  case unauthorized
  case serverError(code: Int)
}

/// A pretend API that fails a few times before it answers.
actor PaymentsAPI {
  private var failures: [PaymentsError]
  private(set) var calls = 0
  private(set) var tokenRefreshes = 0

  init(failures: [PaymentsError]) { self.failures = failures }

  func charge(cents: Int) throws -> String {
    calls += 1
    if !failures.isEmpty { throw failures.removeFirst() }
    return "charged \(cents) cents"
  }

  func refreshToken() { tokenRefreshes += 1 }
}

// `RetryPolicies` is generated at build time from payments.retry and reads.retry.
let api = PaymentsAPI(failures: [.unauthorized, .serverError(code: 503), .serverError(code: 502)])
// `payments` names the hook `refreshToken`: this method will not compile without it.
let receipt = try await RetryPolicies.payments(refreshToken: { _ in await api.refreshToken() }) {
  try await api.charge(cents: 1250)
}
print("payments: \(receipt) after \(await api.calls) calls, \(await api.tokenRefreshes) token refresh")

let reads = PaymentsAPI(failures: [.serverError(code: 500)])
let balance = try await RetryPolicies.quick.run { try await reads.charge(cents: 0) }
print("quick: \(balance) after \(await reads.calls) calls")
print("default: at most \(RetryPolicies.`default`.rules[0].behavior.maxCount ?? 0) retries")
