import RetryPolicy
import RetryPolicyLanguageServer

/// `retry-policy lsp`: a Language Server Protocol server on standard input and output.
///
/// The server is the library target `RetryPolicyLanguageServer`; the loop here
/// (``serve(report:)``) only moves bytes: it reads what standard input has, hands it to a
/// `LanguageServerConnection` (which frames it into messages for the `LanguageServer` state
/// machine) and writes what it answers, framed, to standard output. It ends at `exit` or at
/// the end of the input.
enum LanguageServerCommand: Subcommand {
  static let spec = CommandSpec(
    name: "lsp",
    abstract: "run a language server for .retry files on standard input and output",
    usage: ["lsp"],
    discussion: """
      Speaks the Language Server Protocol (JSON-RPC with Content-Length headers) on
      standard input and output, with full-document sync: diagnostics on open and on every
      change, hover (the explain table of a policy or a rule), completion, quick fixes for
      every 'did you mean' suggestion, formatting and document symbols. An editor starts
      it; see the README, "Editors". Exits 0 after 'shutdown' then 'exit', 1 otherwise.
      """,
    options: [], minimumArguments: 0, maximumArguments: 0, argumentName: "",
    examples: [
      ("retry-policy lsp", "Run the server for an editor (Neovim, VS Code, Helix).")
    ],
    exitStatuses: [
      (0, "'exit' after 'shutdown'"),
      (1, "'exit' without 'shutdown', or the input ended"),
      (2, "usage error, or output that cannot be written"),
    ])

  static func run(_ options: NoOptions, context: CommandContext) async -> Int32 {
    serve { context.output.writeError("retry-policy: error: \($0)\n") }
  }

  /// Serves standard input and output until `exit` or the end of the input.
  ///
  /// Returns the exit status. `report` gets the message of an output that cannot be written.
  static func serve(report: (String) -> Void) -> Int32 {
    var connection = LanguageServerConnection(host: .tool)
    while connection.server.exitStatus == nil {
      var replies: [OutgoingMessage]
      switch Platform.read(Platform.standardInput, capacity: 1 << 20) {
      case .bytes(let bytes):
        replies = connection.receive(bytes)
      case .interrupted:
        continue
      case .end, .failure:
        return connection.server.isShutDown ? ExitStatus.success : 1
      }
      // Analyze held changes only once nothing more is waiting: what is already on
      // standard input may supersede them.
      if connection.server.exitStatus == nil, !connection.isWithinMessage,
        !Platform.waitForInput(Platform.standardInput, milliseconds: 0)
      {
        replies += connection.flush()
      }
      for reply in replies {
        if let failure = Platform.write(JSONRPC.framed(reply), to: Platform.standardOutput) {
          report("cannot write output: " + Platform.describe(errorNumber: failure))
          return ExitStatus.usage
        }
      }
    }
    return connection.server.exitStatus ?? 1
  }
}

extension LanguageServerHost {
  /// The tool's: its version in `initialize`, `explain`'s table in hovers and `fmt`'s
  /// formatter (which verifies that the text means the same).
  static let tool = LanguageServerHost(
    name: "retry-policy", version: CommandLineTool.version,
    explain: { ExplainRendering.text($0) },
    format: { bytes, analysis in
      guard case .formatted(let text) = FormatCommand.format(bytes: bytes, analysis: analysis)
      else { return nil }
      return text
    })
}
