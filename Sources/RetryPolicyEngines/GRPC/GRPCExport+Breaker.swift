import RetryPolicy

extension GRPCExport {
  /// gRPC's service config has no circuit breaker: the clause is left out, with a note.
  static func noteBreaker(
    _ policy: CompiledPolicy, locator: ExportLocator, result: inout ExportResult
  ) {
    guard policy.breaker != nil else { return }
    result.note(
      "gRPC's service config has no circuit breaker: 'breaker' is left out; keep a"
        + " CircuitBreaker in the client",
      at: locator.policyWide(.breaker))
  }
}
