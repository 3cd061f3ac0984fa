import Synchronization

/// The error the benchmark operations throw: an enum, as an API client's errors often are.
enum BenchmarkError: Error {
  case serverError(code: Int)
}

/// The operation of the success path: returns at once, never suspends.
@inline(never)
func fetchValue(_ input: Int) async throws -> Int {
  input &+ 1
}

/// An operation that fails a set number of times, then returns a value.
///
/// One instance is reset before each run, so the measured loops allocate nothing for it.
final class FlakyOperation: Sendable {
  private let failuresLeft = Atomic<Int>(0)

  init(failures: Int = 0) {
    failuresLeft.store(failures, ordering: .relaxed)
  }

  /// Makes the next `failures` calls throw.
  func reset(failures: Int) {
    failuresLeft.store(failures, ordering: .relaxed)
  }

  /// Throws `BenchmarkError.serverError` while failures are left, then returns 42.
  @inline(never)
  func callAsFunction() async throws -> Int {
    if failuresLeft.load(ordering: .relaxed) > 0 {
      failuresLeft.subtract(1, ordering: .relaxed)
      throw BenchmarkError.serverError(code: 503)
    }
    return 42
  }
}

/// The hand-written baseline: what a programmer writes without a retry library.
///
/// Calls `operation` up to `retries + 1` times and rethrows the last error; cancellation is
/// never retried.
func retryLoop<T>(
  times retries: Int, operation: () async throws -> T
) async throws -> T {
  var attempt = 0
  while true {
    do {
      return try await operation()
    } catch {
      if error is CancellationError || attempt >= retries { throw error }
      attempt += 1
    }
  }
}

/// The hand-written baseline with a delay before each retry: exponential backoff with
/// proportional jitter, slept on `clock`.
func retryLoop<T, C: Clock>(
  times retries: Int,
  backoff initial: Duration,
  multiplier: Double = 2,
  jitter fraction: Double,
  clock: C,
  random: inout some RandomNumberGenerator,
  operation: () async throws -> T
) async throws -> T where C.Duration == Duration {
  var attempt = 0
  var delay = initial
  while true {
    do {
      return try await operation()
    } catch {
      if error is CancellationError || attempt >= retries { throw error }
      attempt += 1
      let factor = Double.random(in: (1 - fraction)...(1 + fraction), using: &random)
      try await clock.sleep(until: clock.now.advanced(by: delay * factor), tolerance: nil)
      delay = delay * multiplier
    }
  }
}

/// The hand-written baseline with the same delay before each retry.
func retryLoop<T, C: Clock>(
  times retries: Int,
  delay: Duration,
  clock: C,
  operation: () async throws -> T
) async throws -> T where C.Duration == Duration {
  var attempt = 0
  while true {
    do {
      return try await operation()
    } catch {
      if error is CancellationError || attempt >= retries { throw error }
      attempt += 1
      try await clock.sleep(until: clock.now.advanced(by: delay), tolerance: nil)
    }
  }
}
