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

  private let state: Locked<Snapshot>

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
      throw PolicyCompileError(
        diagnostics: analysis.diagnostics, sourceName: Self.displayName(of: path))
    }
    state = Locked(Snapshot(policies: policies, version: read.version, previous: nil))
  }

  /// The name messages give the file: its path, or `<empty path>` for an empty one.
  var displayName: String { Self.displayName(of: path) }

  private static func displayName(of path: String) -> String {
    path.isEmpty ? "<empty path>" : path
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
    // Counted so that a reload that removes the name can say that runs of it are in flight.
    entry.runs.enter()
    defer { entry.runs.leave() }
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
    let version = read.version.flatMap { PolicyReload.versionName($0.resolvedPath, of: path) }
    guard let policies = analysis.policies else {
      let generation = state.withLock { $0.generation }
      var reload = PolicyReload(
        sourceName: displayName, diagnostics: analysis.diagnostics, changedPolicies: [],
        generation: generation)
      reload.version = version
      return reload
    }
    return state.withLock { snapshot in
      let next = Snapshot(policies: policies, version: read.version, previous: snapshot)
      let changed = next.changes(from: snapshot)
      let removedInUse = snapshot.names.compactMap { name -> (String, Int)? in
        guard next.entries[name] == nil, let runs = snapshot.entries[name]?.runs else {
          return nil
        }
        let count = runs.current
        return count > 0 ? (name, count) : nil
      }
      snapshot = next
      var reload = PolicyReload(
        sourceName: displayName, diagnostics: [], changedPolicies: changed,
        generation: next.generation, warnings: analysis.warnings)
      reload.version = version
      reload.removedWhileRunning = removedInUse.map(\.0)
      reload.runsOfRemoved = removedInUse.reduce(0) { $0 + $1.1 }
      return reload
    }
  }

  /// The version of the file the store last applied (or was made from).
  var appliedVersion: PolicyFileVersion? {
    state.withLock { $0.version }
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
      // A file with no policy would remove every name, its budget and its breaker.
      guard !analysis.policies.isEmpty else {
        return (nil, [Diagnostic(.noPoliciesInStore, at: .fileStart)], [])
      }
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
    /// The runs of the name in flight; kept across reloads while the name stays.
    var runs: RunCount
  }

  var entries: [String: Entry]
  /// The names in the order of the file.
  var names: [String]
  /// The entries in the order of `names`, for the lookup of a small file.
  var ordered: [Entry]
  var version: PolicyFileVersion?
  var generation: Int

  /// The snapshot of `policies`, keeping from `previous` the budget of every name whose
  /// `budget` clause did not change.
  init(policies: [CompiledPolicy], version: PolicyFileVersion?, previous: Snapshot?) {
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
      entries[name] = Entry(
        policy: policy, budget: budget, breaker: breaker,
        runs: previous?.entries[name]?.runs ?? RunCount(0))
    }
    self.entries = entries
    self.names = names
    ordered = names.compactMap { entries[$0] }
    self.version = version
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

/// How many runs of a name are in flight.
final class RunCount: Sendable {
  private let count: Atomic<Int>

  init(_ count: Int) { self.count = Atomic(count) }

  /// A run starts.
  func enter() { count.wrappingAdd(1, ordering: .relaxed) }

  /// A run ends.
  func leave() { count.wrappingSubtract(1, ordering: .relaxed) }

  /// The runs in flight now.
  var current: Int { count.load(ordering: .relaxed) }
}

/// The result of reading a store's file again: applied, or why not.
public struct PolicyReload: Sendable, CustomStringConvertible {
  /// The path of the file, as the store was given it.
  public var sourceName: String
  /// Why the file was not applied; empty when it was.
  ///
  /// Its errors (and warnings), or a diagnostic saying that it cannot be read, is not a
  /// regular file, is too large, or has no policy.
  public var diagnostics: [Diagnostic]
  /// The names of the policies that were added, changed or removed, when applied.
  public var changedPolicies: [String]
  /// The store's ``PolicyStore/generation`` after this reload.
  public var generation: Int
  /// The warnings of an applied file.
  public var warnings: [Diagnostic] = []
  /// The version of the file that was read: the path its symbolic links resolve to, relative
  /// to the folder of ``sourceName`` when it lies below it (a ConfigMap's
  /// `..2026_11_27_10_00_00.123/policies.retry`), else absolute; nil when nothing was read.
  public var version: String?
  /// The names this reload removed while runs of them were in flight.
  ///
  /// Such runs finish under
  /// the policy they started with; new runs of these names throw
  /// ``PolicyStoreError/unknownPolicy(_:suggestion:)``.
  public var removedWhileRunning: [String] = []
  /// How many runs of ``removedWhileRunning`` were in flight.
  public var runsOfRemoved = 0

  /// Whether the file was applied.
  public var isApplied: Bool { diagnostics.isEmpty }

  /// Creates the result of a reload.
  public init(
    sourceName: String, diagnostics: [Diagnostic], changedPolicies: [String], generation: Int,
    warnings: [Diagnostic] = []
  ) {
    self.sourceName = sourceName
    self.diagnostics = diagnostics
    self.changedPolicies = changedPolicies
    self.generation = generation
    self.warnings = warnings
  }

  /// `FILE: applied (payments changed)`, with `FILE → VERSION` when the path leads through
  /// symbolic links elsewhere; or each diagnostic as `FILE:LINE:COL: error: …`, then
  /// `FILE → VERSION: not applied`.
  public var description: String {
    let named = version.map { "\(sourceName) → \($0)" } ?? sourceName
    guard isApplied else {
      let lines = diagnostics.map { "\(sourceName):\($0.description)" }
      return (lines + (version == nil ? [] : ["\(named): not applied"]))
        .joined(separator: "\n")
    }
    var what =
      changedPolicies.isEmpty
      ? "no policy changed" : changedPolicies.joined(separator: ", ") + " changed"
    if !removedWhileRunning.isEmpty {
      let runs = runsOfRemoved == 1 ? "1 run" : "\(runsOfRemoved) runs"
      what +=
        "; \(removedWhileRunning.joined(separator: ", ")) removed while \(runs) of it went on"
    }
    return "\(named): applied (\(what))"
  }

  /// How a reload names the version of `path` it read: nil when `resolved` is the path
  /// itself (no symbolic link on the way), the part below the path's folder when it lies
  /// there, else `resolved` whole.
  package static func versionName(_ resolved: String, of path: String) -> String? {
    let slash = path.lastIndex(of: "/")
    let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
    let folder = slash.map { String(path[..<$0]) } ?? "."
    let base = PolicyFileReader.resolvedPath(Array((folder.isEmpty ? "/" : folder).utf8))
    let prefix = String(decoding: base, as: UTF8.self)
    let below =
      resolved.hasPrefix(prefix + "/") ? String(resolved.dropFirst(prefix.count + 1)) : nil
    if let below {
      return below == name ? nil : below
    }
    return resolved == path ? nil : resolved
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
