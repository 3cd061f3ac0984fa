import RetryPolicyHTTP
import Testing

@testable import RetryPolicyHTTP

@Suite("Retry-After: delay-seconds and the three HTTP-date forms")
struct RetryAfterHeaderTests {
  /// Sun, 06 Nov 1994 08:49:37 GMT, the RFC's example date.
  static let example: Int64 = 784_111_777

  @Test(
    "a value reads as the delay it asks for, from a fixed now",
    arguments: [
      ("2", Duration?.some(.seconds(2))),
      ("  120 ", .seconds(120)),
      ("0", .seconds(0)),
      ("99999999999999999999999", .seconds(1_000_000_000)),
      ("Sun, 06 Nov 1994 08:49:40 GMT", .seconds(3)),
      ("Sunday, 06-Nov-94 08:49:47 GMT", .seconds(10)),
      ("Sun Nov  6 08:49:39 1994", .seconds(2)),
      ("Sun Nov 16 08:49:37 1994", .seconds(864_000)),
      ("Sun, 06 Nov 1994 08:00:00 GMT", .seconds(0)),
      ("Thu, 01 Jan 1970 00:00:00 GMT", .seconds(0)),
      ("Thu, 29 Feb 1996 00:00:00 GMT", .seconds(825_552_000 - example)),
    ])
  func reads(value: String, expected: Duration?) {
    #expect(RetryAfterHeader.delay(value, now: Self.example) == expected)
  }

  @Test(
    "a malformed or negative value is no delay",
    arguments: [
      "", " ", "-5", "1.5", "5s", "soon", "Sun, 06 Nov 1994 08:49:37",
      "Sun, 31 Feb 1994 08:49:37 GMT",
      "Sun, 06 Nov 1994 24:00:00 GMT", "Sun, 06 Foo 1994 08:49:37 GMT", "Sun Nov  6 08:49:37",
      "Sunday, 06-Nov-1994 08:49:37 GMT", "Sun, 6 Nov 1994 08:49:37 GMT", "\u{0}", "１２",
    ])
  func rejects(value: String) {
    #expect(RetryAfterHeader.delay(value, now: Self.example) == nil)
  }

  @Test("an RFC 850 year more than 50 years ahead is the latest past year of its digits")
  func twoDigitYears() {
    // now = 2026-11-23: "94" is 1994 (2094 is too far ahead), "30" is 2030.
    let now: Int64 = 1_795_392_000
    #expect(HTTPDate.seconds("Sunday, 06-Nov-94 08:49:37 GMT", now: now) == Self.example)
    #expect(
      HTTPDate.seconds("Tuesday, 01-Jan-30 00:00:00 GMT", now: now) == 1_893_456_000)
  }
}
