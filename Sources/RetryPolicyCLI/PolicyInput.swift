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

  /// Why a path could not be read.
  struct ReadError: Error, Equatable {
    /// The path as given.
    var path: String
    /// A lowercase phrase: `no such file or directory`.
    var reason: String

    /// `cannot read 'PATH': REASON`.
    var message: String { "cannot read '\(path)': \(reason)" }
  }

  /// Reads a file as bytes and decodes it as UTF-8; invalid bytes become U+FFFD, which the
  /// parser reports as `invalid-utf8`.
  static func readFile(_ path: String) -> Result<String, ReadError> {
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
      return .failure(ReadError(path: path, reason: "no such file or directory"))
    }
    if isDirectory.boolValue {
      return .failure(ReadError(path: path, reason: "is a directory"))
    }
    guard let data = FileManager.default.contents(atPath: path) else {
      return .failure(ReadError(path: path, reason: "permission denied or not a regular file"))
    }
    return .success(String(decoding: data, as: UTF8.self))
  }

  /// The files the paths name, folders expanded.
  ///
  /// Each file stays as given; each folder stands for every `.retry` file below it,
  /// recursively, sorted by path. Hidden files and folders (`.name`) are skipped inside
  /// folders. `-` stays as is (standard input).
  ///
  /// Paths that do not exist come back as errors; folders without policy files as `empty`.
  static func expand(_ paths: [String]) -> (files: [String], errors: [ReadError], empty: [String]) {
    var files: [String] = []
    var errors: [ReadError] = []
    var empty: [String] = []
    let manager = FileManager.default
    for path in paths {
      if path == "-" {
        files.append(path)
        continue
      }
      var isDirectory: ObjCBool = false
      guard manager.fileExists(atPath: path, isDirectory: &isDirectory) else {
        errors.append(ReadError(path: path, reason: "no such file or directory"))
        continue
      }
      guard isDirectory.boolValue else {
        files.append(path)
        continue
      }
      let found = policyFiles(under: path)
      if found.isEmpty { empty.append(path) }
      files.append(contentsOf: found)
    }
    return (files, errors, empty)
  }

  /// Every `.retry` file below a folder, as paths that start with the folder's path.
  private static func policyFiles(under folder: String) -> [String] {
    let manager = FileManager.default
    guard let enumerator = manager.enumerator(atPath: folder) else { return [] }
    let prefix = folder.hasSuffix("/") ? folder : folder + "/"
    var found: [String] = []
    while let relative = enumerator.nextObject() as? String {
      let components = relative.split(separator: "/")
      if components.contains(where: { $0.hasPrefix(".") }) { continue }
      guard relative.hasSuffix("." + fileExtension) else { continue }
      let path = prefix + relative
      var isDirectory: ObjCBool = false
      if manager.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue {
        found.append(path)
      }
    }
    return found.sorted { $0.unicodeScalars.lexicographicallyPrecedes($1.unicodeScalars) }
  }

  /// The outcome of finding the one policy a command works on.
  enum Resolution {
    /// The compiled policy, and the warnings already printed.
    case policy(CompiledPolicy)
    /// Something went wrong and was reported; exit with this status.
    case exit(Int32)
  }

  /// The policy named on the command line: `POLICY…` (words joined with spaces, so quotes
  /// are optional), `-` for standard input, or `--file F [--policy NAME]`.
  ///
  /// Prints diagnostics (warnings too) to standard error. Exit statuses: 1 for an invalid
  /// policy, a file with errors, or an unknown `--policy` name; 2 for a usage error or an
  /// unreadable file.
  static func resolvePolicy(
    _ arguments: ParsedArguments, context: CommandContext, command: String
  ) -> Resolution {
    let output = context.output
    if let path = arguments.value("file") {
      if let extra = arguments.arguments.first {
        output.usageError(
          .other("give either a policy or '--file', not both (unexpected '\(extra)')"),
          command: command)
        return .exit(ExitStatus.usage)
      }
      return resolvePolicy(inFile: path, named: arguments.value("policy"), context: context)
    }
    if arguments.value("policy") != nil {
      output.usageError(.other("'--policy' needs '--file'"), command: command)
      return .exit(ExitStatus.usage)
    }
    let words = arguments.arguments
    guard !words.isEmpty else {
      output.usageError(.missingArgument("policy (or '--file')"), command: command)
      return .exit(ExitStatus.usage)
    }
    if words.count > 1, words.contains("-") {
      output.usageError(.other("'-' (standard input) must be the only policy"), command: command)
      return .exit(ExitStatus.usage)
    }
    let source = words == ["-"] ? context.standardInputText() : words.joined(separator: " ")
    let analysis = analyze(policy: source)
    printDiagnostics(
      analysis.diagnostics, source: source, name: commandLineName, context: context)
    if analysis.hasErrors { return .exit(ExitStatus.failure) }
    guard let policy = analysis.policies.first else {
      output.error("internal error: the policy compiled to nothing")
      return .exit(ExitStatus.failure)
    }
    return .policy(policy)
  }

  private static func resolvePolicy(
    inFile path: String, named name: String?, context: CommandContext
  ) -> Resolution {
    let output = context.output
    let source: String
    switch readFile(path) {
    case .success(let text): source = text
    case .failure(let error):
      output.error(error.message)
      return .exit(ExitStatus.usage)
    }
    let analysis = analyze(policyFile: source)
    printDiagnostics(analysis.diagnostics, source: source, name: path, context: context)
    if analysis.hasErrors { return .exit(ExitStatus.failure) }
    let names = analysis.policies.compactMap(\.name)
    guard let name else {
      if analysis.policies.count == 1, let only = analysis.policies.first {
        return .policy(only)
      }
      if analysis.policies.isEmpty {
        output.error("'\(path)' has no policies")
        return .exit(ExitStatus.failure)
      }
      output.usageError(
        .other(
          "'\(path)' has several policies; choose one with '--policy': "
            + names.joined(separator: ", ")),
        command: "retry-policy explain")
      return .exit(ExitStatus.usage)
    }
    if let policy = analysis.policies.first(where: { $0.name == name }) {
      return .policy(policy)
    }
    let suggestion = Suggestion.nearest(to: name, in: names)
    output.error(
      "no policy '\(name)' in '\(path)'"
        + (suggestion.map { "; did you mean '\($0)'?" } ?? "")
        + (suggestion == nil && !names.isEmpty
          ? " (it has " + names.map { "'\($0)'" }.joined(separator: ", ") + ")" : ""))
    return .exit(ExitStatus.failure)
  }

  /// Renders diagnostics with their source lines to standard error.
  static func printDiagnostics(
    _ diagnostics: [Diagnostic], source: String, name: String, context: CommandContext
  ) {
    guard !diagnostics.isEmpty else { return }
    let renderer = DiagnosticRenderer(
      source: source, sourceName: name, usesColor: context.output.errorUsesColor)
    context.output.writeError(renderer.render(diagnostics))
  }
}
