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

  /// The names the compiler can check a policy against: the registered hooks, with error
  /// classes left open.
  ///
  /// Error classes also match by type name and enum case name, which no registry lists, so
  /// this vocabulary accepts every class name and checks only `after` hooks. To check class
  /// names too, list the type and case names with ``vocabulary(errorClasses:)``.
  ///
  ///     let policy = try compile(policy: text, vocabulary: environment.vocabulary)
  public var vocabulary: Vocabulary {
    Vocabulary(errorClasses: nil, hooks: Set(hooks.keys))
  }

  /// The names the compiler can check a policy against, error classes closed: the registered
  /// classes plus the type and case names given, and the registered hooks.
  ///
  ///     let vocabulary = environment.vocabulary(errorClasses: ["serverError", "URLError"])
  ///     let policy = try compile(policy: "retry 3 on servrError", vocabulary: vocabulary)
  ///     // <policy>:1:12: error: unknown error class 'servrError'; did you mean 'serverError'?
  public func vocabulary(errorClasses typeAndCaseNames: Set<String>) -> Vocabulary {
    Vocabulary(
      errorClasses: Set(errorClasses.keys).union(typeAndCaseNames), hooks: Set(hooks.keys))
  }
}
