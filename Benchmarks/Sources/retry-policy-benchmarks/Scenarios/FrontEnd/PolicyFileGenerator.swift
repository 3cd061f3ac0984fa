import RetryPolicyTesting

/// Writes deterministic, realistic policy files: one-line policies and blocks, comments,
/// blank lines, every kind of delay and jitter, as a team's shared `.retry` file would have.
struct PolicyFileGenerator {
  private var random: SeededRandomNumberGenerator

  private static let services = [
    "payments", "search", "inventory", "checkout", "profile", "ledger", "notifications",
    "shipping", "auth", "catalog", "pricing", "reviews",
  ]
  private static let errorClasses = [
    "serverError", "timeout", "unavailable", "rateLimited", "connectionReset", "URLError",
    "badGateway", "throttled",
  ]
  private static let hooks = ["refreshToken", "reconnect", "rotateEndpoint"]
  private static let durations = ["50ms", "100ms", "250ms", "500ms", "1s", "2s", "1.5s"]
  private static let caps = ["5s", "10s", "30s", "1m"]

  init(seed: UInt64 = 2024) {
    random = SeededRandomNumberGenerator(seed: seed)
  }

  /// A file of `count` policies with unique names.
  mutating func makeFile(policies count: Int) -> String {
    var text = "# generated retry policies: \(count)\n\n"
    text.reserveCapacity(count * 96)
    for index in 0..<count {
      let name = "\(pick(Self.services))_\(index)"
      if index % 50 == 0 { text += "# section \(index / 50)\n" }
      switch next(10) {
      case 0...5:
        text += "policy \(name) = \(makeRule())\n"
      case 6...8:
        text += "policy \(name) {\n"
        text += "  retry 1 on unauthorized after \(pick(Self.hooks))\n"
        text += "  \(makeRule(hasClasses: true))  # main rule\n"
        text += "  within \(next(5) + 1)m\n  timeout \(next(20) + 5)s\n}\n"
      default:
        text += "policy \(name) {\n  \(makeRule(hasClasses: true))\n  \(makeRule())\n"
        text += "  budget \(next(20) + 5)%\n}\n"
      }
      if index % 7 == 0 { text += "\n" }
    }
    return text
  }

  /// One `retry` rule with a realistic mix of clauses; an `on` clause when `hasClasses`
  /// (a rule before others in a block), otherwise in two rules of three.
  private mutating func makeRule(hasClasses: Bool = false) -> String {
    var parts = ["retry \(next(6) + 1)"]
    if hasClasses || next(3) > 0 {
      let classCount = next(2) + 1
      parts.append(
        "on " + (0..<classCount).map { _ in pick(Self.errorClasses) }.joined(separator: ", "))
    }
    let delayKind = next(5)
    switch delayKind {
    case 0: parts.append("immediately")
    case 1: parts.append("delay \(pick(Self.durations))")
    case 2: parts.append("backoff \(pick(Self.durations)) x1.5")
    case 3: parts.append("backoff \(pick(Self.durations)) +\(pick(Self.durations))")
    default: parts.append("delays 100ms, 500ms, 2s")
    }
    // `jitter` and `max` need a delay to act on.
    switch delayKind == 0 ? 3 : next(4) {
    case 0: parts.append("jitter \(next(30) + 5)%")
    case 1: parts.append("jitter full")
    case 2: parts.append("jitter equal")
    default: break
    }
    if delayKind != 0 && next(2) == 0 { parts.append("max \(pick(Self.caps))") }
    if next(6) == 0 { parts.append("honoring retry-after") }
    return parts.joined(separator: " ")
  }

  private mutating func next(_ bound: Int) -> Int {
    Int(random.next() % UInt64(bound))
  }

  private mutating func pick(_ values: [String]) -> String {
    values[next(values.count)]
  }
}
