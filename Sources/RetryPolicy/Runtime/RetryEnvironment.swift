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
///
/// ## Shared state
///
/// The state that runs of a policy share (its `budget`'s tokens, its `breaker`'s circuit, its
/// `limit`'s slots, its `throttle`'s window, its `rate`'s tokens) is found in one order, the
/// same for every driver: a budget or breaker bound to the policy's name (``budgets``,
/// ``breakers``), else the environment's one (``budget``, ``breaker``), else the
/// ``registry``'s entry for the policy, made on first use. The default registry,
/// ``RetryStateRegistry/processWide``, keeps one entry per policy value for the process (a
/// breaker: per policy value and clock). A ``CircuitBreaker`` made without a clock reads this
/// environment's ``clock``.
///
/// An environment is cheap to copy and to pass: its parts live in one shared immutable
/// object, replaced when a copy changes a part.
public struct RetryEnvironment: Sendable {
  /// The clock every delay and `timeout` is measured on; a ``CircuitBreaker`` made without
  /// a clock reads it too.
  public var clock: any Clock<Duration> {
    @inlinable get { storage.parts.clock }
    set { update { $0.clock = newValue } }
  }
  /// Whether ``clock`` is the continuous clock, which breakers read as the system's
  /// monotonic clock: kept so that a run does not cast the clock.
  @inlinable
  package var isContinuousClock: Bool { storage.isContinuousClock }

  /// Every part, in one immutable object shared by the copies of the environment.
  ///
  /// Changing a part makes a new one. A run passes one reference, never the dozen parts, and reads
  /// each part as a constant (no exclusivity check, as a `var` of a class would need).
  @usableFromInline
  var storage: Storage
  /// The random source of jitter.
  ///
  /// Each run draws from its own copy, so a seeded generator gives every run the same
  /// sequence of jitter: reproducible in tests and simulations. Keep the default, the system
  /// generator, where many clients must not retry in step.
  public var random: any RandomNumberGenerator & Sendable {
    @inlinable get { storage.parts.random }
    set { update { $0.random = newValue } }
  }
  /// Error classes by name: an error belongs to the class when the predicate returns true.
  ///
  /// A registered name is checked before the type and case names (see ``CompiledPolicy``'s
  /// `run`). Predicates must be quick and must not throw or block.
  public var errorClasses: [String: @Sendable (any Error) -> Bool] {
    @inlinable get { storage.parts.errorClasses }
    set { update { $0.errorClasses = newValue } }
  }
  /// Hooks by name, run by `after NAME` before each retry of that rule, after its delay; each
  /// receives the error that triggered the retry and the number of the attempt that failed.
  ///
  /// A hook that throws ends the run with its error.
  public var hooks: [String: @Sendable (RetryHookContext) async throws -> Void] {
    @inlinable get { storage.parts.hooks }
    set { update { $0.hooks = newValue } }
  }
  /// Called synchronously with each event of each run, from the running task.
  ///
  /// Keep it quick; to consume events elsewhere, yield them to an `AsyncStream`'s
  /// continuation. Setting an observer turns off the allocation-free path of `run`.
  public var observer: (@Sendable (RetryEvent) -> Void)? {
    @inlinable get { storage.parts.observer }
    set { update { $0.observer = newValue } }
  }
  /// The budget that runs of policies with `budget P%` draw on, unless ``budgets`` binds one
  /// to the policy's name; nil leaves it to the ``registry``.
  public var budget: RetryBudget? {
    @inlinable get { storage.parts.budget }
    set { update { $0.budget = newValue } }
  }
  /// Budgets bound to policy names, which win over ``budget`` and the ``registry``.
  ///
  /// A run of the policy named `payments` in a policy file draws on `budgets["payments"]`.
  /// Bind one budget to several names to share it.
  public var budgets: [String: RetryBudget] {
    @inlinable get { storage.parts.budgets }
    set { update { $0.budgets = newValue } }
  }
  /// The circuit breaker that runs of policies with `breaker` use, unless ``breakers`` binds
  /// one to the policy's name; nil leaves it to the ``registry``.
  public var breaker: CircuitBreaker? {
    @inlinable get { storage.parts.breaker }
    set { update { $0.breaker = newValue } }
  }
  /// Circuit breakers bound to policy names, which win over ``breaker`` and the ``registry``.
  public var breakers: [String: CircuitBreaker] {
    @inlinable get { storage.parts.breakers }
    set { update { $0.breakers = newValue } }
  }
  /// Where runs keep the state their policy's runs share, unless the environment binds it.
  ///
  /// The budget, breaker, limit, throttle and rate state of each policy, by name, made on
  /// first use (see ``RetryStateRegistry``): ``RetryStateRegistry/processWide`` unless the
  /// host gives its own.
  public var registry: RetryStateRegistry {
    @inlinable get { storage.parts.registry }
    set { update { $0.registry = newValue } }
  }
  /// The metrics every run in this environment records into, by policy name (see
  /// ``RetryMetrics``); nil records nothing.
  public var metrics: RetryMetrics? {
    @inlinable get { storage.parts.metrics }
    set { update { $0.metrics = newValue } }
  }
  /// Values that other products of this package keep in an environment (such as
  /// `RetryPolicyHTTP`'s breakers per host), by a key type of theirs: the core's types stay
  /// free of their concepts.
  package subscript<Value: Sendable>(extension key: Any.Type, as type: Value.Type) -> Value? {
    get { storage.parts.extensions[ObjectIdentifier(key)] as? Value }
    set { update { $0.extensions[ObjectIdentifier(key)] = newValue } }
  }

  /// Creates an environment; every part has a default, so name only what the runs need.
  ///
  ///     let environment = RetryEnvironment(
  ///       clock: ManualClock(), metrics: metrics, registry: RetryStateRegistry())
  ///
  /// - Parameters:
  ///   - clock: The clock of every delay, `timeout` and `within` (a test's `ManualClock`).
  ///   - random: The random source of jitter (a test's seeded generator).
  ///   - errorClasses: Error classes by name, each a predicate.
  ///   - hooks: The hooks `after NAME` runs before a retry, by name; each receives the error
  ///     and the attempt that failed.
  ///   - observer: Called with each event of each run.
  ///   - metrics: What every run records into.
  ///   - registry: Where runs keep the state that their policy's runs share.
  public init(
    clock: some Clock<Duration> = ContinuousClock(),
    random: some RandomNumberGenerator & Sendable = SystemRandomNumberGenerator(),
    errorClasses: [String: @Sendable (any Error) -> Bool] = [:],
    hooks: [String: @Sendable (RetryHookContext) async throws -> Void] = [:],
    observer: (@Sendable (RetryEvent) -> Void)? = nil,
    metrics: RetryMetrics? = nil,
    registry: RetryStateRegistry = .processWide
  ) {
    storage = Storage(
      Parts(
        clock: clock, random: random, errorClasses: errorClasses, hooks: hooks,
        observer: observer, metrics: metrics, registry: registry))
  }

  /// Creates an environment that gives runs these shared objects, with hooks that take no
  /// arguments: the form of `RetryEnvironment(breaker:)` and `RetryEnvironment(breakers:)`.
  ///
  /// `budget` and `breaker` serve every run of a policy with `budget P%` or `breaker`;
  /// `budgets` and `breakers` bind one to a policy name, which wins. Everything else is as
  /// in ``init(clock:random:errorClasses:hooks:observer:metrics:registry:)``.
  ///
  ///     let breaker = CircuitBreaker()
  ///     let environment = RetryEnvironment(breaker: breaker)
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
    metrics: RetryMetrics? = nil
  ) {
    self.init(
      clock: clock, random: random, errorClasses: errorClasses,
      hooks: hooks.mapValues { hook in { @Sendable _ in try await hook() } },
      observer: observer, metrics: metrics)
    update { parts in
      parts.budget = budget
      parts.budgets = budgets
      parts.breaker = breaker
      parts.breakers = breakers
    }
  }

  /// Changes parts: the environment gets a new storage (environments are configured once
  /// and read on every run, so reads stay plain loads of constants).
  private mutating func update(_ change: (inout Parts) -> Void) {
    var parts = storage.parts
    change(&parts)
    storage = Storage(parts)
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
  /// The parts of an environment, in one immutable object (see
  /// ``RetryEnvironment/storage``).
  @usableFromInline
  final class Storage: Sendable {
    @usableFromInline let parts: Parts
    /// Whether ``Parts/clock`` is the continuous clock.
    @usableFromInline let isContinuousClock: Bool
    /// Whether an observer or metrics watch the runs.
    @usableFromInline let isObserved: Bool
    /// ``Parts/clock`` as an ``ErasedClock``, for a clock other than the continuous and the
    /// suspending clock; nil for those two.
    @usableFromInline let erasedClock: ErasedClock?

    init(_ parts: Parts) {
      self.parts = parts
      isContinuousClock = parts.clock is ContinuousClock
      isObserved = parts.observer != nil || parts.metrics != nil
      erasedClock =
        isContinuousClock || parts.clock is SuspendingClock ? nil : ErasedClock(parts.clock)
    }
  }

  /// The parts of an environment, as its properties give them.
  @usableFromInline
  struct Parts: Sendable {
    @usableFromInline var clock: any Clock<Duration>
    @usableFromInline var random: any RandomNumberGenerator & Sendable
    @usableFromInline var errorClasses: [String: @Sendable (any Error) -> Bool]
    @usableFromInline var hooks: [String: @Sendable (RetryHookContext) async throws -> Void]
    @usableFromInline var observer: (@Sendable (RetryEvent) -> Void)?
    @usableFromInline var budget: RetryBudget?
    @usableFromInline var budgets: [String: RetryBudget] = [:]
    @usableFromInline var breaker: CircuitBreaker?
    @usableFromInline var breakers: [String: CircuitBreaker] = [:]
    @usableFromInline var metrics: RetryMetrics?
    @usableFromInline var registry: RetryStateRegistry
    var extensions: [ObjectIdentifier: any Sendable] = [:]

    init(
      clock: any Clock<Duration>,
      random: any RandomNumberGenerator & Sendable,
      errorClasses: [String: @Sendable (any Error) -> Bool],
      hooks: [String: @Sendable (RetryHookContext) async throws -> Void],
      observer: (@Sendable (RetryEvent) -> Void)?,
      metrics: RetryMetrics?,
      registry: RetryStateRegistry
    ) {
      self.clock = clock
      self.random = random
      self.errorClasses = errorClasses
      self.hooks = hooks
      self.observer = observer
      self.metrics = metrics
      self.registry = registry
    }
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
    storage.isObserved
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
  /// The shared state of a run of `policy` in this environment, in the order of
  /// ``RetryEnvironment``'s "Shared state": bound by name, the environment's own, the
  /// registry's; one look-up in the registry at most.
  package func sharedState(for policy: borrowing CompiledPolicy) -> PolicyState {
    guard policy.hasSharedState else { return PolicyState() }
    let name = policy.name
    let boundBudget = name.flatMap { budgets.isEmpty ? nil : budgets[$0] } ?? budget
    let boundBreaker = name.flatMap { breakers.isEmpty ? nil : breakers[$0] } ?? breaker
    let needsRegistry =
      (policy.budgetRatio != nil && boundBudget == nil)
      || (policy.breaker != nil && boundBreaker == nil) || policy.limit != nil
      || policy.throttle != nil || policy.rate != nil
    var state = needsRegistry ? registry.state(for: policy, clock: clock) : PolicyState()
    if policy.budgetRatio != nil, let boundBudget { state.budget = boundBudget }
    if policy.breaker != nil, let boundBreaker { state.breaker = boundBreaker }
    return state
  }

  /// The budget a run of `policy` in this environment draws on: none without `budget P%`.
  @usableFromInline
  package func budget(for policy: borrowing CompiledPolicy) -> RetryBudget? {
    guard policy.budgetRatio != nil else { return nil }
    if !budgets.isEmpty, let name = policy.name, let bound = budgets[name] { return bound }
    return budget ?? registry.state(for: policy, clock: clock).budget
  }

  /// The breaker a run of `policy` in this environment uses: none without `breaker P%`.
  @usableFromInline
  package func breaker(for policy: borrowing CompiledPolicy) -> CircuitBreaker? {
    guard policy.breaker != nil else { return nil }
    if !breakers.isEmpty, let name = policy.name, let bound = breakers[name] { return bound }
    return breaker ?? registry.state(for: policy, clock: clock).breaker
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
