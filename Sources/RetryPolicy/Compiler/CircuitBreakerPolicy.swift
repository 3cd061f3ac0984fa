/// `breaker P% [over D] [min N] [for D]`: when to open a policy's circuit, and for how long.
///
/// The circuit opens when, in the last ``window``, at least ``minimumAttempts`` attempts were
/// made and at least ``failurePercent`` percent of them failed; it stays open for
/// ``openDuration``, then lets one attempt through. The state itself belongs to a
/// ``CircuitBreaker`` the host owns.
///
///     // breaker 50% over 30s min 20 for 5s
///     CircuitBreakerPolicy(failurePercent: 50)
public struct CircuitBreakerPolicy: Sendable, Hashable {
  /// The default of `over`: 30 seconds.
  public static let defaultWindow: Duration = .seconds(30)
  /// The default of `min`: 20 attempts.
  public static let defaultMinimumAttempts = 20
  /// The default of `for`: 5 seconds.
  public static let defaultOpenDuration: Duration = .seconds(5)

  /// The allowed failure percentages, `P` of `breaker P%`.
  public static let failurePercentRange = 1...100
  /// The allowed lengths of `over`: 1 second to 1 day.
  public static let windowRange: ClosedRange<Duration> = .seconds(1) ... .seconds(86_400)
  /// The allowed values of `min`.
  public static let minimumAttemptsRange = 1...1_000_000
  /// The allowed lengths of `for`: 100 milliseconds to 1 day.
  public static let openDurationRange: ClosedRange<Duration> =
    .milliseconds(100) ... .seconds(86_400)

  /// The share of failed attempts, in percent (1 … 100), at or above which the circuit opens.
  public var failurePercent: Int
  /// How far back attempts count (`over`), in about ten buckets.
  public var window: Duration
  /// The fewest attempts in the window before the circuit may open (`min`).
  public var minimumAttempts: Int
  /// How long the circuit stays open before it lets a probe through (`for`).
  public var openDuration: Duration

  /// Creates a breaker clause; the defaults are those of the language.
  public init(
    failurePercent: Int,
    window: Duration = CircuitBreakerPolicy.defaultWindow,
    minimumAttempts: Int = CircuitBreakerPolicy.defaultMinimumAttempts,
    openDuration: Duration = CircuitBreakerPolicy.defaultOpenDuration
  ) {
    self.failurePercent = failurePercent
    self.window = window
    self.minimumAttempts = minimumAttempts
    self.openDuration = openDuration
  }

  /// The failure share as a fraction, such as 0.5 for `breaker 50%`.
  public var failureRatio: Double {
    Double(failurePercent) / 100
  }

  /// Whether `failures` of `attempts` open the circuit: at least ``minimumAttempts`` attempts
  /// and at least ``failurePercent`` percent of them failed, compared exactly.
  package func opens(failures: Int, of attempts: Int) -> Bool {
    guard attempts > 0, attempts >= minimumAttempts else { return false }
    let percent = Swift.min(Swift.max(failurePercent, 0), 100)
    // failures / attempts ≥ percent / 100, in integers; both factors stay far from overflow
    // (attempts are counted in at most 2^40 per window, percent at most 100).
    let (lhs, lhsOverflow) = failures.multipliedReportingOverflow(by: 100)
    let (rhs, rhsOverflow) = attempts.multipliedReportingOverflow(by: percent)
    guard !lhsOverflow, !rhsOverflow else { return failures >= attempts }
    return lhs >= rhs
  }
}
