import RetryPolicySimulation

// The seeded generator and the immediate clock are written once, in the internal module
// `RetryPolicySimulation`, which the storm and `simulate` of the `retry-policy` tool use too:
// the tool then links no test support. These aliases make them part of this product, so a
// test needs only `import RetryPolicyTesting`.

/// A seeded, reproducible random number generator (SplitMix64), for jitter in tests and
/// simulations.
///
/// The same seed gives the same numbers on every platform and run. It is a value: each copy
/// goes on from where it was copied. Not for cryptography.
///
///     let environment = RetryEnvironment(random: SeededRandomNumberGenerator(seed: 42))
public typealias SeededRandomNumberGenerator = RetryPolicySimulation.SeededRandomNumberGenerator

/// A virtual clock whose sleeps return at once, moving `now` to their deadline.
///
/// Code that waits on it runs as fast as it can compute while its clock reads the times it
/// would have reached: for simulations, benchmarks, and tests of the delays a run chooses.
/// It does not suit `timeout`, where the attempt and its timer race: the timer always wins.
///
///     let clock = ImmediateClock()
///     _ = try? await policy.run(in: RetryEnvironment(clock: clock)) { throw APIError.serverError }
///     print(clock.now)   // the total of the delays
public typealias ImmediateClock = RetryPolicySimulation.ImmediateClock
