/// The `retryThrottling` of a config, as gRPC reads it.
struct GRPCThrottling: Equatable {
  /// `maxTokens`, 1 … 1000.
  var maxTokens: Int
  /// `tokenRatio` in thousandths, as gRPC keeps it (`0.5466` is 546).
  var milliRatio: Int

  /// The `budget` for this ratio, at most 100%, computed as the checker computes `budget P%`
  /// (P / 100, P = tenths of the thousandths), so that the printed budget reads back equal.
  var budgetRatio: Double { min(Double(milliRatio) / 10, 100) / 100 }
}
