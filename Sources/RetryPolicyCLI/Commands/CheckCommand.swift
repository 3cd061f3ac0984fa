import Foundation
import RetryPolicy
import RetryPolicyEngines

/// `retry-policy check FILE…`: parses and compiles policy files and reports every
/// diagnostic.
///
/// Text output (standard output), one block per diagnostic, in the compiler's form:
///
///     payments.retry:3:14: error: unknown unit 'd'; did you mean 's'?
///         retry 5 delay 2d
///                        ^
///
/// A one-line summary goes to standard error, so standard output holds only diagnostics.
/// `--format json` prints one JSON object instead (see ``jsonReport(_:unreadable:)``).
enum CheckCommand: Subcommand {
  static let spec = CommandSpec(
    name: "check",
    abstract: "parse and compile policy files and report every diagnostic",
    usage: [
      "check [--format text|json] <file-or-folder>…", "check -",
      "check --watch <file-or-folder>…",
    ],
    discussion: """
      Each diagnostic is printed as FILE:LINE:COL: error: MESSAGE (or warning:, note:),
      followed by the source line and a marker under the column. A folder stands for every
      .retry file below it, recursively, in sorted order (hidden files and folders are
      skipped; symbolic links are followed, and a link back to a folder being walked is
      reported and not followed). '-' reads one policy file from standard input, named
      <stdin>; /dev/stdin and named pipes ('check <(cat a.retry)') are read as streams. A
      file name that is not UTF-8 is shown with its other bytes as \\xHH. Anything that
      cannot be read or listed is reported with its path, and the exit status is 2.

      With '--format json' standard output is one JSON object for editors and CI:
      {"files": [...], "diagnostics": [{"file", "line", "column", "endLine", "endColumn",
      "severity", "id", "message", "notes": [...]}], "errors": N, "warnings": N,
      "omitted": N, "unreadable": [{"file", "message"}]}.

      At most 100 errors and 100 warnings are shown for a file; then one note, at the first
      left out, says how many more there are. "errors" and "warnings" count them all, and
      "omitted" is how many of them "diagnostics" leaves out.

      Files are read as bytes: bytes that are not UTF-8, comments included, are
      'invalid-utf8' errors at their line and column; a UTF-8 byte order mark at the start
      is accepted.

      A summary line goes to standard error in the text format.

      With '--watch' the check runs again whenever one of the files changes (an edit, an
      atomic rename, a symbolic link that now leads elsewhere, a file added to or removed from
      a folder, a new or broken link, a file that became a folder or a named pipe), with a
      note saying which, until interrupted: for editing policies beside a running service
      whose PolicyStore reloads them. On Linux the folders are watched with inotify, so a
      look with no change costs next to nothing; elsewhere every look walks them. Under
      '--watch' only regular files are read: a named pipe, even one named here, is reported
      as not a regular file, never waited on.

      A name that the build plugin cannot give Swift code is an error too ('swift-name'), as
      in 'generate': a policy named 'Type' or 'Protocol' (Swift reads RetryPolicies.Type as
      the metatype), a policy or hook named '_'.

      '--classes' and '--hooks' check names against the host's vocabulary, as the library
      does when the host hands one to the compiler: a name outside it is an error with a
      "did you mean" suggestion ('any' and 'timeout' are always known).
      """,
    options: Options.optionSpecs,
    minimumArguments: 1, maximumArguments: nil, argumentName: "file or folder to check",
    examples: [
      ("retry-policy check payments.retry", "Check one file."),
      ("retry-policy check policies/", "Check every .retry file below policies/."),
      ("retry-policy check --format json policies/ > report.json", "A report for CI."),
      ("cat payments.retry | retry-policy check -", "Check standard input."),
      (
        "retry-policy check --classes serverError,URLError --hooks refreshToken app.retry",
        "Also report names the app does not register."
      ),
    ],
    exitStatuses: [
      (0, "no errors (warnings allowed)"), (1, "errors found"),
      (2, "usage error, a file or folder that cannot be read, or lost output"),
    ])

  /// The diagnostics of one checked file.
  struct FileReport {
    /// The file's path as shown (or `<stdin>`).
    var name: String
    /// Its bytes, as read.
    var source: [UInt8]
    /// The diagnostics shown: the first 100 errors and 100 warnings, then a note.
    var diagnostics: [Diagnostic]
    /// The errors found beyond those shown.
    var omittedErrors = 0
    /// The warnings found beyond those shown.
    var omittedWarnings = 0

    /// Every error found, shown or not.
    var errorCount: Int { diagnostics.count { $0.severity == .error } + omittedErrors }
    /// Every warning found, shown or not.
    var warningCount: Int { diagnostics.count { $0.severity == .warning } + omittedWarnings }
  }

  /// The options of `check`.
  struct Options: CommandOptions {
    /// The form of the report.
    enum Format: Sendable { case text, json }

    var format = Format.text
    var isJSON = false
    var errorClasses: Set<String>?
    var hooks: Set<String>?
    var isWatching = false
    var arguments: [String] = []

    static var declarations: [OptionDeclaration<Self>] {
      [
        .option(
          "format", value: "FORMAT", help: "Print diagnostics as text (default) or as JSON.",
          \.format, .choice(["text": .text, "json": .json])),
        .flag("json", help: "The same as --format json.", \.isJSON),
        .option(
          "classes", value: "LIST",
          help: "The error classes the host knows (comma-separated); others are errors.",
          \.errorClasses, .nameList),
        .option(
          "hooks", value: "LIST",
          help: "The hooks the host registers (comma-separated); others are errors.", \.hooks,
          .nameList),
        .flag(
          "watch", help: "Check again whenever a file changes, until interrupted.",
          \.isWatching),
      ]
    }

    func validate() throws(UsageError) {
      if isWatching, arguments.contains("-") {
        throw .other("'--watch' needs files or folders, not '-' (standard input)")
      }
    }

    /// The vocabulary of `--classes` and `--hooks`; open where not given.
    var vocabulary: Vocabulary { Vocabulary(errorClasses: errorClasses, hooks: hooks) }
  }

  static func run(_ options: Options, context: CommandContext) async -> Int32 {
    guard options.isWatching else { return check(options, context: context) }
    return await watch(options, context: context, clock: ContinuousClock(), rounds: nil)
  }

  /// `check --watch`: checks, then checks again each time a file (or the set of files)
  /// changes, looking every `interval`, for `rounds` looks (nil: until interrupted).
  ///
  /// The folders the arguments name (walked again after every change) and the folders of
  /// each file and of the file each link leads to are watched with the platform's
  /// notifications (inotify on Linux): a look with no notification costs one read. Where the
  /// platform has none (or a folder cannot be watched), each look walks the arguments again.
  /// Either way a new file or link, a broken link, a file that became a folder, a named pipe
  /// or anything else, and an edit are noticed at the first look after them. Files are only
  /// read when they are regular files, so a named pipe never blocks a watch.
  ///
  /// Returns the status of the last check.
  static func watch(
    _ options: Options, context: CommandContext, clock: some Clock<Duration>,
    interval: Duration = .milliseconds(500), rounds: Int?
  ) async -> Int32 {
    var status = check(options, context: context)
    var seen = WatchScan(options, context: context)
    var notifications = PolicyFolderWatch(folders: seen.watchedFolders)
    var mustLook = false
    var round = 0
    while rounds.map({ round < $0 }) ?? true {
      round += 1
      do {
        try await clock.sleep(for: interval)
      } catch {
        break
      }
      if let watch = notifications, !mustLook, !watch.takeChanges() {
        continue
      }
      mustLook = false
      let now = WatchScan(options, context: context)
      // Watch the folders of now; a change the old watch saw meanwhile is looked at next.
      if let old = notifications {
        notifications = PolicyFolderWatch(folders: now.watchedFolders)
        mustLook = old.takeChanges()
      }
      guard now.fingerprints != seen.fingerprints else { continue }
      let changed = now.changes(from: seen)
      seen = now
      context.output.writeError(
        "retry-policy: note: changed: \(changed.joined(separator: ", ")); checking again\n")
      status = check(options, context: context)
    }
    return status
  }

  /// What `check --watch` sees of its arguments at one look, without reading a file.
  struct WatchScan {
    /// What one path is at one look.
    enum Fingerprint: Equatable {
      /// A file to check, and its version (nil: it went away since it was listed).
      case file(PolicyFileVersion?)
      /// A path that cannot be read or listed: a broken link, a named pipe in a folder.
      case unreadable(String)
    }

    /// Each path, by the name messages give it.
    var fingerprints: [String: Fingerprint] = [:]
    /// The folders to watch: every folder walked, and the folder of each file and of the
    /// file its links lead to (a ConfigMap's `..data` target).
    var watchedFolders: [[UInt8]] = []

    init(_ options: Options, context: CommandContext) {
      let quiet = CommandContext(
        output: Output(destination: .capture, outputUsesColor: false, errorUsesColor: false),
        environment: context.environment, input: Data())
      let expansion = PolicyInput.expand(options.arguments, context: quiet)
      var folders = Set(expansion.folders)
      for file in expansion.files {
        guard let path = file.path else { continue }
        fingerprints[file.name] = .file(PolicyFileVersion(path: path))
        folders.insert(FileReplacement.folder(of: path))
        folders.insert(FileReplacement.folder(of: PolicyFileReader.resolvedPath(path)))
      }
      for error in expansion.errors {
        fingerprints[error.path] = .unreadable(error.message)
        folders.insert(FileReplacement.folder(of: context.pathBytes(error.path)))
      }
      for folder in expansion.empty { fingerprints[folder] = .unreadable("empty") }
      for loop in expansion.loops { fingerprints[loop] = .unreadable("loop") }
      watchedFolders = folders.sorted { $0.lexicographicallyPrecedes($1) }
    }

    /// The paths that differ from `previous`, sorted; a link's names the version it now
    /// leads to: `policies.retry → ..2026_11_27_…/policies.retry`.
    func changes(from previous: WatchScan) -> [String] {
      let keys = Set(fingerprints.keys).union(previous.fingerprints.keys)
      return keys.filter { fingerprints[$0] != previous.fingerprints[$0] }.sorted().map { name in
        guard case .file(let version?) = fingerprints[name],
          let target = PolicyReload.versionName(version.resolvedPath, of: name)
        else { return name }
        return "\(name) → \(target)"
      }
    }
  }

  /// One check of every file the arguments name; returns the exit status.
  static func check(_ options: Options, context: CommandContext) -> Int32 {
    let output = context.output
    let isJSON = options.format == .json || options.isJSON
    let expansion = PolicyInput.expand(options.arguments, context: context)
    var unreadable = expansion.errors
    var reports: [FileReport] = []
    for var file in expansion.files {
      // A watch never blocks on a named pipe, even one named on the command line.
      if options.isWatching { file.isStream = false }
      switch PolicyInput.readBytes(file, context: context) {
      case .success(let data):
        // Bytes, not a string: bytes that are not UTF-8 are errors, not U+FFFD.
        let source = [UInt8](data)
        let analysis = analyze(policyFile: source, vocabulary: options.vocabulary)
        // The names `generate` cannot give the build are errors here too, so that a file
        // `check` passes also builds.
        var diagnostics = PolicySwiftSource.merging(
          PolicySwiftSource.nameDiagnostics(of: analysis.syntax), into: analysis.diagnostics)
        if !analysis.hasErrors, analysis.policies.isEmpty {
          let start = SourceLocation(line: 1, column: 1, offset: 0)
          diagnostics.insert(
            Diagnostic(.noPoliciesInFile, at: SourceRange(start: start, end: start)), at: 0)
        }
        reports.append(
          FileReport(
            name: file.name, source: source, diagnostics: diagnostics,
            omittedErrors: analysis.omittedErrorCount,
            omittedWarnings: analysis.omittedWarningCount))
      case .failure(let error):
        unreadable.append(error)
      }
    }
    for error in unreadable.sorted(by: { $0.path < $1.path }) {
      error.report(to: output)
    }
    expansion.printWarnings(to: output)
    if isJSON {
      output.write(JSONWriter().write(jsonReport(reports, unreadable: unreadable)) + "\n")
    } else {
      for report in reports where !report.diagnostics.isEmpty {
        let renderer = DiagnosticRenderer(
          bytes: report.source, sourceName: report.name, usesColor: output.outputUsesColor)
        output.write(renderer.render(report.diagnostics))
      }
      output.writeError(summary(reports, unreadable: unreadable.count))
    }
    if !unreadable.isEmpty { return ExitStatus.usage }
    let hasErrors = reports.contains { $0.errorCount > 0 }
    return hasErrors ? ExitStatus.failure : ExitStatus.success
  }

  /// `checked 3 files: 2 errors, 1 warning`.
  static func summary(_ reports: [FileReport], unreadable: Int) -> String {
    let errors = reports.reduce(0) { $0 + $1.errorCount }
    let warnings = reports.reduce(0) { $0 + $1.warningCount }
    var text = "checked \(counted(reports.count, "file"))"
    if errors == 0, warnings == 0 {
      // Never "no problems" about a file that was not read.
      if unreadable == 0 {
        text += ": no problems"
      } else if !reports.isEmpty {
        text += ": no problems in the files read"
      }
    } else {
      var parts: [String] = []
      if errors > 0 { parts.append(counted(errors, "error")) }
      if warnings > 0 { parts.append(counted(warnings, "warning")) }
      text += ": " + parts.joined(separator: ", ")
    }
    if unreadable > 0 { text += "; \(counted(unreadable, "file")) could not be read" }
    return text + "\n"
  }

  private static func counted(_ count: Int, _ noun: String) -> String {
    "\(count) \(noun)\(count == 1 ? "" : "s")"
  }

  /// The `--format json` object: the files checked, every diagnostic with its file, the
  /// counts, and the paths that could not be read.
  static func jsonReport(_ reports: [FileReport], unreadable: [PolicyInput.ReadError]) -> JSONValue
  {
    let diagnostics = reports.flatMap { report in
      let converter = SourceLocationConverter(bytes: report.source)
      return report.diagnostics.map { jsonValue($0, file: report.name, converter: converter) }
    }
    let omitted = reports.reduce(0) { $0 + $1.omittedErrors + $1.omittedWarnings }
    return .object([
      JSONMember("files", .array(reports.map { .string($0.name) })),
      JSONMember("diagnostics", .array(diagnostics)),
      JSONMember("errors", .int(reports.reduce(0) { $0 + $1.errorCount })),
      JSONMember("warnings", .int(reports.reduce(0) { $0 + $1.warningCount })),
      JSONMember("omitted", .int(omitted)),
      JSONMember(
        "unreadable",
        .array(
          unreadable.map { error in
            .object([
              JSONMember("file", .string(error.path)),
              JSONMember("message", .string(error.message)),
            ])
          })),
    ])
  }

  /// One diagnostic as JSON, its places from `converter` (the file's); notes nest, each with
  /// its own place.
  static func jsonValue(
    _ diagnostic: Diagnostic, file: String, converter: SourceLocationConverter
  ) -> JSONValue {
    let start = converter.location(ofOffset: diagnostic.range.start.offset)
    let end = converter.location(ofOffset: diagnostic.range.end.offset)
    return .object([
      JSONMember("file", .string(file)),
      JSONMember("line", .int(start.line)),
      JSONMember("column", .int(start.column)),
      JSONMember("endLine", .int(end.line)),
      JSONMember("endColumn", .int(end.column)),
      JSONMember("severity", .string(diagnostic.severity.rawValue)),
      JSONMember("id", .string(diagnostic.id.rawValue)),
      JSONMember("message", .string(diagnostic.message)),
      JSONMember(
        "notes", .array(diagnostic.notes.map { jsonValue($0, file: file, converter: converter) })),
    ])
  }
}
