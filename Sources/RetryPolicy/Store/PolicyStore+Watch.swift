import Foundation

extension PolicyStore {
  /// The shortest interval ``watch(every:clock:)`` looks at its file: 10 milliseconds.
  public static let minimumWatchInterval = Duration.milliseconds(10)
  /// The longest interval ``watch(every:clock:)`` waits between looks: 24 hours.
  public static let maximumWatchInterval = Duration.seconds(24 * 3600)

  /// `interval` within ``minimumWatchInterval`` … ``maximumWatchInterval``: zero and
  /// negative intervals become the minimum, longer ones the maximum.
  static func clampedWatchInterval(_ interval: Duration) -> Duration {
    min(max(interval, minimumWatchInterval), maximumWatchInterval)
  }

  /// Reloads the file whenever it changes, and yields the result of each reload.
  ///
  /// Every `interval` the watcher looks at the file through its path (a `stat`, which never
  /// opens the file), following symbolic links at each look, so a Kubernetes ConfigMap update
  /// (a new `..data` link) is a change, as are an edit in place, an atomic rename over the
  /// file, a file deleted and made again, and a file replaced by something that is not a
  /// regular file. A change is applied once the file has looked the same for one more
  /// interval (the stability window):
  ///
  /// - A file replaced atomically (renamed over the path, or a ConfigMap's `..data` swap) is
  ///   never read half-written, whatever the interval.
  /// - A file written in place is read once it has stopped changing for one interval. A
  ///   writer that stalls for longer than that, halfway through, can be read half-written:
  ///   the half with an error is refused, an empty file is refused (`no-policies`), but a
  ///   half that happens to be a valid file is applied. Write policy files atomically
  ///   (a temporary file renamed over the path), as `retry-policy fmt` and Kubernetes do.
  ///
  /// A file that has disappeared, or cannot be read, is reported once
  /// (``PolicyReload/diagnostics``) and the policies stay as they were. Only a regular file is
  /// read: a named pipe, a socket, a device or a folder in its place is refused without being
  /// opened for reading in a way that can block. The sequence ends when the task iterating it
  /// is cancelled.
  ///
  ///     for await reload in store.watch(every: .seconds(5)) {
  ///       if reload.isApplied { logger.info("\(reload)") } else { logger.error("\(reload)") }
  ///     }
  ///
  /// - Parameters:
  ///   - interval: how often to look at the file (1 second by default); clamped to
  ///     ``minimumWatchInterval`` … ``maximumWatchInterval`` (zero or negative: the minimum).
  ///   - clock: the clock that paces the looks (a test passes a virtual one).
  public func watch(
    every interval: Duration = .seconds(1),
    clock: some Clock<Duration> = ContinuousClock()
  ) -> AsyncStream<PolicyReload> {
    let interval = Self.clampedWatchInterval(interval)
    return AsyncStream { continuation in
      let task = Task {
        var applied = appliedVersion
        var pending: PolicyFileVersion??
        while !Task.isCancelled {
          do {
            try await clock.sleep(for: interval)
          } catch {
            break
          }
          let version = PolicyFileVersion(path: path)
          guard version != applied else {
            pending = nil
            continue
          }
          // A change is applied once the file has stayed the same for one interval, so that
          // a file being written in place is not read while it is still changing.
          guard pending == .some(version) else {
            pending = .some(version)
            continue
          }
          pending = nil
          applied = version
          continuation.yield(apply(PolicyFileRead(path: path)))
        }
        continuation.finish()
      }
      continuation.onTermination = { _ in task.cancel() }
    }
  }
}

/// One read of a store's policy file through ``PolicyFileReader``: its bytes (at most
/// ``PolicyStore/maximumFileSize``, a regular file only) or why they cannot be had, and the
/// version of the file that was read.
struct PolicyFileRead: Sendable {
  /// Why a file's bytes cannot be had, as a diagnostic at its start.
  struct Failure: Error {
    var diagnostic: Diagnostic
  }

  /// The version of the file read (or of what the path leads to, when it was not read).
  var version: PolicyFileVersion?
  /// The bytes, or why there are none.
  var content: Result<[UInt8], Failure>

  /// Reads the file at `path`, following symbolic links, up to the store's limit; never
  /// blocks on a named pipe or a device.
  init(path: String) {
    switch PolicyFileReader.read(path: path, limit: PolicyStore.maximumFileSize) {
    case .success(let contents):
      version = contents.version
      content = .success(contents.bytes)
    case .failure(let error):
      version = PolicyFileVersion(path: path)
      content = .failure(Failure(diagnostic: Diagnostic(Self.message(error), at: .fileStart)))
    }
  }

  /// The store's message for a file that cannot be read.
  static func message(_ error: PolicyFileReadError) -> DiagnosticMessage {
    switch error {
    case .system(let code) where code == ENOENT: .unreadableFile("no such file")
    case .system(let code) where code == EACCES: .unreadableFile("permission denied")
    case .system: .unreadableFile(error.reason)
    case .notRegularFile(let kind): .notRegularFile(kind.phrase, keepsPolicies: true)
    case .tooLarge: .fileTooLarge(limitMiB: PolicyStore.maximumFileSize >> 20)
    }
  }
}

extension SourceRange {
  /// The empty range at the start of a text: where a diagnostic about the whole file points.
  static let fileStart = SourceRange(
    start: SourceLocation(line: 1, column: 1, offset: 0),
    end: SourceLocation(line: 1, column: 1, offset: 0))
}
