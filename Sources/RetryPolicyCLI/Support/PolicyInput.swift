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
    /// What the path leads to when it is refused as not a regular file (`a named pipe`).
    var refusedKind: String?

    /// `cannot read 'PATH': REASON`, `'PATH' is larger than 64 MiB`, or for a path refused as
    /// not a regular file, the message of `not-a-regular-file`.
    var message: String {
      if let refusedKind {
        return DiagnosticMessage.notRegularFile(refusedKind, keepsPolicies: false).text
      }
      return isTooLarge
        ? "'\(path)' is larger than \(PolicyInput.sizeLimitText)"
        : "cannot read '\(path)': \(reason)"
    }

    /// Prints the error on standard error: `retry-policy: error: MESSAGE`, or for a path
    /// refused as not a regular file `PATH:1:1: error: MESSAGE`, as the store says it.
    func report(to output: Output) {
      guard refusedKind != nil else { return output.error(message) }
      output.fileError(at: "\(path):1:1", message)
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

    /// The error of the library's reader.
    init(path: String, error: PolicyFileReadError) {
      switch error {
      case .system(let code): self.init(path: path, error: PlatformError(code))
      case .tooLarge: self.init(path: path, error: PlatformError(Platform.fileTooLarge))
      case .notRegularFile(let kind):
        self.init(path: path, reason: error.reason)
        refusedKind = kind.phrase
      }
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
    /// Every folder walked, as given or reached (`check --watch` watches them).
    var folders: [[UInt8]] = []

    /// Reports the paths that cannot be read (errors) and the warnings; returns whether any
    /// path could not be read.
    func reportProblems(to output: Output) -> Bool {
      for error in errors { error.report(to: output) }
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

  /// Reads a descriptor to its end, through the library's reader.
  ///
  /// Files, pipes, terminals and devices alike; past `limit` bytes (``sizeLimit``) it stops
  /// with `EFBIG` (``Platform/fileTooLarge``), having held at most `limit` bytes.
  static func readAll(_ descriptor: Int32, limit: Int = sizeLimit) -> Result<Data, PlatformError> {
    switch PolicyFileReader.readToEnd(descriptor, limit: limit) {
    case .success(let bytes): .success(Data(bytes))
    case .failure(.system(let code)): .failure(PlatformError(code))
    case .failure(.tooLarge), .failure(.notRegularFile):
      .failure(PlatformError(Platform.fileTooLarge))
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
      error.report(to: context.output)
      unreadable = true
      return nil
    }
  }

  /// Reads a policy file's bytes, as ``read(_:context:)`` does: a file given as a stream
  /// (``InputFile/isStream``: a named pipe or a device named on the command line) is read
  /// as one; any other file only when it is a regular file.
  static func readBytes(_ file: InputFile, context: CommandContext) -> Result<Data, ReadError> {
    guard let path = file.path else {
      return context.standardInput().mapError { ReadError(path: file.name, error: $0) }
    }
    return readFile(path, name: file.name, streams: file.isStream ? .allowed : .refused)
  }

  /// Reads a file by its path's bytes through the library's reader.
  ///
  /// At most ``sizeLimit`` bytes; `name` names it in the error. With `streams` `.refused` (the default) only a
  /// regular file is read, and nothing blocks; `.allowed` reads a named pipe or a device that
  /// the user named on the command line, waiting for its writer.
  static func readFile(
    _ path: [UInt8], name: String, streams: PolicyFileReader.Streams = .refused
  ) -> Result<Data, ReadError> {
    PolicyFileReader.read(path: path, streams: streams, limit: sizeLimit)
      .map { Data($0.bytes) }
      .mapError { ReadError(path: name, error: $0) }
  }

  /// Reads a file given by a path as bytes (`--file`), which may not be UTF-8.
  static func readFileBytes(_ path: String, context: CommandContext) -> Result<
    [UInt8], ReadError
  > {
    let bytes = context.pathBytes(path)
    if case .success(let status) = Platform.status(bytes), status.kind == .directory {
      return .failure(ReadError(path: displayName(bytes), reason: "is a directory"))
    }
    return readBytes(InputFile(path: bytes, isStream: true), context: context).map { [UInt8]($0) }
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
    expansion.folders.append(folder)
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
          let kind = PolicyFileVersion(path: path)?.kind ?? .other
          expansion.errors.append(
            ReadError(path: displayName(path), error: .notRegularFile(kind)))
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
