import RetryPolicy

/// `retry-policy lsp`: a Language Server Protocol server on standard input and output.
///
/// The loop (``LanguageServerConnection/serve(report:)``) only moves bytes: it reads what
/// standard input has, splits it into messages (``MessageFramer``), hands each to the
/// ``LanguageServer`` state machine and writes what it answers, framed, to standard output.
/// It ends at `exit` or at the end of the input.
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
    LanguageServerConnection.serve { context.output.writeError("retry-policy: error: \($0)\n") }
  }
}
