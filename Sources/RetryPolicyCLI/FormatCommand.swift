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
      .retry file below it, recursively. '-' reads a policy file from standard input and
      writes the formatted text to standard output.

      With '--check' nothing is written: the files that would change are listed on
      standard output, one a line, and the exit status is 1 if there are any.

      A file with errors is left unchanged and its diagnostics are printed to standard
      error ('-' then writes nothing to standard output). Formatting never changes meaning: the formatted text is compiled again and
      must give the same policies and the same comments, or the file is left unchanged.
      """,
    options: [
      .flag("check", help: "Write nothing; list the files that would change.")
    ],
    minimumArguments: 1, maximumArguments: nil, argumentName: "file or folder to format",
    examples: [
      ("retry-policy fmt payments.retry", "Format one file in place."),
      ("retry-policy fmt --check policies/", "Fail (exit 1) if any file is not formatted."),
      ("retry-policy fmt - < payments.retry", "Format standard input to standard output."),
    ],
    exitStatuses: [
      (0, "formatted (or, with --check, nothing would change)"),
      (1, "a file has errors, or with --check a file would change"),
      (2, "usage error or unreadable file"),
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
    let before = analyze(policyFile: source, vocabulary: .open, keepingSyntax: true)
    if before.hasErrors { return .invalid(before.diagnostics) }
    let formatted = CanonicalPrinter.print(before.syntax)
    if formatted == source { return .formatted(source) }
    let after = analyze(policyFile: formatted, vocabulary: .open, keepingSyntax: true)
    if after.hasErrors {
      return .changesMeaning("the formatted text does not compile")
    }
    if after.policies != before.policies {
      return .changesMeaning("the formatted text compiles to different policies")
    }
    let commentsBefore = before.syntax.comments.map { trimmed($0.text) }
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

  static func run(_ arguments: ParsedArguments, context: CommandContext) async -> Int32 {
    let output = context.output
    let isCheck = arguments.has("check")
    let (files, missing, empty) = PolicyInput.expand(arguments.arguments)
    var unreadable = !missing.isEmpty
    for error in missing { output.error(error.message) }
    for folder in empty {
      output.warning("no .\(PolicyInput.fileExtension) files in '\(folder)'")
    }
    var failed = false
    for path in files {
      let isStandardInput = path == "-"
      let name = isStandardInput ? PolicyInput.standardInputName : path
      let source: String
      if isStandardInput {
        source = context.standardInputText()
      } else {
        switch PolicyInput.readFile(path) {
        case .success(let text): source = text
        case .failure(let error):
          output.error(error.message)
          unreadable = true
          continue
        }
      }
      switch format(source) {
      case .invalid(let diagnostics):
        PolicyInput.printDiagnostics(diagnostics, source: source, name: name, context: context)
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
        } else if isStandardInput {
          output.write(formatted)
        } else if formatted != source {
          do {
            try Data(formatted.utf8).write(to: URL(fileURLWithPath: path))
          } catch {
            output.error("cannot write '\(path)': \(error.localizedDescription)")
            unreadable = true
          }
        }
      }
    }
    if unreadable { return ExitStatus.usage }
    return failed ? ExitStatus.failure : ExitStatus.success
  }
}
