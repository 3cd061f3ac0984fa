import Foundation
import RetryPolicy

/// `retry-policy fmt FILE…`: rewrites policy files in canonical form, keeping comments.
///
/// A file with errors is never touched (its diagnostics are printed). Before writing, the
/// formatted text is compiled again and must give the same policies and keep every comment;
/// otherwise the file is left alone and an internal error is reported.
enum FormatCommand: Subcommand {
  static let spec = CommandSpec(
    name: "fmt",
    abstract: "rewrite policy files in canonical form, keeping comments",
    usage: ["fmt [--check] <file-or-folder>…", "fmt [--check] -"],
    discussion: """
      Rewrites each file in place in the one canonical form. A folder stands for every
      .retry file below it, recursively (symbolic links followed, a link back to a folder
      being walked reported and not followed). '-', /dev/stdin and named pipes are read as
      streams and the formatted text goes to standard output.

      A file is never half-written: the formatted text goes to a temporary file in the same
      folder, flushed to the disk, then renamed over the original with the original's
      permissions. If anything fails (a full disk, no permission, the file changed in the
      meantime) the original is left as it was and the exit status is 2.

      With '--check' nothing is written: the files that would change are listed on
      standard output, one a line, and the exit status is 1 if there are any.

      A file with errors is left unchanged and its diagnostics are printed to standard
      error ('-' then writes nothing to standard output); so is a file with bytes that are
      not UTF-8, anywhere, comments included (it is never rewritten with U+FFFD). A UTF-8
      byte order mark at the start is kept. Formatting never changes meaning:
      the formatted text is compiled again and must give the same policies and the same
      comments, or the file is left unchanged.
      """,
    options: Options.optionSpecs,
    minimumArguments: 1, maximumArguments: nil, argumentName: "file or folder to format",
    examples: [
      ("retry-policy fmt payments.retry", "Format one file in place."),
      ("retry-policy fmt --check policies/", "Fail (exit 1) if any file is not formatted."),
      ("retry-policy fmt - < payments.retry", "Format standard input to standard output."),
    ],
    exitStatuses: [
      (0, "formatted (or, with --check, nothing would change)"),
      (1, "a file has errors, or with --check a file would change"),
      (2, "usage error, a file that cannot be read or replaced, or lost output"),
    ])

  /// What formatting one text gives.
  enum Outcome: Equatable {
    /// The canonical text (possibly the same as the input).
    case formatted(String)
    /// The text has errors; nothing is formatted.
    case invalid([Diagnostic])
    /// The printer's output would change the text's meaning or lose comments: a bug.
    case changesMeaning(String)
  }

  /// Formats a policy file's text, verifying that the result means the same.
  static func format(_ source: String) -> Outcome {
    format(bytes: Array(source.utf8))
  }

  /// Formats a policy file's bytes, verifying that the result means the same.
  ///
  /// Bytes that are not UTF-8 are errors (the file is refused, never rewritten with U+FFFD);
  /// a UTF-8 byte order mark at the start is kept. `analysis`, when given, is that of `bytes`.
  static func format(bytes: [UInt8], analysis: PolicyAnalysis? = nil) -> Outcome {
    // The tree lives only until it is printed: memory stays at one tree, not two.
    let formatted: String
    let policiesBefore: [CompiledPolicy]
    let commentsBefore: [Substring]
    do {
      // The caller's analysis of these bytes (the language server's), else a new one.
      let before = analysis ?? analyze(policyFile: bytes)
      if before.hasErrors { return .invalid(before.diagnostics) }
      let hasByteOrderMark = bytes.starts(with: [0xEF, 0xBB, 0xBF])
      formatted = (hasByteOrderMark ? "\u{FEFF}" : "") + CanonicalPrinter.print(before.syntax)
      policiesBefore = before.policies
      commentsBefore = before.syntax.comments.map { trimmed($0.text) }
    }
    let source = String(decoding: bytes, as: UTF8.self)
    if formatted == source { return .formatted(source) }
    // The formatted text again, to verify that it means the same.
    let after = analyze(policyFile: formatted)
    if after.hasErrors {
      return .changesMeaning("the formatted text does not compile")
    }
    if after.policies != policiesBefore {
      return .changesMeaning("the formatted text compiles to different policies")
    }
    let commentsAfter = after.syntax.comments.map { trimmed($0.text) }
    if commentsBefore != commentsAfter {
      return .changesMeaning("the formatted text does not keep every comment")
    }
    return .formatted(formatted)
  }

  private static func trimmed(_ text: String) -> Substring {
    var text = Substring(text)
    while let last = text.last, last == " " || last == "\t" || last == "\r" {
      text.removeLast()
    }
    return text
  }

  /// The options of `fmt`.
  struct Options: CommandOptions {
    var isCheck = false
    var arguments: [String] = []

    static var declarations: [OptionDeclaration<Self>] {
      [.flag("check", help: "Write nothing; list the files that would change.", \.isCheck)]
    }
  }

  static func run(_ options: Options, context: CommandContext) async -> Int32 {
    let output = context.output
    let isCheck = options.isCheck
    let expansion = PolicyInput.expand(options.arguments, context: context)
    var unreadable = expansion.reportProblems(to: output)
    var failed = false
    for file in expansion.files {
      let name = file.name
      guard let bytes = PolicyInput.read(file, context: context, unreadable: &unreadable) else {
        continue
      }
      let source = String(decoding: bytes, as: UTF8.self)
      switch format(bytes: [UInt8](bytes)) {
      case .invalid(let diagnostics):
        PolicyInput.printDiagnostics(
          diagnostics, bytes: [UInt8](bytes), name: name, context: context)
        output.error("'\(name)' has errors; not formatted")
        failed = true
      case .changesMeaning(let reason):
        output.error(
          "internal error: formatting '\(name)' would change it: \(reason); not formatted")
        failed = true
      case .formatted(let formatted):
        if isCheck {
          if formatted != source {
            output.write(name + "\n")
            failed = true
          }
        } else if let path = file.path, !file.isStream {
          guard formatted != source else { continue }
          let result = context.fileReplacement.replace(
            path, original: [UInt8](bytes), with: Array(formatted.utf8))
          if case .failure(let failure) = result {
            output.error("cannot write '\(name)': \(failure.reason); it is unchanged")
            unreadable = true
          }
        } else {
          // Standard input, a pipe or a device: the formatted text goes to standard output.
          output.write(formatted)
        }
      }
      if output.hasFailed { break }
    }
    if unreadable { return ExitStatus.usage }
    return failed ? ExitStatus.failure : ExitStatus.success
  }
}
