// PLACEHOLDER with the agreed signature; the REPL work replaces this file.

/// `retry-policy repl`: the interactive session.
enum ReplCommand {
  /// Runs the REPL with the arguments after `repl`; returns the exit status.
  static func run(arguments: [String]) async -> Int32 { 0 }
}
