import Foundation
import RetryPolicy

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// A response whose status a policy names, seen by the policy as a failed attempt.
///
/// The `URLSession` methods of this library turn such a response into this error inside the
/// run, so that the policy's rules match it by status (`503`, `5xx`, `transient`) and honor
/// its `Retry-After`; they never throw it: when the run stops, its response and data are
/// returned, as URLSession would have returned them. An observer sees it in
/// ``RetryPolicy/RetryEvent/attemptFailed(attempt:error:)``, with the status and the method.
public struct HTTPStatusError: HTTPStatusProviding, RetryAfterProviding, CustomStringConvertible {
  /// The response's status code, such as 503.
  public var statusCode: Int
  /// The request's method, such as `GET`.
  public var method: String
  /// The delay the response's `Retry-After` header asks for, or nil without a usable one.
  public var retryAfter: Duration?
  /// The response's body.
  public var data: Data
  /// The response's headers, as received.
  public var headers: [String: String]
  /// The times the request had been sent before this attempt: its attempt's number less one
  /// (OpenTelemetry's `http.request.resend_count`).
  public var resendCount: Int
  /// The response itself, held for the caller: `URLResponse` is a class that Foundation
  /// does not mark `Sendable` everywhere, so it travels boxed.
  let response: ResponseBox

  /// A phrase such as `GET 503`.
  public var description: String { "\(method) \(statusCode)" }

  init(response: HTTPURLResponse, data: Data, method: String) {
    self.statusCode = response.statusCode
    self.method = method
    self.data = data
    var headers: [String: String] = [:]
    for case (let name as String, let value as String) in response.allHeaderFields {
      headers[name] = value
    }
    self.headers = headers
    self.retryAfter = response.value(forHTTPHeaderField: "Retry-After").flatMap {
      RetryAfterHeader.delay($0, dateHeader: response.value(forHTTPHeaderField: "Date"))
    }
    self.response = ResponseBox(response)
    self.resendCount = max(0, (RetryContext.current?.attempt ?? 1) - 1)
  }
}

/// A `URLResponse`, which is never mutated once received.
final class ResponseBox: @unchecked Sendable {
  // Sound: the response is only read, after URLSession handed it over.
  let response: URLResponse

  init(_ response: URLResponse) {
    self.response = response
  }
}
