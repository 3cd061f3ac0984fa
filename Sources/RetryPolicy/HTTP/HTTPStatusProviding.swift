import Foundation

/// An error that carries an HTTP status code, so that the status forms of an `on` or `except`
/// list (`503`, `5xx`) and the built-in class `transient` match it.
///
/// The `RetryPolicyHTTP` library's URLSession integration matches responses by status
/// itself; conform the error type of any other HTTP client (AsyncHTTPClient, your own) to get
/// the same matching.
///
///     struct ServerError: HTTPStatusProviding {
///       var statusCode: Int
///     }
///     let policy = try compile(policy: "retry 3 on 5xx, 429 backoff 1s")
///     // ServerError(statusCode: 503) is retried; ServerError(statusCode: 404) is not.
public protocol HTTPStatusProviding: Error {
  /// The HTTP status code of the response the error stands for, such as 503.
  var statusCode: Int { get }
}

/// The error classes the language knows about HTTP and the network: status codes (`503`),
/// status classes (`5xx`), the retry-worthy `URLError` codes by their Swift names, and
/// `transient`.
package enum HTTPErrorClasses {
  /// The statuses `transient` contains, in order (``isTransientStatus(_:)`` decides faster).
  package static let transientStatuses: [Int] = [408, 500, 502, 503, 504]

  /// The retry-worthy `URLError` codes, by the Swift names that are their class names: the
  /// codes Alamofire's `RetryPolicy` retries by default, all of which `transient` contains.
  static let urlErrorCodes: [String: URLError.Code] = [
    "backgroundSessionInUseByAnotherProcess": .backgroundSessionInUseByAnotherProcess,
    "backgroundSessionWasDisconnected": .backgroundSessionWasDisconnected,
    "badServerResponse": .badServerResponse,
    "callIsActive": .callIsActive,
    "cannotConnectToHost": .cannotConnectToHost,
    "cannotFindHost": .cannotFindHost,
    "cannotLoadFromNetwork": .cannotLoadFromNetwork,
    "dataNotAllowed": .dataNotAllowed,
    "dnsLookupFailed": .dnsLookupFailed,
    "downloadDecodingFailedMidStream": .downloadDecodingFailedMidStream,
    "downloadDecodingFailedToComplete": .downloadDecodingFailedToComplete,
    "internationalRoamingOff": .internationalRoamingOff,
    "networkConnectionLost": .networkConnectionLost,
    "notConnectedToInternet": .notConnectedToInternet,
    "secureConnectionFailed": .secureConnectionFailed,
    "serverCertificateHasBadDate": .serverCertificateHasBadDate,
    "serverCertificateNotYetValid": .serverCertificateNotYetValid,
    "timedOut": .timedOut,
  ]

  /// The built-in class names that are words: `transient` and the URL error names.
  static let names: Set<String> = Set(urlErrorCodes.keys).union(["transient"])

  /// Whether `name` is written as a status form: it starts with a digit.
  @inline(__always)
  static func isStatusForm(_ name: String) -> Bool {
    guard let first = name.utf8.first else { return false }
    return first >= UInt8(ascii: "0") && first <= UInt8(ascii: "9")
  }

  /// The statuses a status form contains: `503` is 503...503, `5xx` is 500...599; nil when
  /// the text is no valid status code (100 to 599) or class (`1xx` to `5xx`).
  package static func statuses(of name: String) -> ClosedRange<Int>? {
    var utf8 = name.utf8.makeIterator()
    guard let a = utf8.next(), let b = utf8.next(), let c = utf8.next(), utf8.next() == nil
    else { return nil }
    return statuses(a, b, c)
  }

  /// What `name` is as a status form: nil when it is none (it does not start with a digit),
  /// `.some(nil)` when it is one but invalid, else its statuses; as ``isStatusForm(_:)`` and
  /// ``statuses(of:)`` together say, in one pass over the bytes in place.
  @inline(__always)
  static func statusForm(_ name: String) -> ClosedRange<Int>?? {
    let read = name.utf8.withContiguousStorageIfAvailable { bytes -> ClosedRange<Int>?? in
      guard let first = bytes.first, first >= UInt8(ascii: "0"), first <= UInt8(ascii: "9")
      else { return .none }
      guard bytes.count == 3 else { return .some(nil) }
      return .some(statuses(first, bytes[1], bytes[2]))
    }
    if let read { return read }
    return isStatusForm(name) ? .some(statuses(of: name)) : .none
  }

  /// The statuses of the three bytes of a status form, or nil.
  @inline(__always)
  private static func statuses(_ a: UInt8, _ b: UInt8, _ c: UInt8) -> ClosedRange<Int>? {
    let zero = UInt8(ascii: "0")
    let x = UInt8(ascii: "x")
    guard a >= UInt8(ascii: "1"), a <= UInt8(ascii: "5") else { return nil }
    let hundreds = Int(a - zero) * 100
    if b == x, c == x { return hundreds...(hundreds + 99) }
    guard b >= zero, b <= UInt8(ascii: "9"), c >= zero, c <= UInt8(ascii: "9") else { return nil }
    let code = hundreds + Int(b - zero) * 10 + Int(c - zero)
    return code...code
  }

  /// A valid status form near an invalid one, for "did you mean": `6xx` → `5xx`, `600` →
  /// `500`, `5XX` → `5xx`, `5030` → `503`; nil when none is near.
  static func suggestion(forStatus name: String) -> String? {
    let lowered = name.lowercased()
    let digits = lowered.prefix { $0.isASCII && $0.isNumber }
    let rest = lowered.dropFirst(digits.count)
    guard let first = digits.first?.wholeNumberValue else { return nil }
    let leading = String(Swift.min(Swift.max(first, 1), 5))
    if !rest.isEmpty {
      guard rest.allSatisfy({ $0 == "x" }) else { return nil }
      return leading + "xx"
    }
    guard digits.count >= 3 else { return nil }
    let candidate = leading + digits.dropFirst().prefix(2)
    return candidate == name ? nil : candidate
  }

  /// Whether the built-in class `name` (a status form, `transient` or a URL error name)
  /// contains `error`, whose dynamic type `type` identifies; nil when `name` is no such class.
  @inline(__always)
  static func matches(_ name: String, _ error: any Error, type: ObjectIdentifier) -> Bool? {
    if let form = statusForm(name) {
      guard let range = form, let status = statusCode(of: error, type: type) else { return false }
      return range.contains(status)
    }
    if name == "transient" {
      return isTransient(error, type: type, isURLError: type == ObjectIdentifier(URLError.self))
    }
    guard let code = urlErrorCodes[name] else { return nil }
    return urlErrorCode(of: error) == code
  }

  /// The status of an ``HTTPStatusProviding`` error, whose dynamic type `type` identifies,
  /// or nil.
  ///
  /// Whether the error's type conforms is looked up once per type (``HTTPStatusReaders``);
  /// then the status is read as the concrete type, without a cast to the protocol.
  @inline(__always)
  static func statusCode(of error: any Error, type: ObjectIdentifier) -> Int? {
    HTTPStatusReaders.shared.statusCode(of: error, type: type)
  }

  /// The code of a `URLError`, or nil; opened first, as ``statusCode(of:)`` is.
  @inline(__always)
  static func urlErrorCode(of error: any Error) -> URLError.Code? {
    urlErrorCode(opening: error)
  }

  private static func urlErrorCode<E: Error>(opening error: E) -> URLError.Code? {
    // `errorCode` rather than `code`: the same number, read without the generic conversion
    // of Foundation's `code` (about 780 instructions on Linux).
    guard let urlError = error as? URLError else { return nil }
    return URLError.Code(rawValue: urlError.errorCode)
  }

  /// Whether `error` is in `transient`.
  ///
  /// It is when it is a retry-worthy URL error or has a status 408, 500, 502, 503 or 504.
  /// `type` identifies the error's dynamic type and `isURLError` says whether it is
  /// `URLError` (the caller knows both).
  @inline(__always)
  static func isTransient(_ error: any Error, type: ObjectIdentifier, isURLError: Bool) -> Bool {
    if isURLError {
      guard let code = urlErrorCode(of: error) else { return false }
      return isTransient(code)
    }
    guard let status = statusCode(of: error, type: type) else { return false }
    return isTransientStatus(status)
  }

  /// Whether every error of the class `inner` is in the class `outer`, as far as names tell.
  ///
  /// True for the same name, a status in a status class (`503` in `5xx`), or a status or URL
  /// error name in `transient`. Registered names and types are not compared: false.
  package static func covers(_ outer: String, _ inner: String) -> Bool {
    if outer == inner { return true }
    if outer == "transient" {
      if let code = urlErrorCodes[inner] { return isTransient(code) }
      guard let range = statuses(of: inner) else { return false }
      return range.allSatisfy(isTransientStatus)
    }
    guard let outerRange = statuses(of: outer), let innerRange = statuses(of: inner) else {
      return false
    }
    return outerRange.contains(innerRange.lowerBound) && outerRange.contains(innerRange.upperBound)
  }

  /// Whether `transient` holds the status: 408, 500, 502, 503, 504 (a switch, not a set: no
  /// hashing on the path of every failed attempt).
  @inline(__always)
  static func isTransientStatus(_ status: Int) -> Bool {
    switch status {
    case 408, 500, 502, 503, 504: true
    default: false
    }
  }

  /// Whether `transient` holds the URL error code: one of ``urlErrorCodes``.
  static func isTransient(_ code: URLError.Code) -> Bool {
    switch code {
    case .backgroundSessionInUseByAnotherProcess, .backgroundSessionWasDisconnected,
      .badServerResponse, .callIsActive, .cannotConnectToHost, .cannotFindHost,
      .cannotLoadFromNetwork, .dataNotAllowed, .dnsLookupFailed,
      .downloadDecodingFailedMidStream, .downloadDecodingFailedToComplete,
      .internationalRoamingOff, .networkConnectionLost, .notConnectedToInternet,
      .secureConnectionFailed, .serverCertificateHasBadDate, .serverCertificateNotYetValid,
      .timedOut:
      true
    default: false
    }
  }
}
