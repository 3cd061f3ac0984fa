// The one file of the tool that imports the C library. Everything else calls `Platform`.
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#elseif canImport(ucrt)
  import ucrt
#endif

/// Set by the SIGWINCH handler, cleared by ``Platform/takeWindowResize()``.
///
/// An atomic, not a plain variable: the handler runs on whichever thread takes the signal,
/// the REPL reads it on another, and a lock-free atomic is safe in a signal handler.
private let windowWasResized = Atomic<Bool>(false)

/// The terminal settings to put back, saved when raw mode starts; read by the signal handler.
#if !os(Windows)
  nonisolated(unsafe) private var savedTerminalSettings: termios?

  /// Puts the terminal back as it was, then dies of the signal as if no handler were installed.
  private func restoreTerminalAndReraise(_ signalNumber: Int32) {
    if var settings = savedTerminalSettings {
      _ = tcsetattr(STDIN_FILENO, TCSAFLUSH, &settings)
    }
    signal(signalNumber, SIG_DFL)
    raise(signalNumber)
  }
#endif

/// The C library calls the tool makes: descriptors, errors, files, signals and the terminal.
///
/// Windows has no terminal raw mode here: the REPL then reads lines as from a pipe.
enum Platform {
  /// Standard input's descriptor.
  static let standardInput: Int32 = 0
  /// Standard output's descriptor.
  static let standardOutput: Int32 = 1
  /// Standard error's descriptor.
  static let standardError: Int32 = 2

  /// The `errno` of a broken pipe.
  static let brokenPipe: Int32 = EPIPE
  /// The `errno` of a full disk.
  static let noSpace: Int32 = ENOSPC
  /// The `errno` of a write to a closed descriptor.
  static let badDescriptor: Int32 = EBADF
  /// The `errno` that stands for input past ``PolicyInput/sizeLimit`` (no read sets it).
  static let fileTooLarge: Int32 = EFBIG
  /// The `errno` of a folder where a file was expected.
  static let isFolder: Int32 = EISDIR
  /// The `errno` that stands for a named pipe, socket or device where a regular file was
  /// expected (no call sets it here).
  static let notRegularFile: Int32 = EINVAL
  /// The `errno` of a path that does not exist.
  static let noSuchFile: Int32 = ENOENT

  /// The process's arguments after the program name as the bytes the system gave, so that
  /// file names that are not UTF-8 can still be opened (`CommandLine.arguments` repairs them).
  static func rawArguments() -> [[UInt8]] {
    var arguments: [[UInt8]] = []
    for index in 1..<max(1, Int(CommandLine.argc)) {
      guard let pointer = CommandLine.unsafeArgv[index] else { continue }
      arguments.append(Array(UnsafeRawBufferPointer(start: pointer, count: strlen(pointer))))
    }
    return arguments
  }

  /// Ends the process with a status.
  static func exit(_ status: Int32) -> Never {
    #if canImport(Glibc)
      Glibc.exit(status)
    #elseif canImport(Musl)
      Musl.exit(status)
    #elseif canImport(Darwin)
      Darwin.exit(status)
    #else
      ucrt.exit(status)
    #endif
  }

  /// Whether a descriptor is a terminal.
  static func isTerminal(_ descriptor: Int32) -> Bool {
    #if os(Windows)
      return _isatty(descriptor) != 0
    #else
      return isatty(descriptor) != 0
    #endif
  }

  /// A lowercase phrase for an `errno` value: `no space left on device`.
  static func describe(errorNumber: Int32) -> String {
    guard let text = strerror(errorNumber) else { return "error \(errorNumber)" }
    return String(cString: text).lowercased()
  }

  /// Whether a standard descriptor was closed when the program started.
  ///
  /// The runtime may already have opened files of its own (libdispatch's event descriptors)
  /// in the place of a closed standard stream before `main` runs, so an open descriptor does
  /// not prove the stream is there. A descriptor inherited through `exec` never has
  /// close-on-exec set, while the runtime's always do: such a descriptor, or none, means the
  /// stream was closed, and it must not be written or read.
  static func wasClosedAtStart(_ descriptor: Int32) -> Bool {
    #if os(Windows)
      return false
    #else
      let flags = fcntl(descriptor, F_GETFD)
      return flags == -1 || flags & FD_CLOEXEC != 0
    #endif
  }

  /// Makes sure descriptors 0, 1 and 2 are open.
  ///
  /// So no file the tool opens later takes the place of a closed standard stream. A closed one is filled with `/dev/null` opened
  /// for reading only.
  static func reserveStandardDescriptors() {
    #if !os(Windows)
      for descriptor in [standardInput, standardOutput, standardError] {
        guard fcntl(descriptor, F_GETFD) == -1, errno == EBADF else { continue }
        let opened = open("/dev/null", O_RDONLY)
        if opened >= 0, opened != descriptor {
          _ = dup2(opened, descriptor)
          _ = close(opened)
        }
      }
    #endif
  }

  /// Writes bytes in full, retrying after interruptions; returns nil, or the `errno` of the
  /// failure.
  static func write(_ bytes: [UInt8], to descriptor: Int32) -> Int32? {
    var start = 0
    while start < bytes.count {
      let written = bytes.withUnsafeBytes { buffer -> Int in
        guard let base = buffer.baseAddress else { return 0 }
        #if os(Windows)
          return Int(_write(descriptor, base + start, UInt32(min(buffer.count - start, 1 << 30))))
        #else
          return Int(systemWrite(descriptor, base + start, buffer.count - start))
        #endif
      }
      if written > 0 {
        start += written
      } else if written < 0, errno == EINTR {
        continue
      } else {
        return written < 0 ? errno : EIO
      }
    }
    return nil
  }

  /// Reads what is available from a descriptor, waiting for at least one byte.
  static func read(_ descriptor: Int32, capacity: Int = 65536) -> ReadResult {
    var buffer = [UInt8](repeating: 0, count: capacity)
    let count = buffer.withUnsafeMutableBytes { raw -> Int in
      #if os(Windows)
        return Int(_read(descriptor, raw.baseAddress, UInt32(raw.count)))
      #else
        return systemRead(descriptor, raw.baseAddress, raw.count)
      #endif
    }
    if count > 0 { return .bytes(Array(buffer[0..<count])) }
    if count == 0 { return .end }
    return errno == EINTR ? .interrupted : .failure(errno)
  }

  // MARK: Files

  /// Opens an existing file for writing in place, neither creating nor truncating it: for
  /// named pipes and character devices.
  static func openForWriting(_ path: [UInt8]) -> Result<Int32, PlatformError> {
    #if os(Windows)
      let descriptor = path.withCString { _open($0, _O_WRONLY | _O_BINARY) }
    #else
      let descriptor = path.withCString { open($0, O_WRONLY) }
    #endif
    return descriptor >= 0 ? .success(descriptor) : .failure(PlatformError(errno))
  }

  /// Whether the path itself is a symbolic link (`lstat`).
  static func isSymbolicLink(_ path: [UInt8]) -> Bool {
    #if os(Windows)
      return false
    #else
      var info = stat()
      guard path.withCString({ lstat($0, &info) }) == 0 else { return false }
      return info.st_mode & S_IFMT == S_IFLNK
    #endif
  }

  /// Creates a new file that must not exist yet, for writing, with the given mode.
  static func createExclusive(_ path: [UInt8], mode: UInt32) -> Result<Int32, PlatformError> {
    #if os(Windows)
      let descriptor = path.withCString {
        _open($0, _O_WRONLY | _O_CREAT | _O_EXCL | _O_BINARY, 0x180)
      }
    #else
      let descriptor = path.withCString { open($0, O_WRONLY | O_CREAT | O_EXCL, mode_t(mode)) }
    #endif
    return descriptor >= 0 ? .success(descriptor) : .failure(PlatformError(errno))
  }

  /// Gives a file the permission bits `mode` (umask does not apply).
  static func setMode(_ descriptor: Int32, _ mode: UInt32) -> PlatformError? {
    #if os(Windows)
      return nil
    #else
      return fchmod(descriptor, mode_t(mode)) == 0 ? nil : PlatformError(errno)
    #endif
  }

  /// Flushes a file's data to the disk.
  static func synchronize(_ descriptor: Int32) -> PlatformError? {
    #if os(Windows)
      return _commit(descriptor) == 0 ? nil : PlatformError(errno)
    #else
      return fsync(descriptor) == 0 ? nil : PlatformError(errno)
    #endif
  }

  /// Closes a descriptor; a failure (a late write error on some file systems) is reported.
  @discardableResult
  static func close(_ descriptor: Int32) -> PlatformError? {
    #if os(Windows)
      return _close(descriptor) == 0 ? nil : PlatformError(errno)
    #else
      return systemClose(descriptor) == 0 ? nil : PlatformError(errno)
    #endif
  }

  /// Renames a file over another in one step.
  static func rename(_ source: [UInt8], to destination: [UInt8]) -> PlatformError? {
    let result = source.withCString { from in destination.withCString { systemRename(from, $0) } }
    return result == 0 ? nil : PlatformError(errno)
  }

  /// The path with every symbolic link resolved, or nil when it cannot be resolved.
  static func resolvedPath(_ path: [UInt8]) -> [UInt8]? {
    #if os(Windows)
      return nil
    #else
      guard let resolved = path.withCString({ realpath($0, nil) }) else { return nil }
      defer { free(resolved) }
      return Array(UnsafeRawBufferPointer(start: resolved, count: strlen(resolved)))
    #endif
  }

  /// Flushes a folder's entries (a rename in it) to the disk; errors are ignored.
  static func synchronizeFolder(_ path: [UInt8]) {
    #if !os(Windows)
      let descriptor = path.withCString { open($0, O_RDONLY | O_NONBLOCK) }
      guard descriptor >= 0 else { return }
      _ = fsync(descriptor)
      _ = systemClose(descriptor)
    #endif
  }

  /// Removes a file; errors are ignored (used to clean up).
  static func remove(_ path: [UInt8]) {
    _ = path.withCString { unlink($0) }
  }

  /// `stat` of a path (symbolic links followed).
  static func status(_ path: [UInt8]) -> Result<FileStatus, PlatformError> {
    var info = stat()
    let result = path.withCString { stat($0, &info) }
    guard result == 0 else { return .failure(PlatformError(errno)) }
    #if os(Windows)
      let format = Int32(info.st_mode) & S_IFMT
      let kind: FileStatus.Kind =
        format == S_IFREG ? .regular : format == S_IFDIR ? .directory : .other
    #else
      let format = info.st_mode & S_IFMT
      let kind: FileStatus.Kind =
        switch format {
        case S_IFREG: .regular
        case S_IFDIR: .directory
        case S_IFIFO: .fifo
        case S_IFCHR: .characterDevice
        default: .other
        }
    #endif
    return .success(
      FileStatus(
        kind: kind, mode: UInt32(info.st_mode) & 0o7777,
        device: UInt64(truncatingIfNeeded: info.st_dev),
        inode: UInt64(truncatingIfNeeded: info.st_ino),
        size: UInt64(truncatingIfNeeded: info.st_size)))
  }

  /// The names in a folder, as bytes, without `.` and `..`, unsorted.
  static func directoryEntries(_ path: [UInt8]) -> Result<[[UInt8]], PlatformError> {
    #if os(Windows)
      return .failure(PlatformError(ENOSYS))
    #else
      guard let directory = path.withCString({ opendir($0) }) else {
        return .failure(PlatformError(errno))
      }
      defer { closedir(directory) }
      var names: [[UInt8]] = []
      errno = 0
      while let entry = readdir(directory) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
          Array(raw.prefix { $0 != 0 })
        }
        if name != [0x2E], name != [0x2E, 0x2E] { names.append(name) }
      }
      if errno != 0 { return .failure(PlatformError(errno)) }
      return .success(names)
    #endif
  }

  // MARK: Signals

  /// Ignores SIGPIPE, so that a write to a closed pipe fails with EPIPE instead of killing
  /// the process before it can end cleanly.
  static func ignoreBrokenPipeSignal() {
    #if !os(Windows)
      signal(SIGPIPE, SIG_IGN)
    #endif
  }

  /// Starts noting window resizes (SIGWINCH); see ``takeWindowResize()``.
  static func watchWindowResizes() {
    #if !os(Windows)
      signal(SIGWINCH) { _ in windowWasResized.store(true, ordering: .relaxed) }
    #endif
  }

  /// Whether a resize is noted and not yet taken.
  static var isWindowResizePending: Bool { windowWasResized.load(ordering: .relaxed) }

  /// Whether the window was resized since the last call.
  static func takeWindowResize() -> Bool {
    windowWasResized.exchange(false, ordering: .relaxed)
  }

  /// Waits until a descriptor has input (or its end), a signal arrives or `milliseconds`
  /// pass; returns true when a read will not block, false after a signal or the time, and
  /// true too when the wait itself fails, so that the read reports the error.
  static func waitForInput(_ descriptor: Int32, milliseconds: Int32) -> Bool {
    #if os(Windows)
      return true
    #else
      var request = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
      let result = poll(&request, 1, milliseconds)
      return result > 0 || (result < 0 && errno != EINTR)
    #endif
  }

  // MARK: Terminal

  /// The signals after which the terminal's settings are restored before the process ends.
  #if !os(Windows)
    private static let restoredSignals: [Int32] = [SIGTERM, SIGHUP, SIGINT, SIGQUIT]
  #endif

  /// Puts the terminal of standard input in raw mode; false when it is no terminal.
  ///
  /// Turns off line buffering, echo and the keys that send signals, so each key arrives as
  /// it is typed (Ctrl-C as byte 3). Output processing stays on, so `\n` still starts a new
  /// line. ``restoreTerminal()`` puts the settings back, and so do SIGTERM, SIGHUP, SIGINT
  /// and SIGQUIT before they end the process.
  static func enableRawMode() -> Bool {
    #if os(Windows)
      return false
    #else
      var original = termios()
      guard tcgetattr(STDIN_FILENO, &original) == 0 else { return false }
      var raw = original
      raw.c_iflag &= ~tcflag_t(BRKINT | ICRNL | INPCK | ISTRIP | IXON)
      raw.c_cflag |= tcflag_t(CS8)
      raw.c_lflag &= ~tcflag_t(ECHO | ICANON | IEXTEN | ISIG)
      withUnsafeMutableBytes(of: &raw.c_cc) { bytes in
        bytes[Int(VMIN)] = 1
        bytes[Int(VTIME)] = 0
      }
      savedTerminalSettings = original
      for signalNumber in restoredSignals {
        signal(signalNumber) { restoreTerminalAndReraise($0) }
      }
      guard tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw) == 0 else {
        restoreTerminal()
        return false
      }
      return true
    #endif
  }

  /// Puts back the settings saved by ``enableRawMode()`` and the default signal handlers.
  static func restoreTerminal() {
    #if !os(Windows)
      guard var settings = savedTerminalSettings else { return }
      _ = tcsetattr(STDIN_FILENO, TCSAFLUSH, &settings)
      for signalNumber in restoredSignals {
        signal(signalNumber, SIG_DFL)
      }
      savedTerminalSettings = nil
    #endif
  }

  /// The width in columns of the terminal of a descriptor, or nil when it cannot be told.
  static func terminalWidth(_ descriptor: Int32) -> Int? {
    #if os(Windows)
      return nil
    #else
      var size = winsize()
      guard ioctl(descriptor, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return nil }
      return Int(size.ws_col)
    #endif
  }
}

#if !os(Windows)
  private func systemWrite(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    write(descriptor, bytes, count)
  }

  private func systemRead(_ descriptor: Int32, _ bytes: UnsafeMutableRawPointer?, _ count: Int)
    -> Int
  {
    read(descriptor, bytes, count)
  }

  private func systemClose(_ descriptor: Int32) -> Int32 { close(descriptor) }
#endif

private func systemRename(_ source: UnsafePointer<CChar>, _ destination: UnsafePointer<CChar>)
  -> Int32
{
  rename(source, destination)
}

extension Array where Element == UInt8 {
  /// Calls `body` with the bytes as a NUL-terminated C string.
  fileprivate func withCString<Result>(_ body: (UnsafePointer<CChar>) -> Result) -> Result {
    (self + [0]).withUnsafeBufferPointer { buffer in
      buffer.withMemoryRebound(to: CChar.self) { chars in
        guard let base = chars.baseAddress else { return body("") }
        return body(base)
      }
    }
  }
}
