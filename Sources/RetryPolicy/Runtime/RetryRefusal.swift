import Foundation

/// Why a host refuses every retry of a run: the stop reason
/// ``RetryStopReason/retriesRefused(_:)`` carries it.
///
/// The core knows no host's reasons; a library that runs operations it may not repeat
/// declares its own, as `RetryPolicyHTTP` declares `notIdempotent` for a request it may not
/// send twice:
///
///     extension RetryRefusal {
///       /// The request may not be sent twice.
///       public static let notIdempotent = RetryRefusal(
///         name: "notIdempotent", description: "request not idempotent")
///     }
///
///     let value = try await policy.run(in: environment, refusingRetries: .notIdempotent) {
///       try await client.post(order)
///     }
///
/// Its ``name`` is what the `reason` label of ``RetryMetrics``' `retry_policy_runs_total`
/// gives for such a run, and its ``description`` what events and summaries print.
public struct RetryRefusal: Sendable, Hashable, CustomStringConvertible {
  /// The refusal's name, in lowerCamelCase like a case name: `notIdempotent`.
  public let name: String
  /// A short lowercase phrase without a final period: `request not idempotent`.
  public let description: String

  /// Creates a refusal named `name` (lowerCamelCase, like a case name), described by
  /// `description` (a short lowercase phrase).
  public init(name: String, description: String) {
    self.name = name
    self.description = description
  }
}

extension CompiledPolicy {
  /// Runs `operation` once under the policy, refusing every retry for `refusal`.
  ///
  /// The one attempt is an attempt of the policy like any other: the breaker may refuse it
  /// (``CircuitOpenError``) and counts its failure, the budget gets its deposit, `timeout`
  /// cuts it off, and the limits, throttle and rate are asked. When it fails in a way a rule
  /// would retry, the run stops with the reason ``RetryStopReason/retriesRefused(_:)`` and
  /// throws the error unchanged; an error no rule matches stops it as `errorNotMatched`, as
  /// in any run. Events and metrics report it as any run.
  ///
  ///     let (data, response) = try await policy.run(
  ///       in: environment, refusingRetries: .notIdempotent
  ///     ) { try await session.data(for: post) }
  ///
  /// - Parameters:
  ///   - environment: The clock, random source, classes, hooks, observer, metrics and shared
  ///     state, as for ``run(in:isolation:_:)-(_,_,()->Success)``.
  ///   - refusal: Why no retry may be made.
  ///   - isolation: The caller's actor, which runs `operation`; leave the default.
  ///   - operation: The work to attempt once.
  /// - Returns: The value of the attempt, when it succeeds.
  public func run<Success>(
    in environment: RetryEnvironment,
    refusingRetries refusal: RetryRefusal,
    isolation: isolated (any Actor)? = #isolation,
    _ operation: () async throws -> Success
  ) async throws -> Success {
    try await runOnce(
      in: environment, refusingRetriesFor: refusal, isolation: isolation, operation)
  }
}

/// The places of the refusals among the counters of failed runs in every ``RetryMetrics``.
///
/// The first refusal of each name a process records gets the next place, up to
/// ``count`` − 1 names; the runs refused under any further name share the last place, whose
/// `reason` label is ``overflow``'s name, `retriesRefused`. A label takes few values, as
/// Prometheus wants.
final class RefusalSlots: Sendable {
  /// The places of the process.
  static let shared = RefusalSlots()
  /// The places per policy name: seven names and the shared last place.
  static let count = 8
  /// The refusal the last place counts for.
  static let overflow = RetryRefusal(name: "retriesRefused", description: "retries refused")

  /// The refusals that have a place of their own, in the order of their places, behind a
  /// lock ThreadSanitizer sees (see <doc:ProcessWideState>).
  private let named = Locked<[RetryRefusal]>([])

  /// The place of `refusal`: its name's, given it the first time the name is seen.
  func slot(of refusal: RetryRefusal) -> Int {
    named.withLock { named in
      if let index = named.firstIndex(where: { $0.name == refusal.name }) { return index }
      guard named.count < Self.count - 1 else { return Self.count - 1 }
      named.append(refusal)
      return named.count - 1
    }
  }

  /// The refusal counted at place `slot`, nil while no refusal has it.
  func refusal(atSlot slot: Int) -> RetryRefusal? {
    named.withLock { named in
      if slot < named.count { return named[slot] }
      return slot == Self.count - 1 ? Self.overflow : nil
    }
  }
}

extension CompiledPolicy {
  /// Runs `operation` once under the policy: one attempt, under the breaker, the budget and
  /// `timeout` as any attempt, whose failure a rule would retry ends the run as
  /// `retriesRefused(refusal)` (``run(in:refusingRetries:isolation:_:)``).
  ///
  /// RetryPolicyHTTP runs a request it may not send twice this way (`notIdempotent`), so
  /// that the breaker counts its failure and the events name the reason, without a rewritten
  /// policy.
  package func runOnce<Success>(
    in environment: RetryEnvironment,
    refusingRetriesFor refusal: RetryRefusal,
    isolation: isolated (any Actor)? = #isolation,
    _ operation: () async throws -> Success
  ) async throws -> Success {
    try await runOnce(
      on: environment.clock, in: environment, refusingRetriesFor: refusal, isolation: isolation,
      operation)
  }

  private func runOnce<C: Clock<Duration>, Success>(
    on clock: C,
    in environment: RetryEnvironment,
    refusingRetriesFor refusal: RetryRefusal,
    isolation: isolated (any Actor)?,
    _ operation: () async throws -> Success
  ) async throws -> Success {
    var run = RetryRun(policy: self, environment: environment, clock: clock)
    run.retryRefusal = refusal
    if let wait = try run.startAttempt(in: environment) {
      try await run.admit(after: wait, in: environment, on: clock)
    }
    do {
      let value: Success
      if let limit = attemptTimeout {
        value = try await attempt(1, isolation: isolation) {
          try await timingOut(on: clock, limit: limit, operation)
        }
      } else {
        value = try await attempt(1, isolation: isolation, operation)
      }
      run.finishSucceeded(in: environment)
      return value
    } catch {
      // With retries refused, every decision after a failure ends the run.
      _ = try run.decideRetry(after: error, in: environment)
      throw AttemptTimeoutError.leavingRun(error)
    }
  }
}
