/// What a run needs from its host: the clock it waits on, the random source of its jitter,
/// the host's error classes and hooks, and an observer of its events.
///
/// The defaults suit production: the continuous clock, the system's random numbers, no
/// registered names, no observer. Tests use a manual clock and a seeded generator (see the
/// `RetryPolicyTesting` library).
///
///     let environment = RetryEnvironment(
///       errorClasses: ["transient": { ($0 as? URLError)?.code == .timedOut }],
///       hooks: ["refreshToken": { try await session.refreshToken() }])
///     let policy = try compile(policy: text, vocabulary: environment.vocabulary)
///     let data = try await policy.run(in: environment) { try await session.fetch() }
public struct RetryEnvironment: Sendable {
  /// The clock every delay and `timeout` is measured on.
  public var clock: any Clock<Duration>
  /// The random source of jitter.
  ///
  /// Each run draws from its own copy, so a seeded generator gives every run the same
  /// sequence of jitter: reproducible in tests and simulations. Keep the default, the system
  /// generator, where many clients must not retry in step.
  public var random: any RandomNumberGenerator & Sendable
  /// Error classes by name: an error belongs to the class when the predicate returns true.
  ///
  /// A registered name is checked before the type and case names (see ``CompiledPolicy``'s
  /// `run`). Predicates must be quick and must not throw or block.
  public var errorClasses: [String: @Sendable (any Error) -> Bool]
  /// Hooks by name, run by `after NAME` before each retry of that rule, after its delay.
  ///
  /// A hook that throws ends the run with its error.
  public var hooks: [String: @Sendable () async throws -> Void]
  /// Called synchronously with each event of each run, from the running task.
  ///
  /// Keep it quick; to consume events elsewhere, yield them to an `AsyncStream`'s
  /// continuation. Setting an observer turns off the allocation-free path of `run`.
  public var observer: (@Sendable (RetryEvent) -> Void)?

  /// Creates an environment; every part has a default.
  public init(
    clock: some Clock<Duration> = ContinuousClock(),
    random: some RandomNumberGenerator & Sendable = SystemRandomNumberGenerator(),
    errorClasses: [String: @Sendable (any Error) -> Bool] = [:],
    hooks: [String: @Sendable () async throws -> Void] = [:],
    observer: (@Sendable (RetryEvent) -> Void)? = nil
  ) {
    self.clock = clock
    self.random = random
    self.errorClasses = errorClasses
    self.hooks = hooks
    self.observer = observer
  }

  /// The registered error class and hook names, for the compiler to check policies against.
  ///
  /// Error classes matched by type or enum case name are not registered; add them to the
  /// vocabulary's `errorClasses` set before compiling, or the compiler reports them unknown:
  ///
  ///     var vocabulary = environment.vocabulary
  ///     vocabulary.errorClasses?.formUnion(["serverError", "URLError"])
  public var vocabulary: Vocabulary {
    Vocabulary(errorClasses: Set(errorClasses.keys), hooks: Set(hooks.keys))
  }
}
