import RetryPolicy

extension RetryRefusal {
  /// The request may not be sent twice: its method is not idempotent and it has no
  /// `Idempotency-Key` header, or its body is a stream.
  ///
  /// A run of such a request stops with `RetryStopReason.retriesRefused(_:)`
  /// carrying this refusal when its one attempt fails in a way a rule would retry: events and
  /// summaries print `request not idempotent`, and the `reason` label of
  /// `retry_policy_runs_total` is `notIdempotent`.
  ///
  ///     if case .failed(.retriesRefused(.notIdempotent)) = summary.outcome { … }
  public static let notIdempotent = RetryRefusal(
    name: "notIdempotent", description: "request not idempotent")
}
