/// A seeded, reproducible random number generator (SplitMix64), for jitter in tests and
/// simulations.
///
/// The same seed gives the same numbers on every platform and run. It is a value: each copy
/// goes on from where it was copied. Not for cryptography.
///
///     let environment = RetryEnvironment(random: SeededRandomNumberGenerator(seed: 42))
public struct SeededRandomNumberGenerator: RandomNumberGenerator, Sendable, Hashable {
  private var state: UInt64

  /// Creates a generator whose numbers depend only on `seed`.
  public init(seed: UInt64) {
    self.state = seed
  }

  /// The next 64 random bits.
  public mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var mixed = state
    mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
    mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
    return mixed ^ (mixed >> 31)
  }
}
