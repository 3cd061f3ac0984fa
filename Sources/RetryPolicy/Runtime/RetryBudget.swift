import Synchronization

/// The token bucket behind `budget P%`, shared by all runs of one compiled policy.
///
/// Placeholder: the runtime issue fills in deposits, withdrawals and the floor.
package final class RetryBudget: Sendable {
  /// The fraction of first attempts that may be retried, such as 0.1.
  package let ratio: Double

  package init(ratio: Double) {
    self.ratio = ratio
  }
}
