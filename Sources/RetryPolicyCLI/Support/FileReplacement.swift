/// Replaces a file's contents so that the file is never lost: the new text goes to a
/// temporary file in the same folder, which is flushed to the disk and then renamed over the
/// original in one step, with the original's permission bits.
///
/// On any failure (a full disk, no permission, the original changed since it was read) the
/// temporary file is removed and the original is left byte for byte as it was.
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
  }

  /// The system calls to make.
  var operations = Operations()

  /// Replaces the file at `path`, whose contents were read as `original`, with `contents`.
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
    let temporary = Self.temporaryPath(for: target)
    let descriptor: Int32
    switch operations.create(temporary, 0o600) {
    case .success(let opened): descriptor = opened
    case .failure(let error):
      return .failure(Failure(reason: "cannot create a temporary file: " + error.reason))
    }
    var failure: String?
    if let error = operations.setMode(descriptor, status.mode) {
      failure = error.reason
    } else if let code = operations.write(contents, descriptor) {
      failure = PlatformError(code).reason
    } else if let error = operations.synchronize(descriptor) {
      failure = error.reason
    }
    if let error = operations.close(descriptor), failure == nil { failure = error.reason }
    if failure == nil {
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

  /// Reads a whole file by its path.
  static func readFile(_ path: [UInt8]) -> Result<[UInt8], PlatformError> {
    switch Platform.openForReading(path) {
    case .failure(let error): return .failure(error)
    case .success(let descriptor):
      defer { Platform.close(descriptor) }
      return PolicyInput.readAll(descriptor).map { [UInt8]($0) }
    }
  }
}
