// The library's one platform file (the only one that imports the C library): the one reader
// of policy files (the store, its watcher and every command of the tool read through it),
// the folder watch of `check --watch`, the circuit breaker's clock and thread identity, and
// the rate limiter's clocks.
#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// What kind of file a path leads to, as `stat` tells it.
package enum PolicyFileKind: Sendable, Hashable {
  case regular, folder, namedPipe, socket, device, other

  /// The kind of a `st_mode`.
  init(mode: mode_t) {
    switch mode & S_IFMT {
    case S_IFREG: self = .regular
    case S_IFDIR: self = .folder
    case S_IFIFO: self = .namedPipe
    case S_IFSOCK: self = .socket
    case S_IFCHR, S_IFBLK: self = .device
    default: self = .other
    }
  }

  /// `a folder`, `a named pipe`, `a socket`, `a device`.
  package var phrase: String {
    switch self {
    case .regular: "a regular file"
    case .folder: "a folder"
    case .namedPipe: "a named pipe"
    case .socket: "a socket"
    case .device: "a device"
    case .other: "not a file"
    }
  }
}

/// One version of a file, told from another without reading it: the file its path leads to
/// (through symbolic links), its kind, size and time of modification.
///
/// A ConfigMap swap changes `resolvedPath` (`..data` leads to a new `..2026_11_27_…` folder),
/// an atomic rename the inode, an edit in place the size or the time.
package struct PolicyFileVersion: Sendable, Hashable {
  /// The path with every symbolic link resolved (`realpath`), or the path as given when it
  /// cannot be resolved.
  package var resolvedPath: String
  package var kind: PolicyFileKind
  var device: UInt64
  var inode: UInt64
  var size: UInt64
  var modifiedSeconds: Int64
  var modifiedNanoseconds: Int64

  /// The version of the file at `path` now, or nil when there is none (a dangling link).
  ///
  /// Never opens the file, so it never blocks.
  package init?(path: String) {
    self.init(path: Array(path.utf8))
  }

  /// The version of the file at `path` (as bytes, which may not be UTF-8) now, or nil.
  package init?(path: [UInt8]) {
    var info = stat()
    guard !path.isEmpty, path.withCPath({ stat($0, &info) }) == 0 else { return nil }
    self.init(info, resolvedPath: PolicyFileReader.resolvedPath(path))
  }

  init(_ info: stat, resolvedPath: [UInt8]) {
    self.resolvedPath = String(decoding: resolvedPath, as: UTF8.self)
    kind = PolicyFileKind(mode: info.st_mode)
    device = UInt64(truncatingIfNeeded: info.st_dev)
    inode = UInt64(truncatingIfNeeded: info.st_ino)
    size = UInt64(truncatingIfNeeded: info.st_size)
    #if canImport(Darwin)
      modifiedSeconds = Int64(info.st_mtimespec.tv_sec)
      modifiedNanoseconds = Int64(info.st_mtimespec.tv_nsec)
    #else
      modifiedSeconds = Int64(info.st_mtim.tv_sec)
      modifiedNanoseconds = Int64(info.st_mtim.tv_nsec)
    #endif
  }
}

/// Why a policy file's bytes cannot be had.
package enum PolicyFileReadError: Error, Sendable, Hashable {
  /// A C library call failed with this `errno`.
  case system(Int32)
  /// The path leads to something other than a regular file (a named pipe, a socket, a
  /// device, a folder), which is not read.
  case notRegularFile(PolicyFileKind)
  /// The file is larger than the limit.
  case tooLarge

  /// A lowercase phrase: `no such file or directory`, `a named pipe, not a regular file`.
  package var reason: String {
    switch self {
    case .system(let code): PolicyFileReader.describe(errorNumber: code)
    case .notRegularFile(let kind): "\(kind.phrase), not a regular file"
    case .tooLarge: PolicyFileReader.describe(errorNumber: EFBIG)
    }
  }
}

/// Reads policy files, never with a call that can block on what a path leads to.
///
/// A path is opened with `O_NONBLOCK` (so opening a named pipe that has no writer returns at
/// once), the descriptor is checked with `fstat`, and anything but a regular file is refused
/// with ``PolicyFileReadError/notRegularFile(_:)`` before a byte is read. A command-line tool
/// that was pointed at a stream on purpose (`check <(cat a.retry)`, a named pipe given as an
/// operand) asks for ``Streams/allowed``: a path that `stat` shows to be a named pipe or a
/// device is then opened as a stream and read to its end, which waits for its writer; a
/// folder and a socket are still refused. The store and every
/// watcher read with ``Streams/refused``.
package enum PolicyFileReader {
  /// The most bytes read from one file or stream: 64 MiB.
  package static let sizeLimit = 64 << 20

  /// Whether named pipes and devices are read as streams.
  package enum Streams: Sendable {
    /// Only regular files are read (the store, the watchers, files found in folders).
    case refused
    /// A named pipe or a device given explicitly is read to its end, waiting for its writer.
    case allowed
  }

  /// What one read gives: the bytes, and the version of the file they came from.
  package struct Contents: Sendable {
    package var bytes: [UInt8]
    /// The version read (from `fstat` of the open descriptor); nil for a stream.
    package var version: PolicyFileVersion?
  }

  /// Reads the file at `path` (symbolic links followed), at most `limit` bytes.
  ///
  /// A regular file larger than `limit` is refused before a byte is read; a stream is read
  /// until one byte past the limit, so memory stays within it.
  package static func read(
    path: String, streams: Streams = .refused, limit: Int = sizeLimit
  ) -> Result<Contents, PolicyFileReadError> {
    read(path: Array(path.utf8), streams: streams, limit: limit)
  }

  /// Reads the file at `path` given as bytes (a name that is not UTF-8 included).
  package static func read(
    path: [UInt8], streams: Streams = .refused, limit: Int = sizeLimit
  ) -> Result<Contents, PolicyFileReadError> {
    guard !path.isEmpty else { return .failure(.system(ENOENT)) }
    if case .allowed = streams {
      var info = stat()
      let kind = path.withCPath { stat($0, &info) } == 0 ? PolicyFileKind(mode: info.st_mode) : nil
      if kind == .namedPipe || kind == .device {
        // Named on purpose: a blocking open waits for the pipe's writer, and the read keeps
        // what the writer wrote before it closed.
        let descriptor = path.withCPath { open($0, O_RDONLY | O_CLOEXEC) }
        guard descriptor >= 0 else { return .failure(.system(errno)) }
        defer { _ = close(descriptor) }
        return readToEnd(descriptor, limit: limit).map { Contents(bytes: $0, version: nil) }
      }
    }
    let descriptor = path.withCPath { open($0, O_RDONLY | O_NONBLOCK | O_CLOEXEC) }
    guard descriptor >= 0 else {
      let code = errno
      // A socket cannot be opened (ENXIO): name its kind.
      var info = stat()
      if code == ENXIO, path.withCPath({ stat($0, &info) }) == 0 {
        return .failure(.notRegularFile(PolicyFileKind(mode: info.st_mode)))
      }
      return .failure(.system(code))
    }
    defer { _ = close(descriptor) }
    var info = stat()
    guard fstat(descriptor, &info) == 0 else { return .failure(.system(errno)) }
    let kind = PolicyFileKind(mode: info.st_mode)
    switch kind {
    case .regular:
      guard UInt64(truncatingIfNeeded: info.st_size) <= UInt64(limit) else {
        return .failure(.tooLarge)
      }
      let version = PolicyFileVersion(info, resolvedPath: resolvedPath(path))
      return readToEnd(descriptor, limit: limit).map { Contents(bytes: $0, version: version) }
    case .folder, .socket, .namedPipe, .device, .other:
      return .failure(.notRegularFile(kind))
    }
  }

  /// Reads a descriptor to its end (a file, a pipe, a terminal, a device), retrying after
  /// interruptions; past `limit` bytes it stops with ``PolicyFileReadError/tooLarge``, having
  /// held at most `limit` bytes.
  package static func readToEnd(
    _ descriptor: Int32, limit: Int = sizeLimit
  ) -> Result<[UInt8], PolicyFileReadError> {
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 1 << 16)
    while true {
      let count = chunk.withUnsafeMutableBytes { raw in
        systemRead(descriptor, raw.baseAddress, raw.count)
      }
      if count > 0 {
        guard count <= limit - bytes.count else { return .failure(.tooLarge) }
        bytes += chunk[0..<count]
      } else if count == 0 {
        return .success(bytes)
      } else if errno != EINTR {
        return .failure(.system(errno))
      }
    }
  }

  /// The path with every symbolic link resolved, or the path as given when it cannot be.
  package static func resolvedPath(_ path: [UInt8]) -> [UInt8] {
    guard let resolved = path.withCPath({ realpath($0, nil) }) else { return path }
    defer { free(resolved) }
    return Array(UnsafeRawBufferPointer(start: resolved, count: strlen(resolved)))
  }

  /// A lowercase phrase for an `errno` value: `no such file or directory`.
  package static func describe(errorNumber: Int32) -> String {
    guard let text = strerror(errorNumber) else { return "error \(errorNumber)" }
    return String(cString: text).lowercased()
  }
}

/// Folders watched for any change of their entries: inotify on Linux.
///
/// `retry-policy check --watch` asks it at every look, which costs one read that does not
/// wait; where the platform has no such facility, ``init(folders:)`` returns nil and the
/// caller walks the folders at every look instead.
package final class PolicyFolderWatch: Sendable {
  private let descriptor: Int32

  /// Starts watching `folders` (paths as bytes), or nil.
  ///
  /// A file or link created, removed, renamed, written or its attributes changed is a
  /// change. Nil where the platform has no such facility, or when a folder cannot be watched.
  package init?(folders: [[UInt8]]) {
    #if os(Linux)
      let descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
      guard descriptor >= 0 else { return nil }
      let mask = UInt32(
        IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_MODIFY | IN_CLOSE_WRITE
          | IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF)
      for folder in folders {
        guard folder.withCPath({ inotify_add_watch(descriptor, $0, mask) }) >= 0 else {
          _ = close(descriptor)
          return nil
        }
      }
      self.descriptor = descriptor
    #else
      return nil
    #endif
  }

  deinit { _ = close(descriptor) }

  /// Whether anything changed since the last call.
  ///
  /// Reads every pending event without waiting. A failed read counts as a change.
  package func takeChanges() -> Bool {
    var changed = false
    var buffer = [UInt8](repeating: 0, count: 1 << 16)
    while true {
      let count = buffer.withUnsafeMutableBytes { raw in
        systemRead(descriptor, raw.baseAddress, raw.count)
      }
      if count > 0 {
        changed = true
      } else if count < 0, errno == EINTR {
        continue
      } else {
        return changed || (count < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
      }
    }
  }
}

// MARK: The circuit breaker's clock and thread

/// The monotonic clock read coarsely, in nanoseconds (Linux `CLOCK_MONOTONIC_COARSE`, Darwin
/// `CLOCK_MONOTONIC_RAW_APPROX`), or nil where there is no such clock.
@inline(__always)
func platformCoarseMonotonicNanoseconds() -> Int64? {
  #if canImport(Glibc) || canImport(Musl)
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC_COARSE, &time)
    return Int64(time.tv_sec) &* 1_000_000_000 &+ Int64(time.tv_nsec)
  #elseif canImport(Darwin)
    return Int64(truncatingIfNeeded: clock_gettime_nsec_np(CLOCK_MONOTONIC_RAW_APPROX))
  #else
    return nil
  #endif
}

/// The monotonic clock that ``platformCoarseMonotonicNanoseconds()`` reads coarsely, read
/// precisely, in nanoseconds (Linux `CLOCK_MONOTONIC`, Darwin `CLOCK_MONOTONIC_RAW`), or nil
/// where there is no such pair of clocks: what a rate's tokens and an adaptive limit's
/// latencies are timed on (a reading of `ContinuousClock` and its conversion from `Duration`
/// cost several times more).
@inline(__always)
func platformMonotonicNanoseconds() -> Int64? {
  #if canImport(Glibc) || canImport(Musl)
    var time = timespec()
    guard clock_gettime(CLOCK_MONOTONIC, &time) == 0 else { return nil }
    return Int64(time.tv_sec) &* 1_000_000_000 &+ Int64(time.tv_nsec)
  #elseif canImport(Darwin)
    return Int64(truncatingIfNeeded: clock_gettime_nsec_np(CLOCK_MONOTONIC_RAW))
  #else
    return nil
  #endif
}

/// The resolution of ``platformCoarseMonotonicNanoseconds()`` in nanoseconds (a tick of the
/// kernel's timer, 1–10 ms on Linux), or nil where it has none.
func platformCoarseMonotonicResolution() -> Int64? {
  #if canImport(Glibc) || canImport(Musl)
    var resolution = timespec()
    guard clock_getres(CLOCK_MONOTONIC_COARSE, &resolution) == 0 else { return nil }
    return Int64(resolution.tv_sec) &* 1_000_000_000 &+ Int64(resolution.tv_nsec)
  #elseif canImport(Darwin)
    var resolution = timespec()
    guard clock_getres(CLOCK_MONOTONIC_RAW_APPROX, &resolution) == 0 else { return nil }
    return Int64(resolution.tv_sec) &* 1_000_000_000 &+ Int64(resolution.tv_nsec)
  #else
    return nil
  #endif
}

/// The current thread's handle as a number (0 where it cannot be had).
@inline(__always)
func platformThreadIdentity() -> UInt64 {
  #if canImport(Glibc) || canImport(Musl)
    return UInt64(UInt(pthread_self()))
  #elseif canImport(Darwin)
    return UInt64(UInt(bitPattern: pthread_self()))
  #else
    return 0
  #endif
}

private func systemRead(_ descriptor: Int32, _ bytes: UnsafeMutableRawPointer?, _ count: Int)
  -> Int
{
  read(descriptor, bytes, count)
}

extension Array where Element == UInt8 {
  /// Calls `body` with the bytes as a NUL-terminated C string.
  fileprivate func withCPath<Result>(_ body: (UnsafePointer<CChar>) -> Result) -> Result {
    (self + [0]).withUnsafeBufferPointer { buffer in
      buffer.withMemoryRebound(to: CChar.self) { chars in
        guard let base = chars.baseAddress else { return body("") }
        return body(base)
      }
    }
  }
}
