// The limits of the language: the largest values a policy may hold.
//
// Both the checker (which enforces them) and the message catalogue (which quotes them) read
// this file; it reads nothing of theirs. Every limit is a whole number, so that the checker
// compares a number as written with it exactly (`Literals.order(of:comparedWith:)`), never
// after rounding to a `Double`. Grammar/README.md's limits table lists each one; a test reads
// that table and compares it with these values.

/// The largest values the language accepts.
enum PolicyLimits {
  /// The largest count `retry N` accepts.
  static let largestCount = 10_000
  /// The most extra attempts `hedge N after D` accepts.
  static let largestHedgeCount = 10
  /// The smallest backoff factor `backoff D xF` accepts.
  static let smallestFactor = 1
  /// The largest backoff factor `backoff D xF` accepts.
  static let largestFactor = 1000
  /// The largest percentage `jitter P%` and `budget P%` accept (both must be above 0).
  static let largestPercent = 100
  /// The longest duration any clause accepts, in hours.
  static let longestDurationHours = 10_000
  /// The longest duration any clause accepts: 10000 hours.
  static let longestDuration = Duration.seconds(Int64(longestDurationHours) * 3600)

  /// ``longestDuration`` counted in `unit`: a whole number for every unit.
  static func longestDuration(in unit: DurationUnit) -> Int {
    switch unit {
    case .hours: longestDurationHours
    case .minutes: longestDurationHours * 60
    case .seconds: longestDurationHours * 3600
    case .milliseconds: longestDurationHours * 3_600_000
    }
  }
}
