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
/// - The state a policy's runs share lives in the store's ``registry``, by name: a reload
///   that changes anything else (a delay, a count) keeps the budget's tokens, the circuit's
///   state and window, the limit's slots, the throttle's window and the rate's tokens; a
///   reload that changes one of those clauses starts that part afresh (the others keep
///   theirs), and a reload that removes the policy forgets its state.
/// - ``handle(_:)`` resolves a name once: the handle follows reloads and reads the current
///   policy with one atomic load.
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

  /// Where the runs of the store's policies keep the state they share, by name (see
  /// ``RetryStateRegistry``); every reload keeps each entry whose clause is unchanged.
  public let registry: RetryStateRegistry

  private let state: Locked<Snapshot>
  /// Every name the store has had and its cell, read without the lock.
  private let directory = PolicyDirectory()
  /// The environment of runs given none: the store's registry and metrics, made once.
  private let defaultEnvironment: RetryEnvironment

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
    registry = RetryStateRegistry()
    defaultEnvironment = RetryEnvironment(metrics: metrics, registry: registry)
    let states = registry.apply(policies)
    let first = Snapshot(policies: policies, states: states, version: read.version, previous: nil)
    for name in first.names {
      if let cell = first.cells[name] { directory.append(name, cell) }
    }
    state = Locked(first)
  }

  /// The name messages give the file: its path, or `<empty path>` for an empty one.
  var displayName: String { Self.displayName(of: path) }

  private static func displayName(of path: String) -> String {
    path.isEmpty ? "<empty path>" : path
  }

  /// The current policy of that name, or nil when the file has none.
  ///
  /// This sits on every call a service makes, so it takes no lock and allocates nothing: a
  /// search of the names the store has had (in order for a few, by hash for more), and one
  /// atomic load of the name's current policy, which each reload publishes.
  public subscript(name: String) -> CompiledPolicy? {
    directory.policy(named: name)
  }

  /// The current policy of that name.
  ///
  /// Throws ``PolicyStoreError/unknownPolicy(_:suggestion:)`` when the file has no policy of
  /// that name.
  public func policy(named name: String) throws(PolicyStoreError) -> CompiledPolicy {
    guard let policy = self[name] else {
      throw .unknownPolicy(name, suggestion: Suggestion.nearest(to: name, in: names))
    }
    return policy
  }

  /// The budget the runs of that policy draw on (for a policy with `budget P%`), for a
  /// host's metrics: its ``RetryBudget/tokens`` show how close the retries are to the bound.
  public func budget(named name: String) -> RetryBudget? {
    state.withLock { $0.entries[name]?.state.budget }
  }

  /// The circuit breaker the runs of that policy use (for a policy with `breaker`), for a
  /// host's metrics or an operator's ``CircuitBreaker/isolate()``.
  public func breaker(named name: String) -> CircuitBreaker? {
    state.withLock { $0.entries[name]?.state.breaker }
  }

  /// A handle on the policy of that name, resolved once, that follows reloads: reading its
  /// ``PolicyHandle/policy`` costs one atomic load, without the search of the name that
  /// ``subscript(_:)`` makes.
  ///
  ///     let payments = try store.handle("payments")
  ///     let receipt = try await payments.run { try await api.charge(order) }
  ///
  /// Throws ``PolicyStoreError/unknownPolicy(_:suggestion:)`` when the file has no policy of
  /// that name now.
  public func handle(_ name: String) throws(PolicyStoreError) -> PolicyHandle {
    let (cell, names) = state.withLock { snapshot in
      (snapshot.entries[name] == nil ? nil : snapshot.cells[name], snapshot.names)
    }
    guard let cell else {
      throw .unknownPolicy(name, suggestion: Suggestion.nearest(to: name, in: names))
    }
    return PolicyHandle(name: name, cell: cell, store: self)
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
  /// ``CompiledPolicy/run(in:isolation:_:)-(_,_,()->Success)`` throws.
  public func run<Success>(
    _ name: String,
    in environment: RetryEnvironment = .standard,
    _ operation: () async throws -> Success
  ) async throws -> Success {
    guard let cell = directory.cell(named: name), !cell.isRemoved else {
      throw PolicyStoreError.unknownPolicy(
        name, suggestion: Suggestion.nearest(to: name, in: names))
    }
    return try await run(cell.entry, in: environment, operation)
  }

  /// Runs `operation` under `entry`'s policy, its shared state the store's registry's.
  func run<Success>(
    _ entry: StoreEntry, in environment: RetryEnvironment,
    _ operation: () async throws -> Success
  ) async throws -> Success {
    // Counted so that a reload that removes the name can say that runs of it are in flight.
    entry.runs.enter()
    defer { entry.runs.leave() }
    // The default environment: the store's own, made once (no copy per run).
    if environment.storage === RetryEnvironment.standard.storage {
      return try await entry.policy.run(in: defaultEnvironment, operation)
    }
    let bindsRegistry =
      entry.policy.hasSharedState && environment.registry === RetryStateRegistry.processWide
    let bindsMetrics = metrics != nil && environment.metrics == nil
    guard bindsRegistry || bindsMetrics else {
      return try await entry.policy.run(in: environment, operation)
    }
    var bound = environment
    if bindsMetrics { bound.metrics = metrics }
    if bindsRegistry { bound.registry = registry }
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
      let states = registry.apply(policies)
      let next = Snapshot(
        policies: policies, states: states, version: read.version, previous: snapshot)
      let changed = next.changes(from: snapshot)
      let removedInUse = snapshot.names.compactMap { name -> (String, Int)? in
        guard next.entries[name] == nil, let runs = snapshot.entries[name]?.runs else {
          return nil
        }
        let count = runs.current
        return count > 0 ? (name, count) : nil
      }
      for name in next.names where snapshot.cells[name] == nil {
        if let cell = next.cells[name] { directory.append(name, cell) }
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

/// A policy of a store and the state its runs share, as one reload made them.
final class StoreEntry: Sendable {
  let policy: CompiledPolicy
  /// The policy's shared state, from the store's registry.
  let state: PolicyState
  /// The runs of the name in flight; kept across reloads while the name stays.
  let runs: RunCount

  init(policy: CompiledPolicy, state: PolicyState, runs: RunCount) {
    self.policy = policy
    self.state = state
    self.runs = runs
  }
}

/// What a store keeps at one moment: the policies by name, and the state of each.
private struct Snapshot: Sendable {
  var entries: [String: StoreEntry]
  /// The names in the order of the file.
  var names: [String]
  /// Every name's cell, removed names' included: a handle follows its name when it returns.
  var cells: [String: PolicyCell]
  var version: PolicyFileVersion?
  var generation: Int

  /// The snapshot of `policies` and their `states`, keeping from `previous` the entry of
  /// every name whose policy and state did not change.
  init(
    policies: [CompiledPolicy], states: [String: PolicyState], version: PolicyFileVersion?,
    previous: Snapshot?
  ) {
    var entries: [String: StoreEntry] = [:]
    var names: [String] = []
    var cells = previous?.cells ?? [:]
    for policy in policies {
      guard let name = policy.name, entries[name] == nil else { continue }
      names.append(name)
      let state = states[name] ?? PolicyState()
      if let old = previous?.entries[name], old.policy == policy, old.state.isSame(as: state) {
        entries[name] = old
        continue
      }
      let entry = StoreEntry(
        policy: policy, state: state, runs: previous?.entries[name]?.runs ?? RunCount(0))
      if let cell = cells[name] {
        cell.publish(entry)
      } else {
        cells[name] = PolicyCell(entry)
      }
      entries[name] = entry
    }
    for name in previous?.names ?? [] where entries[name] == nil {
      cells[name]?.markRemoved()
    }
    self.entries = entries
    self.names = names
    self.cells = cells
    self.version = version
    generation = previous.map { $0.generation + 1 } ?? 0
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
