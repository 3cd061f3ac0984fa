import RetryPolicy

/// The one writer of every file a command writes (`fmt`, `generate --output`, `storm --svg`),
/// so that a file is never lost and a special file is never replaced.
///
/// By what the path names:
/// - a regular file, or nothing yet: the new text goes to a temporary file in the same
///   folder, which is flushed to the disk and then renamed over the path in one step, with
///   the original's permission bits (a new file gets the umask's);
/// - a symbolic link: the same, to the file it leads to; the link stays a link (a link to
///   nothing is refused: which file it should create is a guess);
/// - a named pipe or a character device (`/dev/stdout`, `/dev/null`): written in place, as a
///   shell's `>` does, never replaced; its write errors (`/dev/full`: no space left on
///   device) are reported;
/// - a folder, a socket or a block device: refused.
///
/// On any failure (a full disk, an I/O error, no permission, the original changed since it
/// was read) the temporary file is removed, the original is left byte for byte as it was,
/// and the caller says `cannot write 'PATH': REASON` and exits 2.
struct FileReplacement {
  /// Why a replacement failed.
  struct Failure: Error, Equatable {
    /// A lowercase phrase: `no space left on device`.
    var reason: String
  }

  /// The system calls a replacement makes; tests replace some to inject failures.
  struct Operations {
    /// Follows symbolic links to the file itself.
    var resolve: ([UInt8]) -> [UInt8] = { Platform.resolvedPath($0) ?? $0 }
    /// `stat`.
    var status: ([UInt8]) -> Result<Platform.FileStatus, PlatformError> = Platform.status
    /// Creates the temporary file.
    var create: ([UInt8], UInt32) -> Result<Int32, PlatformError> = Platform.createExclusive
    /// Sets the permission bits.
    var setMode: (Int32, UInt32) -> PlatformError? = Platform.setMode
    /// Writes all bytes; returns the `errno` of a failure.
    var write: ([UInt8], Int32) -> Int32? = { Platform.write($0, to: $1) }
    /// `fsync`.
    var synchronize: (Int32) -> PlatformError? = Platform.synchronize
    /// `close`.
    var close: (Int32) -> PlatformError? = { Platform.close($0) }
    /// Reads a whole file, to see whether it changed.
    var read: ([UInt8]) -> Result<[UInt8], PlatformError> = FileReplacement.readFile
    /// `rename`.
    var rename: ([UInt8], [UInt8]) -> PlatformError? = Platform.rename
    /// `unlink`, errors ignored.
    var remove: ([UInt8]) -> Void = Platform.remove
    /// `fsync` of a folder, errors ignored.
    var synchronizeFolder: ([UInt8]) -> Void = Platform.synchronizeFolder
    /// Opens a named pipe or a device for writing in place.
    var openForWriting: ([UInt8]) -> Result<Int32, PlatformError> = Platform.openForWriting
    /// `lstat`: whether the path is a symbolic link.
    var isSymbolicLink: ([UInt8]) -> Bool = Platform.isSymbolicLink
  }

  /// The system calls to make.
  var operations = Operations()

  /// Replaces the file at `path`, whose contents were read as `original`, with `contents`
  /// (`fmt`): it must still be a regular file holding `original`.
  func replace(_ path: [UInt8], original: [UInt8], with contents: [UInt8]) -> Result<
    Void, Failure
  > {
    let target = operations.resolve(path)
    let status: Platform.FileStatus
    switch operations.status(target) {
    case .success(let found): status = found
    case .failure(let error): return .failure(Failure(reason: error.reason))
    }
    guard status.kind == .regular else { return .failure(Failure(reason: "not a regular file")) }
    return replaceRegular(target, mode: status.mode, original: original, with: contents)
  }

  /// Writes `contents` to `path`, whatever it names (see the type's summary); with
  /// `unlessUnchanged`, a regular file that already holds `contents` is left untouched,
  /// modification time and all.
  func write(_ path: [UInt8], contents: [UInt8], unlessUnchanged: Bool = false) -> Result<
    Void, Failure
  > {
    let target = operations.resolve(path)
    switch operations.status(target) {
    case .failure(let error) where error.code == Platform.noSuchFile:
      if operations.isSymbolicLink(path) {
        return .failure(Failure(reason: "it is a symbolic link to a file that does not exist"))
      }
      return replaceRegular(target, mode: nil, original: nil, with: contents)
    case .failure(let error):
      return .failure(Failure(reason: error.reason))
    case .success(let status):
      switch status.kind {
      case .regular:
        if unlessUnchanged, status.size == UInt64(contents.count),
          case .success(let existing) = operations.read(target), existing == contents
        {
          return .success(())
        }
        return replaceRegular(target, mode: status.mode, original: nil, with: contents)
      case .fifo, .characterDevice:
        return writeInPlace(target, contents: contents)
      case .directory:
        return .failure(Failure(reason: "is a directory"))
      case .other:
        return .failure(
          Failure(reason: "not a regular file, a named pipe or a character device"))
      }
    }
  }

  /// Writes to a named pipe or a character device without replacing it.
  private func writeInPlace(_ path: [UInt8], contents: [UInt8]) -> Result<Void, Failure> {
    let descriptor: Int32
    switch operations.openForWriting(path) {
    case .success(let opened): descriptor = opened
    case .failure(let error): return .failure(Failure(reason: error.reason))
    }
    var failure = operations.write(contents, descriptor).map { PlatformError($0).reason }
    if let error = operations.close(descriptor), failure == nil { failure = error.reason }
    return failure.map { .failure(Failure(reason: $0)) } ?? .success(())
  }

  /// Renames a flushed temporary copy over `target`, with `mode` (nil: a new file, the
  /// umask's), after checking that `target` still holds `original` if given.
  private func replaceRegular(
    _ target: [UInt8], mode: UInt32?, original: [UInt8]?, with contents: [UInt8]
  ) -> Result<Void, Failure> {
    let temporary = Self.temporaryPath(for: target)
    let descriptor: Int32
    switch operations.create(temporary, mode == nil ? 0o666 : 0o600) {
    case .success(let opened): descriptor = opened
    case .failure(let error):
      return .failure(Failure(reason: "cannot create a temporary file: " + error.reason))
    }
    var failure: String?
    if let mode, let error = operations.setMode(descriptor, mode) {
      failure = error.reason
    } else if let code = operations.write(contents, descriptor) {
      failure = PlatformError(code).reason
    } else if let error = operations.synchronize(descriptor) {
      failure = error.reason
    }
    if let error = operations.close(descriptor), failure == nil { failure = error.reason }
    if failure == nil, let original {
      switch operations.read(target) {
      case .success(let now) where now != original:
        failure = "it changed while it was being formatted"
      case .success: break
      case .failure(let error): failure = error.reason
      }
    }
    if failure == nil, let error = operations.rename(temporary, target) {
      failure = error.reason
    }
    if let failure {
      operations.remove(temporary)
      return .failure(Failure(reason: failure))
    }
    // The rename itself reaches the disk when the folder is flushed (best effort: the file
    // is already whole either way).
    operations.synchronizeFolder(Self.folder(of: target))
    return .success(())
  }

  /// The folder of a path, `.` for a bare name.
  static func folder(of path: [UInt8]) -> [UInt8] {
    guard let slash = path.lastIndex(of: UInt8(ascii: "/")) else { return Array(".".utf8) }
    return slash == 0 ? [UInt8(ascii: "/")] : Array(path[..<slash])
  }

  /// `FOLDER/.NAME.fmt-RANDOM.tmp` beside the file: hidden, so folder walks skip it.
  static func temporaryPath(for path: [UInt8]) -> [UInt8] {
    let slash = path.lastIndex(of: UInt8(ascii: "/"))
    let folder = slash.map { Array(path[...$0]) } ?? []
    let name = slash.map { Array(path[($0 + 1)...]) } ?? path
    let random = String(UInt64.random(in: 0...UInt64.max), radix: 36)
    return folder + [UInt8(ascii: ".")] + name + Array(".fmt-\(random).tmp".utf8)
  }

  /// Reads a whole regular file by its path, through the library's reader (which never
  /// blocks on a named pipe put in the file's place).
  static func readFile(_ path: [UInt8]) -> Result<[UInt8], PlatformError> {
    switch PolicyFileReader.read(path: path, limit: PolicyInput.sizeLimit) {
    case .success(let contents): .success(contents.bytes)
    case .failure(.system(let code)): .failure(PlatformError(code))
    case .failure(.tooLarge): .failure(PlatformError(Platform.fileTooLarge))
    case .failure(.notRegularFile(.folder)): .failure(PlatformError(Platform.isFolder))
    case .failure(.notRegularFile): .failure(PlatformError(Platform.notRegularFile))
    }
  }
}
