extension CompiledPolicy {
  /// A sequence that iterates the sequence `makeSequence` returns and, when it throws,
  /// waits as the policy says and subscribes again, like Combine's `retry`.
  ///
  /// Each subscription is an attempt: it calls `makeSequence` afresh and iterates from the
  /// start, so elements a failed subscription already delivered are delivered again (dedupe
  /// them, or resume from a checkpoint inside `makeSequence`, if that matters). Retries count
  /// across the whole iteration: delivering elements does not reset them. The sequence ends
  /// when a subscription ends, and throws as `run` does when the policy stops retrying.
  /// `within` counts from the first subscription; `timeout` does not apply to sequences.
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
    private var run: RetryRun?
    private var subscription: Base.AsyncIterator?
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
      var run = self.run ?? RetryRun(policy: policy, environment: environment)
      defer { self.run = run }
      while !isFinished {
        var current: Base.AsyncIterator
        if let existing = subscription {
          current = existing
        } else {
          run.startAttempt(in: environment)
          current = makeSequence().makeAsyncIterator()
        }
        subscription = nil
        do {
          if let element = try await current.next(isolation: actor) {
            subscription = current
            return element
          }
          isFinished = true
          run.finishSucceeded(in: environment)
        } catch {
          do {
            try await run.recover(from: error, in: environment)
          } catch {
            isFinished = true
            throw error
          }
        }
      }
      return nil
    }
  }
}
