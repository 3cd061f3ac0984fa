import RetryPolicy

extension ExplainRendering {
  /// What the worst-case total leaves out: the waits of `rate` and of `limit N queue M`,
  /// which the driver counts in a run's time but which depend on the other runs sharing
  /// their state (`simulate` shows them); empty for a policy without them.
  static func admissionWaitsText(_ policy: CompiledPolicy) -> String {
    var waits: [String] = []
    if policy.rate != nil { waits.append("for a '\(Keyword.rate.text)' token") }
    if case .fixed(_, let queue)? = policy.limit, queue > 0 {
      waits.append("in the line of '\(Keyword.limit.text)'")
    }
    guard !waits.isEmpty else { return "" }
    let bound =
      policy.deadline.map { "until '\(Keyword.within.text) \($0.policyText)' refuses it" }
      ?? "without bound when other runs share them"
    return "; the rules' delays only: each attempt may also wait "
      + waits.joined(separator: " and ") + ", " + bound
  }
}
