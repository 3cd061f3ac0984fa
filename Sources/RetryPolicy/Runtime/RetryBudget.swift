import Synchronization

/// The token bucket behind `budget P%`, shared by all runs of one compiled policy (and its
/// copies), from any task.
///
/// In the spirit of gRPC retry throttling and Finagle's `RetryBudget`:
///
/// - the bucket starts with ``initialTokens`` (10) tokens: the floor, which lets a new or
///   quiet client retry a little before it has made any first attempts;
/// - each first attempt of a run deposits `ratio` tokens (0.1 for `budget 10%`);
/// - each retry withdraws one token; with less than one token left, the retry is not made and
///   the run throws its error (``RetryStopReason/budgetExhausted``);
/// - the bucket never holds more than ``maximumTokens`` (100) tokens, so a long healthy period
///   does not save up an unbounded burst of retries for the next outage.
///
/// So over the life of a policy, retries ≤ 10 + ratio × first attempts: 1,000 runs against a
/// failing service under `budget 10%` make at most 1,000 + 100 + 10 attempts. Tokens are kept
/// in millionths, so deposits round down to a millionth of a token.
package final class RetryBudget: Sendable {
  /// The tokens a new bucket holds: the floor of retries allowed before any deposit.
  package static let initialTokens = 10
  /// The most tokens the bucket holds.
  package static let maximumTokens = 100

  private static let unit = 1_000_000

  /// The fraction of first attempts that may be retried, such as 0.1.
  package let ratio: Double
  private let deposit: Int
  private let microtokens: Atomic<Int>

  /// Creates a full-floor bucket for `ratio` (clamped to [0, 1]; NaN counts as 0).
  package init(ratio: Double) {
    self.ratio = ratio
    let clamped = ratio.isNaN ? 0 : Swift.min(Swift.max(ratio, 0), 1)
    self.deposit = Int((clamped * Double(Self.unit)).rounded(.down))
    self.microtokens = Atomic(Self.initialTokens * Self.unit)
  }

  /// The tokens left, for tests and statistics.
  package var tokens: Double {
    Double(microtokens.load(ordering: .relaxed)) / Double(Self.unit)
  }

  /// Deposits `ratio` tokens for a first attempt, up to the maximum.
  package func recordFirstAttempt() {
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

extension CompiledPolicy {
  /// The budget the runtime draws on: the shared bucket, when the policy has `budget P%`.
  var activeBudget: RetryBudget? {
    budgetRatio == nil ? nil : budget
  }
}
