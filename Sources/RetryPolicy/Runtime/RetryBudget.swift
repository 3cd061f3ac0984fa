import Foundation
import Synchronization

/// A retry budget: a token bucket that limits the retries of many runs together, owned and
/// shared by the host.
///
/// A policy with `budget P%` draws on a budget: make one per downstream service (as gRPC's
/// retry throttle belongs to the channel) and pass it to every run that calls that service,
/// in ``RetryEnvironment/budget`` or, by policy name, in ``RetryEnvironment/budgets``.
///
///     let payments = RetryBudget()
///     let environment = RetryEnvironment(budget: payments)
///     let receipt = try await policy.run(in: environment) { try await api.charge(order) }
///
/// In the spirit of gRPC retry throttling and Finagle's `RetryBudget`:
///
/// - a new bucket holds ``initialTokens`` (10) tokens: the floor, which lets a new or quiet
///   client retry a little before it has made any first attempts;
/// - the first attempt of each run deposits P/100 of a token (0.1 for `budget 10%`);
/// - the attempt of each retry withdraws one token when it starts, so a run cancelled while it
///   waits spends nothing; with less than one token, the retry is not made and the run throws
///   its last error (``RetryStopReason/budgetExhausted``);
/// - the bucket never holds more than ``maximumTokens`` (100) tokens, so a long healthy period
///   does not save up an unbounded burst of retries for the next outage.
///
/// So retries ≤ 10 + P/100 × first attempts: 1,000 runs against a failing service under
/// `budget 10%` make at most 1,000 + 100 + 10 attempts. Tokens are kept in millionths, so
/// deposits round down to a millionth of a token. A budget is safe to use from any task.
///
/// A run of a policy with `budget P%` that is given no budget draws on a process-wide one
/// kept for that policy value: every run of equal policies (the same text compiled twice
/// included) shares it, for the life of the process. A policy without `budget` draws on no
/// budget, even when the environment has one.
public final class RetryBudget: Sendable {
  /// The tokens a new bucket holds: the floor of retries allowed before any deposit.
  public static let initialTokens = 10
  /// The most tokens a bucket holds.
  public static let maximumTokens = 100

  private static let unit = 1_000_000

  private let microtokens: Atomic<Int>

  /// Creates a bucket holding the floor of ``initialTokens`` tokens.
  public init() {
    self.microtokens = Atomic(Self.initialTokens * Self.unit)
  }

  /// The tokens left: one is spent on each retry.
  public var tokens: Double {
    Double(microtokens.load(ordering: .relaxed)) / Double(Self.unit)
  }

  /// Deposits `ratio` of a token (clamped to [0, 1]; NaN counts as 0) for a first attempt,
  /// up to the maximum.
  package func recordFirstAttempt(ratio: Double) {
    let clamped = Self.clampedRatio(ratio)
    let deposit = Int((clamped * Double(Self.unit)).rounded(.down))
    guard deposit > 0 else { return }
    let ceiling = Self.maximumTokens * Self.unit
    var current = microtokens.load(ordering: .relaxed)
    while current < ceiling {
      let next = Swift.min(current + deposit, ceiling)
      let (exchanged, original) = microtokens.compareExchange(
        expected: current, desired: next, ordering: .relaxed)
      if exchanged { return }
      current = original
    }
  }

  /// `ratio` within [0, 1], NaN counting as 0: the ratio a policy's `budgetRatio` stands for.
  package static func clampedRatio(_ ratio: Double) -> Double {
    ratio.isNaN ? 0 : Swift.min(Swift.max(ratio, 0), 1)
  }

  /// Whether a whole token is left, withdrawing nothing.
  package var hasToken: Bool {
    microtokens.load(ordering: .relaxed) >= Self.unit
  }

  /// Withdraws one token for a retry; false, and nothing withdrawn, when less than one is left.
  package func withdrawForRetry() -> Bool {
    var current = microtokens.load(ordering: .relaxed)
    while current >= Self.unit {
      let (exchanged, original) = microtokens.compareExchange(
        expected: current, desired: current - Self.unit, ordering: .relaxed)
      if exchanged { return true }
      current = original
    }
    return false
  }
}
