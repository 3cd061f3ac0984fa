import RetryPolicy

/// `retry-policy lsp`: a Language Server Protocol server on standard input and output.
///
/// The loop only moves bytes: it reads what standard input has, splits it into messages
/// (``MessageFramer``), hands each to the ``LanguageServer`` state machine and writes what it
/// answers, framed, to standard output. It ends at `exit` or at the end of the input.
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
    var server = LanguageServer()
    var framer = MessageFramer()
    while server.exitStatus == nil {
      switch Platform.read(Platform.standardInput) {
      case .bytes(let bytes):
        framer.append(bytes)
      case .interrupted:
        continue
      case .end, .failure:
        return server.isShutDown ? ExitStatus.success : 1
      }
      while server.exitStatus == nil, let item = framer.next() {
        let replies: [JSONValue]
        switch item {
        case .message(let body): replies = server.handle(body)
        case .framingError(let reason): replies = server.handle(framingError: reason)
        }
        for reply in replies {
          if let failure = Platform.write(JSONRPC.framed(reply), to: Platform.standardOutput) {
            context.output.writeError(
              "retry-policy: error: cannot write output: "
                + Platform.describe(errorNumber: failure) + "\n")
            return ExitStatus.usage
          }
        }
      }
    }
    return server.exitStatus ?? 1
  }
}
