// The limits of the language: the largest values a policy may hold.
//
// Both the checker (which enforces them) and the message catalogue (which quotes them) read
// this file; it reads nothing of theirs.

/// The largest values the language accepts.
enum PolicyLimits {
  /// The largest count `retry N` accepts.
  static let largestCount = 10_000
  /// The largest backoff factor `backoff D xF` accepts.
  static let largestFactor = 1000.0
  /// ``largestFactor`` as the messages write it.
  static let largestFactorText = "1000"
  /// The longest duration any clause accepts: 10000 hours.
  static let longestDuration = Duration.seconds(36_000_000)
}
