import Foundation

extension PolicyStore {
  /// Reloads the file whenever it changes, and yields the result of each reload.
  ///
  /// Every `interval` the watcher looks at the file through its path, following symbolic
  /// links at each look, so a Kubernetes ConfigMap update (a new `..data` link) is a change,
  /// as are an edit in place, an atomic rename over the file, and a file deleted and made
  /// again. A change is applied once the file has looked the same for one more interval, so
  /// that a file still being written in place is not read half-written. A file that has
  /// disappeared is reported once (``PolicyReload/diagnostics``) and the policies stay as
  /// they were. The sequence ends when the task iterating it is cancelled.
  ///
  ///     for await reload in store.watch(every: .seconds(5)) {
  ///       if reload.isApplied { logger.info("\(reload)") } else { logger.error("\(reload)") }
  ///     }
  ///
  /// - Parameters:
  ///   - interval: how often to look at the file (1 second by default).
  ///   - clock: the clock that paces the looks (a test passes a virtual one).
  public func watch(
    every interval: Duration = .seconds(1),
    clock: some Clock<Duration> = ContinuousClock()
  ) -> AsyncStream<PolicyReload> {
    AsyncStream { continuation in
      let task = Task {
        var applied = appliedIdentity
        var pending: PolicyFileRead.Identity??
        while !Task.isCancelled {
          do {
            try await clock.sleep(for: interval)
          } catch {
            break
          }
          let identity = PolicyFileRead.Identity(path: path)
          guard identity != applied else {
            pending = nil
            continue
          }
          // A change is applied once the file has stayed the same for one interval, so that
          // a file being written in place is not read half-written.
          guard pending == .some(identity) else {
            pending = .some(identity)
            continue
          }
          pending = nil
          applied = identity
          continuation.yield(apply(PolicyFileRead(path: path)))
        }
        continuation.finish()
      }
      continuation.onTermination = { _ in task.cancel() }
    }
  }
}

/// One read of a store's policy file: its bytes (at most ``PolicyStore/maximumFileSize``) or
/// why they cannot be had, and the identity of the file that was read.
package struct PolicyFileRead: Sendable {
  /// What tells one version of a file from another without reading it.
  ///
  /// The file the path leads to (through symbolic links), its size and its time of
  /// modification. The tool's `check --watch` uses it too.
  package struct Identity: Sendable, Hashable {
    var resolvedPath: String
    var fileNumber: UInt64
    var size: UInt64
    var modification: Double

    /// The identity of the file at `path` now, or nil when there is none.
    package init?(path: String) {
      let resolved = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
      guard let attributes = try? FileManager.default.attributesOfItem(atPath: resolved) else {
        return nil
      }
      resolvedPath = resolved
      fileNumber = (attributes[.systemFileNumber] as? NSNumber)?.uint64Value ?? 0
      size = (attributes[.size] as? NSNumber)?.uint64Value ?? 0
      modification = (attributes[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0
    }
  }

  /// Why a file's bytes cannot be had, as a diagnostic at its start.
  struct Failure: Error {
    var diagnostic: Diagnostic
  }

  /// The identity of the file read, taken just before reading it.
  var identity: Identity?
  /// The bytes, or why there are none.
  var content: Result<[UInt8], Failure>

  /// Reads the file at `path`, following symbolic links, up to the store's limit.
  init(path: String) {
    identity = Identity(path: path)
    let limit = PolicyStore.maximumFileSize
    if let size = identity?.size, size > UInt64(limit) {
      content = .failure(
        Failure(diagnostic: Diagnostic(.fileTooLarge(limitMiB: limit >> 20), at: .fileStart)))
    } else {
      content = Self.read(path, limit: limit)
    }
  }

  /// The bytes of the file, in constant memory beyond the limit: it stops reading one byte
  /// past it.
  static func read(_ path: String, limit: Int) -> Result<[UInt8], Failure> {
    let start = SourceRange.fileStart
    guard let handle = FileHandle(forReadingAtPath: path) else {
      let reason =
        FileManager.default.fileExists(atPath: path) ? "permission denied" : "no such file"
      return .failure(Failure(diagnostic: Diagnostic(.unreadableFile(reason), at: start)))
    }
    defer { try? handle.close() }
    var bytes: [UInt8] = []
    do {
      while bytes.count <= limit {
        guard let chunk = try handle.read(upToCount: min(1 << 20, limit + 1 - bytes.count)),
          !chunk.isEmpty
        else { break }
        bytes += chunk
      }
    } catch {
      return .failure(
        Failure(
          diagnostic: Diagnostic(.unreadableFile(error.localizedDescription), at: start)))
    }
    guard bytes.count <= limit else {
      return .failure(
        Failure(diagnostic: Diagnostic(.fileTooLarge(limitMiB: limit >> 20), at: start)))
    }
    return .success(bytes)
  }
}

extension SourceRange {
  /// The empty range at the start of a text: where a diagnostic about the whole file points.
  fileprivate static let fileStart = SourceRange(
    start: SourceLocation(line: 1, column: 1, offset: 0),
    end: SourceLocation(line: 1, column: 1, offset: 0))
}
