import Foundation
import Synchronization

/// The policies of one policy file, kept current while a service runs: the file can be
/// reloaded, and a reload that has errors changes nothing.
///
/// A server reads its policies from a file that reaches production as configuration (a
/// mounted Kubernetes ConfigMap, a config-only deploy, an operator changing a budget during an
/// incident). A store reads and checks that file once when it is made, and again on
/// ``reload()`` or, through ``watch(every:clock:)``, whenever the file changes:
///
///     let store = try PolicyStore(path: "/etc/payments/policies.retry")
///     let receipt = try await store.run("payments") { try await api.charge(order) }
///
///     Task {
///       for await reload in store.watch() where !reload.isApplied {
///         logger.error("policies.retry not applied: \(reload)")
///       }
///     }
///
/// - A reload swaps every policy of the file at once: no run sees half of a file.
/// - A reload whose file has an error, cannot be read or is larger than
///   ``maximumFileSize`` keeps every policy as it was and reports why in
///   ``PolicyReload/diagnostics``.
/// - A run takes its policy when it starts and finishes under it, whatever reloads happen
///   meanwhile.
/// - The budget of a policy with `budget P%` belongs to the policy's name: a reload that
///   changes anything else (a delay, a count) keeps its tokens; a reload that changes the
///   `budget` clause itself, or removes the policy, starts a fresh budget.
/// - So does the circuit breaker of a policy with `breaker`: a reload that keeps the
///   `breaker` clause keeps the circuit's state and window.
///
/// A store is safe to use from any task.
public final class PolicyStore: Sendable {
  /// The largest policy file a store reads: 64 MiB, as the tool's commands read.
  public static let maximumFileSize = 64 << 20

  /// The path the store reads, as given (symbolic links are followed at every read).
  public let path: String
  /// The vocabulary every read of the file is checked against.
  public let vocabulary: Vocabulary
  /// The metrics every ``run(_:in:_:)`` records into, unless its environment has its own.
  public let metrics: RetryMetrics?

  private let state: Mutex<Snapshot>

  /// Reads and checks the policy file at `path`.
  ///
  /// Throws ``PolicyCompileError`` (naming the file by its path) with every diagnostic when
  /// the file has an error, cannot be read, or is larger than ``maximumFileSize``. The runs of
  /// ``run(_:in:_:)`` record into `metrics`, by policy name, across reloads.
  public init(path: String, vocabulary: Vocabulary = .open, metrics: RetryMetrics? = nil) throws {
    self.path = path
    self.vocabulary = vocabulary
    self.metrics = metrics
    let read = PolicyFileRead(path: path)
    let analysis = Self.check(read, vocabulary: vocabulary)
    guard let policies = analysis.policies else {
      throw PolicyCompileError(diagnostics: analysis.diagnostics, sourceName: path)
    }
    state = Mutex(Snapshot(policies: policies, identity: read.identity, previous: nil))
  }

  /// The current policy of that name, or nil when the file has none.
  ///
  /// This sits on every call a service makes, so it takes a lock and a lookup, and
  /// allocates nothing.
  public subscript(name: String) -> CompiledPolicy? {
    state.withLock { $0.entry(named: name)?.policy }
  }

  /// The current policy of that name.
  ///
  /// Throws ``PolicyStoreError/unknownPolicy(_:suggestion:)`` when the file has no policy of
  /// that name.
  public func policy(named name: String) throws(PolicyStoreError) -> CompiledPolicy {
    let (policy, names) = state.withLock { ($0.entry(named: name)?.policy, $0.names) }
    guard let policy else {
      throw .unknownPolicy(name, suggestion: Suggestion.nearest(to: name, in: names))
    }
    return policy
  }

  /// The budget the runs of that policy draw on (for a policy with `budget P%`), for a
  /// host's metrics: its ``RetryBudget/tokens`` show how close the retries are to the bound.
  public func budget(named name: String) -> RetryBudget? {
    state.withLock { $0.entry(named: name)?.budget }
  }

  /// The circuit breaker the runs of that policy use (for a policy with `breaker`), for a
  /// host's metrics or an operator's ``CircuitBreaker/isolate()``.
  public func breaker(named name: String) -> CircuitBreaker? {
    state.withLock { $0.entries[name]?.breaker }
  }

  /// The names of the current policies, in the order of the file.
  public var names: [String] {
    state.withLock { $0.names }
  }

  /// How many reloads have been applied since the store was made (0 at first).
  public var generation: Int {
    state.withLock { $0.generation }
  }

  /// Runs `operation` under the current policy of that name.
  ///
  /// The policy is taken once, when the run starts. Its budget is the one the store keeps for
  /// the name (see ``PolicyStore``), unless `environment` gives one.
  ///
  /// Throws ``PolicyStoreError/unknownPolicy(_:suggestion:)`` before calling the operation
  /// when the file has no policy of that name; otherwise what
  /// ``CompiledPolicy/run(in:_:)`` throws.
  public func run<Success>(
    _ name: String,
    in environment: RetryEnvironment = RetryEnvironment(),
    _ operation: () async throws -> Success
  ) async throws -> Success {
    let entry = state.withLock { $0.entry(named: name) }
    guard let entry else {
      throw PolicyStoreError.unknownPolicy(
        name, suggestion: Suggestion.nearest(to: name, in: names))
    }
    let bindsBudget =
      entry.budget != nil && environment.budget == nil && environment.budgets[name] == nil
    let bindsBreaker =
      entry.breaker != nil && environment.breaker == nil && environment.breakers[name] == nil
    let bindsMetrics = metrics != nil && environment.metrics == nil
    guard bindsBudget || bindsBreaker || bindsMetrics else {
      return try await entry.policy.run(in: environment, operation)
    }
    var bound = environment
    if bindsMetrics { bound.metrics = metrics }
    if bindsBudget { bound.budgets[name] = entry.budget }
    if bindsBreaker { bound.breakers[name] = entry.breaker }
    return try await entry.policy.run(in: bound, operation)
  }

  /// Reads and checks the file again; applies it when it has no error.
  ///
  /// A file with an error, one that cannot be read and one larger than
  /// ``maximumFileSize`` change nothing: the result's ``PolicyReload/diagnostics`` say why.
  @discardableResult
  public func reload() -> PolicyReload {
    apply(PolicyFileRead(path: path))
  }

  /// Applies a read of the file, unless it has errors.
  func apply(_ read: PolicyFileRead) -> PolicyReload {
    let analysis = Self.check(read, vocabulary: vocabulary)
    guard let policies = analysis.policies else {
      let generation = state.withLock { $0.generation }
      return PolicyReload(
        sourceName: path, diagnostics: analysis.diagnostics, changedPolicies: [],
        generation: generation)
    }
    return state.withLock { snapshot in
      let next = Snapshot(policies: policies, identity: read.identity, previous: snapshot)
      let changed = next.changes(from: snapshot)
      snapshot = next
      return PolicyReload(
        sourceName: path, diagnostics: [], changedPolicies: changed,
        generation: next.generation, warnings: analysis.warnings)
    }
  }

  /// The identity of the file the store last applied (or was made from).
  var appliedIdentity: PolicyFileRead.Identity? {
    state.withLock { $0.identity }
  }

  /// The compiled policies of a read, or the diagnostics that keep it from being applied.
  private static func check(
    _ read: PolicyFileRead, vocabulary: Vocabulary
  ) -> (policies: [CompiledPolicy]?, diagnostics: [Diagnostic], warnings: [Diagnostic]) {
    switch read.content {
    case .failure(let failure):
      return (nil, [failure.diagnostic], [])
    case .success(let bytes):
      let analysis = analyze(policyFile: bytes, vocabulary: vocabulary)
      if analysis.hasErrors { return (nil, analysis.diagnostics, []) }
      return (analysis.policies, [], analysis.warnings)
    }
  }
}

/// What a store keeps at one moment: the policies by name, and the budget of each.
private struct Snapshot: Sendable {
  /// A policy and the budget its runs draw on (for a policy with `budget P%`).
  struct Entry: Sendable {
    var policy: CompiledPolicy
    var budget: RetryBudget?
    var breaker: CircuitBreaker?
  }

  var entries: [String: Entry]
  /// The names in the order of the file.
  var names: [String]
  /// The entries in the order of `names`, for the lookup of a small file.
  var ordered: [Entry]
  var identity: PolicyFileRead.Identity?
  var generation: Int

  /// The snapshot of `policies`, keeping from `previous` the budget of every name whose
  /// `budget` clause did not change.
  init(policies: [CompiledPolicy], identity: PolicyFileRead.Identity?, previous: Snapshot?) {
    var entries: [String: Entry] = [:]
    var names: [String] = []
    for policy in policies {
      guard let name = policy.name, entries[name] == nil else { continue }
      names.append(name)
      var budget: RetryBudget?
      if policy.budgetRatio != nil {
        let old = previous?.entries[name]
        budget =
          old?.policy.budgetRatio == policy.budgetRatio
          ? old?.budget ?? RetryBudget() : RetryBudget()
      }
      var breaker: CircuitBreaker?
      if policy.breaker != nil {
        let old = previous?.entries[name]
        breaker =
          old?.policy.breaker == policy.breaker
          ? old?.breaker ?? CircuitBreaker() : CircuitBreaker()
      }
      entries[name] = Entry(policy: policy, budget: budget, breaker: breaker)
    }
    self.entries = entries
    self.names = names
    ordered = names.compactMap { entries[$0] }
    self.identity = identity
    generation = previous.map { $0.generation + 1 } ?? 0
  }

  /// The entry of that name: a file of a few policies is searched in order (comparing a
  /// short name is cheaper than hashing it); a larger one through the dictionary.
  @inline(__always)
  func entry(named name: String) -> Entry? {
    guard names.count <= 8 else { return entries[name] }
    for index in names.indices where names[index] == name { return ordered[index] }
    return nil
  }

  /// The names added, removed or changed since `previous`, in order.
  func changes(from previous: Snapshot) -> [String] {
    let changed = names.filter { previous.entries[$0]?.policy != entries[$0]?.policy }
    return changed + previous.names.filter { entries[$0] == nil }
  }
}

/// The result of reading a store's file again: applied, or why not.
public struct PolicyReload: Sendable, CustomStringConvertible {
  /// The path of the file.
  public var sourceName: String
  /// Why the file was not applied; empty when it was.
  ///
  /// Its errors (and warnings), or a diagnostic saying that it cannot be read or is too large.
  public var diagnostics: [Diagnostic]
  /// The names of the policies that were added, changed or removed, when applied.
  public var changedPolicies: [String]
  /// The store's ``PolicyStore/generation`` after this reload.
  public var generation: Int
  /// The warnings of an applied file.
  public var warnings: [Diagnostic] = []

  /// Whether the file was applied.
  public var isApplied: Bool { diagnostics.isEmpty }

  /// `FILE: applied (payments changed)`, or each diagnostic as `FILE:LINE:COL: error: …`.
  public var description: String {
    guard isApplied else {
      return diagnostics.map { "\(sourceName):\($0.description)" }.joined(separator: "\n")
    }
    let what =
      changedPolicies.isEmpty
      ? "no policy changed" : changedPolicies.joined(separator: ", ") + " changed"
    return "\(sourceName): applied (\(what))"
  }
}

/// An error of a ``PolicyStore``.
public enum PolicyStoreError: Error, Sendable, Hashable, CustomStringConvertible {
  /// The file has no policy of that name; `suggestion` is the nearest name it has.
  case unknownPolicy(String, suggestion: String?)

  /// The message, such as `no policy 'paymnts' in the store; did you mean 'payments'?`.
  public var description: String {
    switch self {
    case .unknownPolicy(let name, let suggestion):
      "no policy '\(name)' in the store" + Suggestion.didYouMean(suggestion)
    }
  }
}
