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
  /// The clock every delay and `timeout` is measured on; a ``CircuitBreaker`` made without
  /// a clock reads it too.
  public var clock: any Clock<Duration> {
    didSet { isContinuousClock = clock is ContinuousClock }
  }
  /// Whether ``clock`` is the continuous clock, which breakers read as the system's
  /// monotonic clock: kept so that a run does not cast the clock.
  @usableFromInline
  package private(set) var isContinuousClock: Bool
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
  /// Hooks by name, run by `after NAME` before each retry of that rule, after its delay; each
  /// receives the error that triggered the retry and the number of the attempt that failed.
  ///
  /// A hook that throws ends the run with its error.
  public var hooks: [String: @Sendable (RetryHookContext) async throws -> Void]
  /// Called synchronously with each event of each run, from the running task.
  ///
  /// Keep it quick; to consume events elsewhere, yield them to an `AsyncStream`'s
  /// continuation. Setting an observer turns off the allocation-free path of `run`.
  public var observer: (@Sendable (RetryEvent) -> Void)?
  /// The budget that runs of policies with `budget P%` draw on, unless ``budgets`` binds one
  /// to the policy's name.
  ///
  /// Without either, a budgeted policy draws on a process-wide budget kept for its value (see
  /// ``RetryBudget``).
  public var budget: RetryBudget?
  /// Budgets bound to policy names, which win over ``budget``.
  ///
  /// A run of the policy named `payments` in a policy file draws on `budgets["payments"]`.
  /// Bind one budget to several names to share it.
  public var budgets: [String: RetryBudget]
  /// The circuit breaker that runs of policies with `breaker` use, unless ``breakers`` binds
  /// one to the policy's name.
  ///
  /// Without either, a policy with `breaker` uses a process-wide breaker kept for its value
  /// (see ``CircuitBreaker``).
  public var breaker: CircuitBreaker?
  /// Circuit breakers bound to policy names, which win over ``breaker``.
  public var breakers: [String: CircuitBreaker]
  /// Breakers by downstream host: `RetryPolicyHTTP` runs each request with the breaker of its
  /// URL's host, which wins over ``breaker`` and ``breakers``.
  public var breakerGroup: CircuitBreakerGroup?

  /// Creates an environment whose hooks take no arguments; every part has a default.
  public init(
    clock: some Clock<Duration> = ContinuousClock(),
    random: some RandomNumberGenerator & Sendable = SystemRandomNumberGenerator(),
    errorClasses: [String: @Sendable (any Error) -> Bool] = [:],
    hooks: [String: @Sendable () async throws -> Void] = [:],
    observer: (@Sendable (RetryEvent) -> Void)? = nil,
    budget: RetryBudget? = nil,
    budgets: [String: RetryBudget] = [:],
    breaker: CircuitBreaker? = nil,
    breakers: [String: CircuitBreaker] = [:],
    breakerGroup: CircuitBreakerGroup? = nil
  ) {
    self.init(
      clock: clock, random: random, errorClasses: errorClasses,
      contextHooks: hooks.isEmpty ? [:] : hooks.mapValues { hook in { _ in try await hook() } },
      observer: observer, budget: budget, budgets: budgets, breaker: breaker,
      breakers: breakers, breakerGroup: breakerGroup)
  }

  /// Creates an environment whose hooks receive the error and the attempt that failed.
  ///
  ///     let environment = RetryEnvironment(hooks: [
  ///       "refreshToken": { context in
  ///         if case APIError.unauthorized = context.error { try await auth.refresh() }
  ///       }
  ///     ])
  public init(
    clock: some Clock<Duration> = ContinuousClock(),
    random: some RandomNumberGenerator & Sendable = SystemRandomNumberGenerator(),
    errorClasses: [String: @Sendable (any Error) -> Bool] = [:],
    hooks: [String: @Sendable (RetryHookContext) async throws -> Void],
    observer: (@Sendable (RetryEvent) -> Void)? = nil,
    budget: RetryBudget? = nil,
    budgets: [String: RetryBudget] = [:],
    breaker: CircuitBreaker? = nil,
    breakers: [String: CircuitBreaker] = [:],
    breakerGroup: CircuitBreakerGroup? = nil
  ) {
    self.init(
      clock: clock, random: random, errorClasses: errorClasses, contextHooks: hooks,
      observer: observer, budget: budget, budgets: budgets, breaker: breaker,
      breakers: breakers, breakerGroup: breakerGroup)
  }

  private init(
    clock: some Clock<Duration>,
    random: some RandomNumberGenerator & Sendable,
    errorClasses: [String: @Sendable (any Error) -> Bool],
    contextHooks: [String: @Sendable (RetryHookContext) async throws -> Void],
    observer: (@Sendable (RetryEvent) -> Void)?,
    budget: RetryBudget?,
    budgets: [String: RetryBudget],
    breaker: CircuitBreaker?,
    breakers: [String: CircuitBreaker],
    breakerGroup: CircuitBreakerGroup?
  ) {
    self.clock = clock
    self.isContinuousClock = clock is ContinuousClock
    self.random = random
    self.errorClasses = errorClasses
    self.hooks = contextHooks
    self.observer = observer
    self.budget = budget
    self.budgets = budgets
    self.breaker = breaker
    self.breakers = breakers
    self.breakerGroup = breakerGroup
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

extension RetryEnvironment {
  /// Whether anything observes the runs in this environment: a run then reports every event
  /// through ``report(_:)``, and `run` leaves its allocation-free path.
  ///
  /// A recorder of metrics (contract §15) joins the observer here, so that every driver
  /// reports to it too.
  @inlinable
  package var isObserved: Bool {
    observer != nil
  }

  /// Reports `event` of a run: the one place where every driver (``RetryRun``, the hedging
  /// driver, ``RunCircuit``) hands over a run's and an attempt's outcomes, its refusals by
  /// cause and its summary with durations.
  ///
  /// The event is built only when something observes it.
  @inline(__always)
  package func report(_ event: @autoclosure () -> RetryEvent) {
    guard let observer else { return }
    observer(event())
  }
}

extension RetryEnvironment {
  /// The clock a breaker made without one reads for a run in this environment: nil for the
  /// continuous clock, which it reads as the system's monotonic clock.
  @inlinable
  package var breakerClock: (any Clock<Duration>)? {
    isContinuousClock ? nil : clock
  }
}

extension RetryEnvironment {
  /// The default environment, made once: the forms of `run` that take no environment use
  /// it, so that a run does not build the default's empty registries anew.
  @usableFromInline
  static let standard = RetryEnvironment()
}

/// What a hook knows about the retry it comes before.
public struct RetryHookContext: Sendable {
  /// The error of the attempt that failed, which the retry follows.
  public var error: any Error
  /// The number of the attempt that failed, from 1; the retry is attempt `attempt + 1`.
  public var attempt: Int

  /// Creates a context.
  public init(error: any Error, attempt: Int) {
    self.error = error
    self.attempt = attempt
  }
}

/// What an operation knows about the attempt it makes: `policy.run { attempt in … }`.
public struct RetryAttempt: Sendable, Hashable {
  /// The attempt's number, from 1 (the first attempt) up.
  public var number: Int

  /// Creates the attempt numbered `number`.
  public init(number: Int) {
    self.number = number
  }
}
