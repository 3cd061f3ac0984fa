import Foundation
import Testing

@testable import RetryPolicyCLI

/// `fmt` never loses a file: it replaces it only by renaming a complete, flushed copy.
@Suite("fmt: a file is never lost")
struct FileReplacementTests {
  static let unformatted = "# keep me\npolicy  a = retry 3   delay 1s\n"
  static let formatted = "# keep me\npolicy a = retry 3 delay 1s\n"

  /// A folder with `a.retry` not in canonical form.
  func makeFile() throws -> (folder: URL, file: URL) {
    let folder = try ToolRunner.makeFolder(["a.retry": Self.unformatted])
    return (folder, folder.appendingPathComponent("a.retry"))
  }

  func folderContents(_ folder: URL) throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
  }

  /// Runs `fmt FILE` in-process with the replacement's operations changed by `change`.
  func format(
    _ file: URL, change: (inout FileReplacement.Operations) -> Void
  ) async -> (status: Int32, error: String) {
    let output = Output(destination: .capture, outputUsesColor: false, errorUsesColor: false)
    let context = CommandContext(output: output, environment: [:], input: Data())
    change(&context.fileReplacement.operations)
    let status = await CommandLineTool.run(["fmt", file.path], context: context)
    return (status, output.capturedError)
  }

  /// The ways a replacement can fail, each as a change to the system calls and its reason.
  static let failures: [(name: String, reason: String)] = [
    ("disk full halfway through the write", "no space left on device"),
    (
      "no permission to create the temporary file",
      "cannot create a temporary file: permission denied"
    ),
    ("fsync fails", "input/output error"),
    ("rename fails", "read-only file system"),
    ("the file changed meanwhile", "it changed while it was being formatted"),
  ]

  static func inject(_ name: String, into operations: inout FileReplacement.Operations) {
    switch name {
    case "disk full halfway through the write":
      operations.write = { bytes, descriptor in
        // Half the bytes reach the file, then the disk is full.
        _ = Platform.write(Array(bytes.prefix(bytes.count / 2)), to: descriptor)
        return Platform.noSpace
      }
    case "no permission to create the temporary file":
      operations.create = { _, _ in .failure(PlatformError(EACCES)) }
    case "fsync fails":
      operations.synchronize = { _ in PlatformError(EIO) }
    case "rename fails":
      operations.rename = { _, _ in PlatformError(EROFS) }
    default:
      operations.read = { _ in .success(Array("policy b = retry 1\n".utf8)) }
    }
  }

  @Test(
    "on any failure the original is byte for byte unchanged, no temporary file is left, exit 2",
    arguments: zip(failures.map(\.name), failures.map(\.reason)))
  func failureKeepsOriginal(name: String, reason: String) async throws {
    let (folder, file) = try makeFile()
    defer { try? FileManager.default.removeItem(at: folder) }
    let result = await format(file) { Self.inject(name, into: &$0) }
    #expect(result.status == 2)
    #expect(
      result.error
        == "retry-policy: error: cannot write '\(file.path)': \(reason); it is unchanged\n"
    )
    #expect(try Data(contentsOf: file) == Data(Self.unformatted.utf8))
    #expect(try folderContents(folder) == ["a.retry"])
  }

  @Test("a successful replacement keeps the file's permission bits and leaves no temporary file")
  func keepsMode() async throws {
    let (folder, file) = try makeFile()
    defer { try? FileManager.default.removeItem(at: folder) }
    try FileManager.default.setAttributes([.posixPermissions: 0o640], ofItemAtPath: file.path)
    let result = await format(file) { _ in }
    #expect(result.status == 0)
    #expect(try String(contentsOf: file, encoding: .utf8) == Self.formatted)
    let mode = try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions]
    #expect((mode as? NSNumber)?.intValue == 0o640)
    #expect(try folderContents(folder) == ["a.retry"])
  }

  @Test("the file is flushed before the rename, and its folder after it")
  func flushOrder() async throws {
    let (folder, file) = try makeFile()
    defer { try? FileManager.default.removeItem(at: folder) }
    var calls: [String] = []
    let result = await format(file) { operations in
      let (synchronize, rename) = (operations.synchronize, operations.rename)
      operations.synchronize = { descriptor in
        calls.append("fsync file")
        return synchronize(descriptor)
      }
      operations.rename = { source, destination in
        calls.append("rename")
        return rename(source, destination)
      }
      operations.synchronizeFolder = { path in
        calls.append("fsync " + String(decoding: path, as: UTF8.self))
      }
    }
    #expect(result.status == 0)
    let resolved = try #require(Platform.resolvedPath(Array(folder.path.utf8)))
    #expect(
      calls == ["fsync file", "rename", "fsync " + String(decoding: resolved, as: UTF8.self)])
  }

  @Test("a symbolic link stays a link; the file it points to is formatted")
  func followsLinks() async throws {
    let (folder, file) = try makeFile()
    defer { try? FileManager.default.removeItem(at: folder) }
    let link = folder.appendingPathComponent("link.retry")
    try FileManager.default.createSymbolicLink(at: link, withDestinationURL: file)
    let result = await format(link) { _ in }
    #expect(result.status == 0)
    let destination = try FileManager.default.destinationOfSymbolicLink(atPath: link.path)
    #expect(destination == file.path)
    #expect(try String(contentsOf: file, encoding: .utf8) == Self.formatted)
  }

  @Test("the built binary leaves a file with errors alone and exits 1")
  func errorsLeftAlone() throws {
    let folder = try ToolRunner.makeFolder(["bad.retry": "policy  a = retry 3 bakoff 1s\n"])
    defer { try? FileManager.default.removeItem(at: folder) }
    let result = try ToolRunner.runBinary(["fmt", "bad.retry"], directory: folder)
    #expect(result.status == 1)
    let text = try String(
      contentsOf: folder.appendingPathComponent("bad.retry"), encoding: .utf8)
    #expect(text == "policy  a = retry 3 bakoff 1s\n")
  }
}

/// `check` and `fmt --check` never call a file fine without having read it.
@Suite("check: a file is never skipped")
struct FileDiscoveryTests {
  static let invalid = "policy a = retry 3 bakoff 1s\n"

  @Test("a folder given through a symbolic link is walked", arguments: ["check", "fmt"])
  func symlinkedFolder(command: String) throws {
    let folder = try ToolRunner.makeFolder(["real/inner/a.retry": Self.invalid])
    defer { try? FileManager.default.removeItem(at: folder) }
    try FileManager.default.createSymbolicLink(
      atPath: folder.appendingPathComponent("linked").path, withDestinationPath: "real")
    try FileManager.default.createSymbolicLink(
      atPath: folder.appendingPathComponent("real/alias").path, withDestinationPath: "inner")
    let arguments = command == "check" ? ["check", "linked"] : ["fmt", "--check", "linked"]
    let result = try ToolRunner.runBinary(arguments, directory: folder)
    #expect(result.status == 1)
    if command == "check" {
      #expect(result.standardOutput.contains("linked/alias/a.retry:1:20: error:"))
      #expect(result.standardOutput.contains("linked/inner/a.retry:1:20: error:"))
      #expect(result.standardError.hasSuffix("checked 2 files: 2 errors\n"))
    }
  }

  @Test("a symbolic link back to a folder being walked is reported and not followed")
  func symlinkLoop() throws {
    let folder = try ToolRunner.makeFolder(["top/a.retry": "policy a = retry 3\n"])
    defer { try? FileManager.default.removeItem(at: folder) }
    try FileManager.default.createSymbolicLink(
      atPath: folder.appendingPathComponent("top/loop").path, withDestinationPath: ".")
    let result = try ToolRunner.runBinary(["check", "top"], directory: folder)
    #expect(result.status == 0)
    #expect(
      result.standardError
        == "retry-policy: warning: 'top/loop' leads back to a folder being walked; not followed\n"
        + "checked 1 file: no problems\n")
  }

  @Test("a file name that is not UTF-8 is read by its bytes and printed escaped")
  func nonUTF8Name() throws {
    let folder = try ToolRunner.makeFolder([:])
    defer { try? FileManager.default.removeItem(at: folder) }
    let result = try ToolRunner.runScript(
      """
      printf 'policy a = retry 3 bakoff 1s\\n' > "$(printf 'bad\\377.retry')"
      "$0" check .
      echo "folder $?"
      "$0" check "$(printf 'bad\\377.retry')"
      echo "file $?"
      """, directory: folder)
    #expect(result.standardOutput.hasPrefix("./bad\\xFF.retry:1:20: error: unknown clause"))
    #expect(result.standardOutput.contains("\nbad\\xFF.retry:1:20: error: unknown clause"))
    #expect(result.standardOutput.contains("\nfolder 1\nbad\\xFF.retry:1:20: error:"))
    #expect(result.standardOutput.hasSuffix("\nfile 1\n"))
  }

  @Test("-, /dev/stdin, process substitution and named pipes are read as streams")
  func streams() throws {
    let folder = try ToolRunner.makeFolder([:])
    defer { try? FileManager.default.removeItem(at: folder) }
    let result = try ToolRunner.runScript(
      """
      bad='policy a = retry 3 bakoff 1s\\n'
      printf "$bad" | "$0" check - > /dev/null 2>&1; echo "dash $?"
      printf "$bad" | "$0" check /dev/stdin > /dev/null 2>&1; echo "stdin $?"
      "$0" check <(printf "$bad") > /dev/null 2>&1; echo "substitution $?"
      mkfifo pipe.retry
      printf "$bad" > pipe.retry &
      "$0" check pipe.retry > /dev/null 2>&1; echo "fifo $?"
      printf 'policy  a = retry 3\\n' > pipe.retry &
      "$0" fmt pipe.retry; echo "fmt $?"
      """, directory: folder)
    #expect(
      result.standardOutput
        == "dash 1\nstdin 1\nsubstitution 1\nfifo 1\npolicy a = retry 3\nfmt 0\n")
  }

  @Test("what cannot be read inside a folder is exit 2 with its path, never 'no problems'")
  func unreadableInsideFolder() throws {
    let folder = try ToolRunner.makeFolder(["f/good.retry": "policy a = retry 3\n"])
    defer { try? FileManager.default.removeItem(at: folder) }
    try FileManager.default.createSymbolicLink(
      atPath: folder.appendingPathComponent("f/gone.retry").path,
      withDestinationPath: "missing.retry")
    let result = try ToolRunner.runScript(
      """
      mkfifo f/pipe.retry
      "$0" check f; echo "check $?"
      "$0" fmt --check f; echo "fmt $?"
      """, directory: folder)
    #expect(result.standardOutput == "check 2\nfmt 2\n")
    #expect(result.standardError.contains("cannot read 'f/gone.retry': no such file or directory"))
    #expect(
      result.standardError.contains(
        "f/pipe.retry:1:1: error: the policy file is a named pipe, not a regular file\n"))
    #expect(
      result.standardError.contains(
        "checked 1 file: no problems in the files read; 2 files could not be read"))
  }

  @Test("a closed standard input is exit 2 naming <stdin>, never 'no problems'")
  func closedStandardInput() throws {
    let result = try ToolRunner.runScript("\"$0\" check - <&-")
    #expect(result.status == 2)
    #expect(
      result.standardError
        == "retry-policy: error: cannot read '<stdin>': bad file descriptor\n"
        + "checked 0 files; 1 file could not be read\n")
  }

  @Test("a file that cannot be read mid-way is exit 2, not 'no problems'")
  func directoryAsFile() async throws {
    let folder = try ToolRunner.makeFolder(["d.retry/x.txt": ""])
    defer { try? FileManager.default.removeItem(at: folder) }
    let result = await ToolRunner.run(["check", "/proc/self/mem"])
    #expect(result.status == 2)
    #expect(result.standardError.hasPrefix("retry-policy: error: cannot read '/proc/self/mem': "))
    #expect(result.standardError.hasSuffix("checked 0 files; 1 file could not be read\n"))
  }
}
