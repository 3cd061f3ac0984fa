// The values the platform layer (Platform.swift, the one file that imports the C library)
// hands out; pure Swift, so they live apart from the C calls.

extension Platform {
  /// The outcome of one read.
  enum ReadResult: Equatable {
    /// Some bytes.
    case bytes([UInt8])
    /// The end of the input.
    case end
    /// A read error, with its `errno`.
    case failure(Int32)
    /// The read was interrupted by a signal before any byte came.
    case interrupted
  }

  /// What `stat` tells about a path, following symbolic links.
  struct FileStatus: Equatable {
    /// The kind of file.
    enum Kind: Equatable {
      case regular, directory, fifo, characterDevice, other
    }
    /// The kind.
    var kind: Kind
    /// The permission bits.
    var mode: UInt32
    /// The device and inode, which identify the file (a folder seen twice is a loop).
    var device: UInt64
    /// The inode number.
    var inode: UInt64
    /// The size in bytes (of a regular file; 0 for most others).
    var size: UInt64 = 0
  }
}

/// A failed C library call: its `errno`.
struct PlatformError: Error, Equatable {
  /// The `errno` value.
  var code: Int32

  /// Wraps an `errno` value.
  init(_ code: Int32) { self.code = code }

  /// A lowercase phrase: `permission denied`.
  var reason: String { Platform.describe(errorNumber: code) }
}
