import RetryPolicy

/// What a language server takes from the program that runs it: the name and version it
/// gives in `initialize`, the text a hover shows for a policy, and the formatter.
package struct LanguageServerHost: Sendable {
  /// The server's name, as `initialize` answers.
  package var name: String
  /// The server's version, as `initialize` answers.
  package var version: String
  /// The text a hover shows (in a code block) for a compiled policy or one rule of it.
  package var explain: @Sendable (CompiledPolicy) -> String
  /// The canonical text of a file's bytes, given their analysis; nil when the file cannot
  /// be formatted (errors, or a formatting that would change its meaning).
  package var format: @Sendable (_ bytes: [UInt8], _ analysis: PolicyAnalysis) -> String?

  /// A host with these parts.
  package init(
    name: String, version: String, explain: @escaping @Sendable (CompiledPolicy) -> String,
    format: @escaping @Sendable (_ bytes: [UInt8], _ analysis: PolicyAnalysis) -> String?
  ) {
    self.name = name
    self.version = version
    self.explain = explain
    self.format = format
  }
}
