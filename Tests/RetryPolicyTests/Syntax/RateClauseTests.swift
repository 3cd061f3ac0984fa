import RetryPolicy
import Testing

/// `rate N/s [burst M]` and `rate N/m [burst M]` in the language: reading, checking, printing.
@Suite("Language: the 'rate' clause")
struct RateClauseTests {
  /// The diagnostics of `text` as `LINE:COL id message`.
  static func diagnostics(_ text: String) -> [String] {
    analyze(policy: text).diagnostics.map {
      "\($0.range.start.line):\($0.range.start.column) \($0.id) \($0.message)"
    }
  }

  @Test("'rate N/s' and 'rate N/m' compile to a RatePolicy; burst defaults to N")
  func compiles() throws {
    let perSecond = try compile(policy: "retry 3 rate 50/s")
    #expect(perSecond.rate == RatePolicy(count: 50, per: .seconds(1), burst: 50))
    let perMinute = try compile(policy: "retry 3 rate 30/m burst 5")
    #expect(perMinute.rate == RatePolicy(count: 30, per: .seconds(60), burst: 5))
    #expect(perMinute.rate?.perSecond == 0.5)
    // Blanks may stand between the three tokens; the canonical form has none.
    let spaced = try compile(policy: "retry 3 rate 7 / m")
    #expect(spaced.rate == RatePolicy(count: 7, per: .seconds(60)))
    #expect(try compile(policy: "retry 3 within 1s").rate == nil)
  }

  @Test("the description prints the rate back, and it compiles to the same policy")
  func description() throws {
    let policy = try compile(policy: "retry 3 delay 1s rate 030/m burst 4 within 1m")
    #expect(policy.description == "retry 3 delay 1s within 1m rate 30/m burst 4")
    #expect(try compile(policy: policy.description) == policy)
    #expect(try compile(policy: "rate 5/s\nretry 1").description == "retry 1 rate 5/s burst 5")
  }

  @Test("values outside 1 … 1000000 are errors at the value, with the range")
  func ranges() {
    #expect(
      Self.diagnostics("retry 3 rate 0/s") == [
        "1:14 shedding-out-of-range rate 0/s is out of range; it must be 1 to 1000000"
      ])
    #expect(
      Self.diagnostics("retry 3 rate 1000001/m") == [
        "1:14 shedding-out-of-range rate 1000001/m is out of range; it must be 1 to 1000000"
      ])
    #expect(
      Self.diagnostics("retry 3 rate 5/s burst 0") == [
        "1:24 shedding-out-of-range rate 'burst' 0 is out of range; it must be 1 to 1000000"
      ])
    #expect(Self.diagnostics("retry 3 rate 1000000/s burst 1000000") == [])
    #expect(Self.diagnostics("retry 3 rate 1/m burst 1") == [])
  }

  @Test("a malformed rate, 'burst' without a number and a second 'rate' are reported")
  func malformed() {
    #expect(
      Self.diagnostics("retry 3 rate 50") == [
        "1:16 missing-unit expected '/s' or '/m' after '50'; write '50/s' (per second) or '50/m' (per minute)"
      ])
    #expect(
      Self.diagnostics("retry 3 rate 50/h") == [
        "1:17 unknown-unit unknown rate period 'h'; a rate is per second ('/s') or per minute ('/m')"
      ])
    let perSecondOrMinute =
      "expected a whole number of attempts per second or per minute after 'rate', such as '50/s' or '30/m'"
    #expect(Self.diagnostics("retry 3 rate 1.5/s") == ["1:14 expected-count " + perSecondOrMinute])
    #expect(Self.diagnostics("retry 3 rate") == ["1:13 expected-count " + perSecondOrMinute])
    #expect(
      Self.diagnostics("retry 3 rate 5/s burst") == [
        "1:23 expected-count expected a whole number after 'burst'"
      ])
    let twice = analyze(policy: "retry 3 rate 5/s rate 6/m").diagnostics
    #expect(twice.count == 1)
    #expect(twice.first?.range.start.column == 18)
    #expect(twice.first?.message.contains("more than once") == true)
    // After an error the rest is still checked.
    #expect(
      analyze(policy: "retry 3 rate 5/x within 0s").diagnostics.map(\.id) == [
        .unknownUnit, .zeroDuration,
      ])
  }

  @Test("'rate' is a keyword; 's', 'm' and 'burst' stay names elsewhere")
  func words() throws {
    #expect(analyze(policy: "retry 3 after rate").hasErrors)
    #expect(
      try compile(policy: "retry 3 on burst, s, m").rules[0].errorClasses == ["burst", "s", "m"])
  }
}
