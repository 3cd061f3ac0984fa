import Foundation
import RetryPolicy

/// Reading policy text: files, folders, standard input and the command line.
enum PolicyInput {
  /// The name diagnostics give policy text from the command line.
  static let commandLineName = "<policy>"
  /// The name diagnostics give text read from standard input by `check -` and `fmt -`.
  static let standardInputName = "<stdin>"
  /// The extension of policy files.
  static let fileExtension = "retry"
  /// The most bytes a command reads from one file, pipe, device or standard input: 64 MiB.
  ///
  /// It is the language server's limit on a message. Past it the command stops reading, says
  /// `'FILE' is larger than 64 MiB` and exits 2; the text read so far is dropped, so memory
  /// stays within the limit whatever the input's size (`/dev/zero` included).
  static let sizeLimit = 64 << 20
  /// ``sizeLimit`` as the messages write it.
  static let sizeLimitText = "64 MiB"

  /// Why a path could not be read.
  struct ReadError: Error, Equatable {
    /// The path as given.
    var path: String
    /// A lowercase phrase: `no such file or directory`.
    var reason: String

    /// `cannot read 'PATH': REASON`, or `'PATH' is larger than 64 MiB`.
    var message: String {
      isTooLarge
        ? "'\(path)' is larger than \(PolicyInput.sizeLimitText)"
        : "cannot read '\(path)': \(reason)"
    }

    /// Whether the file is past ``PolicyInput/sizeLimit``.
    var isTooLarge: Bool { reason == PlatformError(Platform.fileTooLarge).reason }

    init(path: String, reason: String) {
      self.path = path
      self.reason = reason
    }

    init(path: String, error: PlatformError) {
      self.init(path: path, reason: error.reason)
    }
  }

  /// `cannot read standard input: REASON`, or `standard input is larger than 64 MiB`.
  static func standardInputMessage(_ error: PlatformError) -> String {
    error.code == Platform.fileTooLarge
      ? "standard input is larger than \(sizeLimitText)"
      : "cannot read standard input: \(error.reason)"
  }

  /// A policy file to read: standard input, or a path as bytes.
  struct InputFile: Equatable {
    /// The path's bytes; nil for standard input (`-`).
    var path: [UInt8]?
    /// The name shown in messages: the path with bytes that are not UTF-8 (and control
    /// characters) escaped as `\xHH`, or `<stdin>`.
    var name: String
    /// Whether it is read as a stream (standard input, a pipe, a device), not a regular file
    /// that `fmt` could replace.
    var isStream: Bool

    /// Standard input.
    static let standardInput = InputFile(
      path: nil, name: PolicyInput.standardInputName, isStream: true)

    /// A file by its path's bytes.
    init(path: [UInt8], isStream: Bool = false) {
      self.path = path
      self.name = PolicyInput.displayName(path)
      self.isStream = isStream
    }

    private init(path: [UInt8]?, name: String, isStream: Bool) {
      self.path = path
      self.name = name
      self.isStream = isStream
    }
  }

  /// The files the command-line paths name, folders expanded, and what went wrong.
  struct Expansion {
    /// The files to read, in order.
    var files: [InputFile] = []
    /// Paths that cannot be read or listed.
    var errors: [ReadError] = []
    /// Folders without policy files.
    var empty: [String] = []
    /// Symbolic links that lead back to a folder being walked (not followed).
    var loops: [String] = []

    /// Reports the paths that cannot be read (errors) and the warnings; returns whether any
    /// path could not be read.
    func reportProblems(to output: Output) -> Bool {
      for error in errors { output.error(error.message) }
      printWarnings(to: output)
      return !errors.isEmpty
    }

    /// Warns about the empty folders and the links not followed.

    func printWarnings(to output: Output) {
      for folder in empty {
        output.warning("no .\(PolicyInput.fileExtension) files in '\(folder)'")
      }
      for loop in loops {
        output.warning("'\(loop)' leads back to a folder being walked; not followed")
      }
    }
  }

  /// A path as text for messages: valid UTF-8 as is, other bytes and control characters as
  /// `\xHH`.
  static func displayName(_ bytes: [UInt8]) -> String {
    var text = ""
    var index = 0
    while index < bytes.count {
      let length = validSequenceLength(bytes, at: index)
      if length == 0 || bytes[index] < 0x20 || bytes[index] == 0x7F {
        text += "\\x" + String(bytes[index], radix: 16, uppercase: true).leftPadded(to: 2)
        index += 1
      } else {
        text += String(decoding: bytes[index..<index + length], as: UTF8.self)
        index += length
      }
    }
    return text
  }

  /// The length of the well-formed UTF-8 sequence at `index`, or 0.
  private static func validSequenceLength(_ bytes: [UInt8], at index: Int) -> Int {
    let lead = bytes[index]
    let length: Int
    switch lead {
    case 0x00...0x7F: return 1
    case 0xC2...0xDF: length = 2
    case 0xE0...0xEF: length = 3
    case 0xF0...0xF4: length = 4
    default: return 0
    }
    guard index + length <= bytes.count else { return 0 }
    let slice = bytes[index..<index + length]
    var iterator = slice.makeIterator()
    var decoder = UTF8()
    if case .scalarValue = decoder.decode(&iterator) { return length }
    return 0
  }

  /// Reads a descriptor to its end: files, pipes, terminals and devices alike; past `limit`
  /// bytes (``sizeLimit``) it stops with `EFBIG` (``Platform/fileTooLarge``), having held
  /// at most `limit` bytes.
  static func readAll(_ descriptor: Int32, limit: Int = sizeLimit) -> Result<Data, PlatformError> {
    var data = Data()
    while true {
      switch Platform.read(descriptor) {
      case .bytes(let bytes):
        guard bytes.count <= limit - data.count else {
          return .failure(PlatformError(Platform.fileTooLarge))
        }
        data.append(contentsOf: bytes)
      case .end: return .success(data)
      case .interrupted: continue
      case .failure(let code): return .failure(PlatformError(code))
      }
    }
  }

  /// Reads a policy file as bytes and decodes it as UTF-8.
  ///
  /// Invalid bytes become U+FFFD, which the parser reports as `invalid-utf8`. Named pipes and devices are read as
  /// streams; standard input through `context`.
  static func read(_ file: InputFile, context: CommandContext) -> Result<String, ReadError> {
    readBytes(file, context: context).map { String(decoding: $0, as: UTF8.self) }
  }

  /// The bytes of a file, or nil after reporting why it cannot be read; `unreadable` is then
  /// set.
  static func read(
    _ file: InputFile, context: CommandContext, unreadable: inout Bool
  ) -> Data? {
    switch readBytes(file, context: context) {
    case .success(let data):
      return data
    case .failure(let error):
      context.output.error(error.message)
      unreadable = true
      return nil
    }
  }

  /// Reads a policy file's bytes, as ``read(_:context:)`` does.
  static func readBytes(_ file: InputFile, context: CommandContext) -> Result<Data, ReadError> {
    guard let path = file.path else {
      return context.standardInput().mapError { ReadError(path: file.name, error: $0) }
    }
    return readFile(path, name: file.name)
  }

  /// Reads a file by its path's bytes, at most ``sizeLimit`` of them; `name` names it in the
  /// error.
  static func readFile(_ path: [UInt8], name: String) -> Result<Data, ReadError> {
    // A regular file past the limit is refused before a byte is read.
    if case .success(let status) = Platform.status(path), status.kind == .regular,
      status.size > UInt64(sizeLimit)
    {
      return .failure(ReadError(path: name, error: PlatformError(Platform.fileTooLarge)))
    }
    let descriptor: Int32
    switch Platform.openForReading(path) {
    case .success(let opened): descriptor = opened
    case .failure(let error): return .failure(ReadError(path: name, error: error))
    }
    defer { Platform.close(descriptor) }
    return readAll(descriptor).mapError { ReadError(path: name, error: $0) }
  }

  /// Reads a file given by a path as bytes (`--file`), which may not be UTF-8.
  static func readFileBytes(_ path: String, context: CommandContext) -> Result<
    [UInt8], ReadError
  > {
    let bytes = context.pathBytes(path)
    if case .success(let status) = Platform.status(bytes), status.kind == .directory {
      return .failure(ReadError(path: displayName(bytes), reason: "is a directory"))
    }
    return readBytes(InputFile(path: bytes), context: context).map { [UInt8]($0) }
  }

  /// The files the paths name, folders expanded.
  ///
  /// Each file stays as given (named pipes and devices too, read as streams); each folder
  /// stands for every `.retry` file below it, recursively, sorted by path, symbolic links
  /// followed. Hidden files and folders (`.name`) are skipped inside folders. `-` stays as
  /// is (standard input).
  ///
  /// Paths that do not exist, folders that cannot be listed and `.retry` entries that are not
  /// regular files come back as errors; folders without policy files as `empty`; a symbolic
  /// link that leads back to a folder being walked as a loop, not followed.
  static func expand(_ arguments: [String], context: CommandContext) -> Expansion {
    var expansion = Expansion()
    for argument in arguments {
      if argument == "-" {
        expansion.files.append(.standardInput)
        continue
      }
      let path = context.pathBytes(argument)
      switch Platform.status(path) {
      case .failure(let error):
        expansion.errors.append(ReadError(path: displayName(path), reason: error.reason))
      case .success(let status) where status.kind == .directory:
        var found: [InputFile] = []
        let prefix = path.last == UInt8(ascii: "/") ? path : path + [UInt8(ascii: "/")]
        walk(
          path, prefix: prefix, ancestors: [Identity(status)], found: &found,
          expansion: &expansion)
        if found.isEmpty { expansion.empty.append(displayName(path)) }
        expansion.files += found.sorted { ($0.path ?? []).lexicographicallyPrecedes($1.path ?? []) }
      case .success(let status):
        expansion.files.append(InputFile(path: path, isStream: status.kind != .regular))
      }
    }
    return expansion
  }

  /// A folder's identity: device and inode.
  private struct Identity: Hashable {
    var device: UInt64
    var inode: UInt64

    init(_ status: Platform.FileStatus) {
      device = status.device
      inode = status.inode
    }
  }

  private static func walk(
    _ folder: [UInt8], prefix: [UInt8], ancestors: [Identity], found: inout [InputFile],
    expansion: inout Expansion
  ) {
    let names: [[UInt8]]
    switch Platform.directoryEntries(folder) {
    case .success(let entries): names = entries
    case .failure(let error):
      expansion.errors.append(ReadError(path: displayName(folder), reason: error.reason))
      return
    }
    let suffix: [UInt8] = Array(("." + fileExtension).utf8)
    for name in names where name.first != UInt8(ascii: ".") {
      let path = prefix + name
      let isPolicyFile =
        name.count > suffix.count && name.suffix(suffix.count).elementsEqual(suffix)
      switch Platform.status(path) {
      case .failure(let error):
        // A dangling link named like a policy file is a file that cannot be read.
        if isPolicyFile {
          expansion.errors.append(ReadError(path: displayName(path), reason: error.reason))
        }
      case .success(let status) where status.kind == .directory:
        let identity = Identity(status)
        if ancestors.contains(identity) {
          expansion.loops.append(displayName(path))
          continue
        }
        walk(
          path, prefix: path + [UInt8(ascii: "/")], ancestors: ancestors + [identity],
          found: &found, expansion: &expansion)
      case .success(let status) where isPolicyFile:
        if status.kind == .regular {
          found.append(InputFile(path: path))
        } else {
          expansion.errors.append(
            ReadError(path: displayName(path), reason: "not a regular file inside a folder"))
        }
      case .success:
        continue
      }
    }
  }

}

extension String {
  /// The string with zeros before it up to `width` characters.
  fileprivate func leftPadded(to width: Int) -> String {
    String(repeating: "0", count: max(0, width - count)) + self
  }
}
