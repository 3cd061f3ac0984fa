extension CompiledPolicy {
  /// A sequence that iterates the sequence `makeSequence` returns and, when it throws,
  /// waits as the policy says and subscribes again, like Combine's `retry`.
  ///
  /// Each subscription is an attempt: it calls `makeSequence` afresh and iterates from the
  /// start, so elements a failed subscription already delivered are delivered again (dedupe
  /// them, or resume from a checkpoint inside `makeSequence`, if that matters). A
  /// subscription that delivered at least one element and then fails starts a fresh count of
  /// retries and a fresh `within` window, so a long-lived feed reconnects for as long as each
  /// connection delivers something. The sequence ends when a subscription ends (with
  /// `CancellationError` when it ended because the task was cancelled), and throws as `run`
  /// does when the policy stops retrying. `timeout` does not apply to sequences.
  ///
  ///     let policy = try compile(policy: "retry forever backoff 1s x2 max 1m jitter full")
  ///     for try await message in policy.retrying({ socket.messages() }) {
  ///       handle(message)
  ///     }
  ///
  /// - Parameters:
  ///   - environment: The clock, random source, error classes, hooks and observer.
  ///   - makeSequence: Makes a new subscription; called once per attempt.
  public func retrying<Base: AsyncSequence>(
    in environment: RetryEnvironment = RetryEnvironment(),
    _ makeSequence: @escaping @Sendable () -> Base
  ) -> RetryingSequence<Base> {
    RetryingSequence(policy: self, environment: environment, makeSequence: makeSequence)
  }
}

/// An asynchronous sequence that subscribes again to a failed sequence as a policy says; see
/// ``CompiledPolicy/retrying(in:_:)``.
public struct RetryingSequence<Base: AsyncSequence>: AsyncSequence, Sendable {
  /// The elements of the underlying sequence.
  public typealias Element = Base.Element
  /// Any error: the underlying sequence's, or the policy's (cancellation, a hook's error).
  public typealias Failure = any Error

  let policy: CompiledPolicy
  let environment: RetryEnvironment
  let makeSequence: @Sendable () -> Base

  /// Starts an iteration; the first subscription happens on the first call of `next`.
  public func makeAsyncIterator() -> AsyncIterator {
    AsyncIterator(policy: policy, environment: environment, makeSequence: makeSequence)
  }

  /// The iterator of a ``RetryingSequence``.
  public struct AsyncIterator: AsyncIteratorProtocol {
    private let policy: CompiledPolicy
    private let environment: RetryEnvironment
    private let makeSequence: @Sendable () -> Base
    private var driver: (any SequenceDriving)?
    private var subscription: Base.AsyncIterator?
    private var hasDelivered = false
    private var isFinished = false

    init(
      policy: CompiledPolicy, environment: RetryEnvironment,
      makeSequence: @escaping @Sendable () -> Base
    ) {
      self.policy = policy
      self.environment = environment
      self.makeSequence = makeSequence
    }

    /// The next element, subscribing again after failures as the policy says.
    public mutating func next() async throws -> Element? {
      try await next(isolation: nil)
    }

    /// The next element, subscribing again after failures as the policy says.
    public mutating func next(isolation actor: isolated (any Actor)?) async throws -> Element? {
      let driver = self.driver ?? makeDriver(on: environment.clock)
      self.driver = driver
      while !isFinished {
        var current: Base.AsyncIterator
        if let existing = subscription {
          current = existing
        } else {
          do {
            try await driver.startAttempt(in: environment)
          } catch {
            isFinished = true
            throw error
          }
          current = makeSequence().makeAsyncIterator()
          hasDelivered = false
        }
        subscription = nil
        let failure: any Error
        do {
          if let element = try await current.next(isolation: actor) {
            subscription = current
            // A subscription that delivers is a success for the breaker (a probe's
            // included), however long it then lives.
            if !hasDelivered { driver.attemptDelivered(in: environment) }
            hasDelivered = true
            return element
          }
          isFinished = true
          // A subscription that ends because its task is cancelled did not finish.
          if Task.isCancelled { throw driver.stopCancelled(in: environment) }
          driver.finishSucceeded(in: environment)
          return nil
        } catch  where !isFinished {
          failure = error
        }
        // A subscription that delivered starts a new episode: a fresh count and window.
        if hasDelivered { driver.startEpisode() }
        do {
          try await driver.recover(from: failure, in: environment)
        } catch {
          isFinished = true
          throw error
        }
      }
      return nil
    }

    private func makeDriver<C: Clock<Duration>>(on clock: C) -> any SequenceDriving {
      SequenceDriver(
        run: RetryRun(policy: policy, environment: environment, clock: clock), clock: clock)
    }
  }
}

/// The run of a retrying sequence, its clock's type hidden, so that the iterator's type does
/// not depend on the clock.
protocol SequenceDriving: AnyObject {
  nonisolated(nonsending) func startAttempt(in environment: RetryEnvironment) async throws
  nonisolated(nonsending) func recover(from error: any Error, in environment: RetryEnvironment)
    async throws
  func startEpisode()
  func attemptDelivered(in environment: RetryEnvironment)
  func finishSucceeded(in environment: RetryEnvironment)
  func stopCancelled(in environment: RetryEnvironment) -> any Error
}

/// A ``RetryRun`` and its clock of type `C`, kept between calls of the iterator's `next`.
private final class SequenceDriver<C: Clock<Duration>>: SequenceDriving {
  private var run: RetryRun
  private let clock: C

  init(run: RetryRun, clock: C) {
    self.run = run
    self.clock = clock
  }

  // An iteration abandoned mid-attempt (`break`, a dropped iterator) releases what its
  // attempt holds: a half-open circuit's probe.
  deinit {
    run.abandon()
  }

  func attemptDelivered(in environment: RetryEnvironment) {
    run.attemptDelivered(in: environment)
  }

  nonisolated(nonsending) func startAttempt(in environment: RetryEnvironment) async throws {
    if let wait = try run.startAttempt(in: environment) {
      try await run.admit(after: wait, in: environment, on: clock)
    }
  }

  nonisolated(nonsending) func recover(from error: any Error, in environment: RetryEnvironment)
    async throws
  {
    try await run.recover(from: error, in: environment, on: clock)
  }

  func startEpisode() {
    run.startEpisode()
  }

  func finishSucceeded(in environment: RetryEnvironment) {
    run.finishSucceeded(in: environment)
  }

  func stopCancelled(in environment: RetryEnvironment) -> any Error {
    run.stopCancelled(in: environment)
  }
}
