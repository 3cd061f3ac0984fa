import Foundation
import RetryPolicy

/// Where a piece of the REPL's output goes.
enum ReplStream: Sendable, Hashable {
  /// Standard output: explanations, listings, help.
  case output
  /// Standard error: diagnostics and complaints about commands.
  case error
}

/// A piece of the REPL's output, with the stream it goes to.
struct ReplMessage: Sendable, Hashable {
  /// The stream.
  var stream: ReplStream
  /// The text, ending with a line end.
  var text: String
}

/// The REPL's session: fed one line at a time, it answers with output and keeps the state
/// between lines (a block being typed, the last policy, the loaded file).
///
/// It knows nothing of terminals: the driver in ``ReplCommand`` reads lines (with the line
/// editor, or from a pipe), hands them to ``handle(line:)`` and writes out the messages.
///
/// - A line of policy text (`retry 3 backoff 1s`) is compiled and explained at once.
/// - `policy NAME = …` is compiled as a one-policy file; `policy NAME {` starts a block that
///   goes on until its `}` (``isInBlock`` tells the driver to show the continuation prompt).
/// - A line starting with `:` is a command (``commands``).
struct ReplSession {
  /// The prompt for a new entry.
  static let prompt = "retry> "
  /// The prompt inside a block.
  static let continuationPrompt = "...> "
  /// The name diagnostics give typed text.
  static let sourceName = "<repl>"

  /// A REPL command: its name, its argument's shape and what it does.
  struct Command: Sendable, Hashable {
    /// The name, without the colon.
    var name: String
    /// The argument, as `:help` shows it; empty for none.
    var argument: String
    /// One line on what the command does.
    var summary: String
  }

  /// Every command, in the order `:help` lists them.
  static let commands: [Command] = [
    Command(name: "help", argument: "", summary: "show this help"),
    Command(
      name: "ast", argument: "",
      summary: "the syntax tree of the last policy, with source ranges"),
    Command(name: "json", argument: "", summary: "the last policy as 'explain --json' shows it"),
    Command(
      name: "simulate", argument: "OUTCOMES",
      summary: "run the last policy on virtual time against outcomes, as 'simulate' does"),
    Command(
      name: "load", argument: "[FILE]",
      summary: "load a policy file and list its policies; again (or alone) to reload it"),
    Command(
      name: "explain", argument: "[NAME]",
      summary: "explain a policy of the loaded file (or typed as 'policy NAME …')"),
    Command(name: "quit", argument: "", summary: "leave the REPL (Ctrl-D on an empty line too)"),
  ]

  /// Whether to color diagnostics and explanations.
  var usesColor: Bool
  /// Reads a file's bytes for `:load`; replaced in tests.
  var readFile: @Sendable (String) throws -> [UInt8]

  /// The lines of the block being typed, from `policy NAME {` on.
  private(set) var pendingBlock: [String] = []
  /// How many braces the block being typed has left open.
  private var openBraces = 0
  /// Whether a `:quit` was given.
  private(set) var isFinished = false
  /// How many entries had errors (policy errors, unknown commands, unreadable files).
  private(set) var errorCount = 0

  /// The last policy typed or explained: its text and tree, and its compiled form when it had
  /// no errors.
  private var current: (syntax: SourceFileSyntax, policy: CompiledPolicy?)?
  /// The file `:load` read last.
  private var loadedFile: (path: String, analysis: PolicyAnalysis)?
  /// Policies typed as `policy NAME …`, by name.
  private var definitions: [String: (syntax: SourceFileSyntax, policy: CompiledPolicy)] = [:]

  /// Creates a session.
  init(
    usesColor: Bool = false,
    readFile: @escaping @Sendable (String) throws -> [UInt8] = ReplSession.readFileContents
  ) {
    self.usesColor = usesColor
    self.readFile = readFile
  }

  /// Whether a block is open: the next line continues it.
  var isInBlock: Bool { !pendingBlock.isEmpty }

  /// The prompt for the next line.
  var currentPrompt: String { isInBlock ? Self.continuationPrompt : Self.prompt }

  /// Handles one line typed in (without its line end).
  mutating func handle(line: String) async -> [ReplMessage] {
    let trimmed = line.trimmingCharacters(in: .whitespaces)
    if trimmed.hasPrefix(":") { return await command(trimmed) }
    if isInBlock {
      pendingBlock.append(line)
      openBraces += Self.braceBalance(of: line)
      guard openBraces <= 0 else { return [] }
      let text = pendingBlock.joined(separator: "\n")
      pendingBlock = []
      openBraces = 0
      return evaluate(text, isFile: true)
    }
    if trimmed.isEmpty || trimmed.hasPrefix("#") { return [] }
    if Self.firstWord(of: trimmed) == Keyword.policy.text {
      let balance = Self.braceBalance(of: line)
      if balance > 0 {
        pendingBlock = [line]
        openBraces = balance
        return []
      }
      return evaluate(line, isFile: true)
    }
    return evaluate(line, isFile: false)
  }

  /// Ctrl-C: drops the block being typed, if any.
  mutating func interrupt() {
    pendingBlock = []
    openBraces = 0
  }

  /// End of input: a block still open is compiled as it is, so its error is reported.
  mutating func finish() -> [ReplMessage] {
    guard isInBlock else { return [] }
    let text = pendingBlock.joined(separator: "\n")
    pendingBlock = []
    openBraces = 0
    return evaluate(text, isFile: true)
  }

  // MARK: Policies

  private mutating func evaluate(_ text: String, isFile: Bool) -> [ReplMessage] {
    let analysis =
      isFile
      ? analyze(policyFile: text)
      : analyze(policy: text)
    var messages = diagnostics(analysis.diagnostics, source: text, sourceName: Self.sourceName)
    if analysis.hasErrors {
      errorCount += 1
      current = (analysis.syntax, nil)
      return messages
    }
    guard isFile else {
      guard let policy = analysis.policies.first else { return messages }
      current = (analysis.syntax, policy)
      messages.append(output(ReplRendering.explain(policy, usesColor: usesColor)))
      return messages
    }
    for policy in analysis.policies {
      let declaration = analysis.syntax.policies.first { $0.name.text == policy.name }
      let syntax = declaration.map(Self.file(of:)) ?? analysis.syntax
      current = (syntax, policy)
      if let name = policy.name { definitions[name] = (syntax, policy) }
      messages.append(output(ReplRendering.explain(policy, usesColor: usesColor)))
    }
    return messages
  }

  private func diagnostics(
    _ diagnostics: [Diagnostic], source: String, sourceName: String
  ) -> [ReplMessage] {
    guard !diagnostics.isEmpty else { return [] }
    let renderer = DiagnosticRenderer(source: source, sourceName: sourceName, usesColor: usesColor)
    return [ReplMessage(stream: .error, text: renderer.render(diagnostics))]
  }

  // MARK: Commands

  private mutating func command(_ line: String) async -> [ReplMessage] {
    let body = line.dropFirst()
    let name = String(body.prefix { !$0.isWhitespace })
    let argument = body.dropFirst(name.count).trimmingCharacters(in: .whitespaces)
    switch name {
    case "help":
      return [output(Self.helpText)]
    case "quit", "q", "exit":
      isFinished = true
      return []
    case "ast":
      guard let current else { return failure("no policy yet; type one first") }
      return [output(ReplSyntaxDump.dump(current.syntax))]
    case "json":
      guard let policy = lastPolicy() else { return lastPolicyFailure() }
      return [output(ReplRendering.json(policy))]
    case "simulate":
      guard let policy = lastPolicy() else { return lastPolicyFailure() }
      guard !argument.isEmpty else {
        return failure("':simulate' needs outcomes, such as ':simulate serverError*2, ok'")
      }
      switch await ReplRendering.simulate(policy, outcomes: argument, usesColor: usesColor) {
      case .success(let text): return [output(text)]
      case .failure(let message): return failure(message.text)
      }
    case "load":
      guard !argument.isEmpty else {
        guard let loadedFile else { return failure("':load' needs a file name") }
        return load(loadedFile.path)
      }
      return load(argument)
    case "explain":
      return explain(name: argument)
    default:
      let suggestion = Suggestion.nearest(to: name, in: Self.commands.map(\.name))
      let hint = suggestion.map { "; did you mean ':\($0)'?" } ?? "; type ':help' for the commands"
      return failure("unknown command ':\(name)'\(hint)")
    }
  }

  private func lastPolicy() -> CompiledPolicy? { current?.policy }

  private mutating func lastPolicyFailure() -> [ReplMessage] {
    current == nil
      ? failure("no policy yet; type one first")
      : failure("the last policy has errors; type a correct one first")
  }

  private mutating func load(_ path: String) -> [ReplMessage] {
    let expanded = (path as NSString).expandingTildeInPath
    let bytes: [UInt8]
    do {
      bytes = try readFile(expanded)
    } catch let error as PolicyInput.ReadError where error.isTooLarge {
      return failure("'\(path)' is larger than \(PolicyInput.sizeLimitText)")
    } catch {
      return failure("cannot read '\(path)': \(Self.reason(error))")
    }
    // Read as bytes, as `check` reads a file, so that bytes that are not UTF-8 are reported.
    let analysis = analyze(policyFile: bytes)
    var messages: [ReplMessage] = []
    if !analysis.diagnostics.isEmpty {
      let renderer = DiagnosticRenderer(bytes: bytes, sourceName: path, usesColor: usesColor)
      messages.append(ReplMessage(stream: .error, text: renderer.render(analysis.diagnostics)))
    }
    if analysis.hasErrors { errorCount += 1 }
    // Loading the loaded file again reloads it in place, as a service's PolicyStore does: a
    // version with errors changes nothing.
    if let previous = loadedFile, previous.path == path {
      guard !analysis.hasErrors else {
        messages.append(
          output("not reloaded: '\(path)' has errors; its policies stay as they were\n"))
        return messages
      }
      loadedFile = (path, analysis)
      let changed = Self.changedPolicies(from: previous.analysis, to: analysis)
      let what =
        changed.isEmpty ? "no policy changed" : changed.joined(separator: ", ") + " changed"
      messages.append(output("reloaded '\(path)': \(what)\n"))
      return messages
    }
    loadedFile = (path, analysis)
    let compiled = Set(analysis.policies.compactMap(\.name))
    let names = analysis.syntax.policies.map(\.name.text).filter { !$0.isEmpty }
    let count = names.count == 1 ? "1 policy" : "\(names.count) policies"
    var text = "loaded '\(path)': \(count)\n"
    for name in names {
      text += compiled.contains(name) ? "  \(name)\n" : "  \(name) (has errors)\n"
    }
    if !names.isEmpty { text += "type ':explain NAME' to see one\n" }
    messages.append(output(text))
    return messages
  }

  /// The names of the policies added, changed or removed between two reads of a file.
  private static func changedPolicies(
    from old: PolicyAnalysis, to new: PolicyAnalysis
  ) -> [String] {
    let before = Dictionary(
      old.policies.compactMap { policy in policy.name.map { ($0, policy) } },
      uniquingKeysWith: { first, _ in first })
    let after = Dictionary(
      new.policies.compactMap { policy in policy.name.map { ($0, policy) } },
      uniquingKeysWith: { first, _ in first })
    let names = new.policies.compactMap(\.name)
    return names.filter { before[$0] != after[$0] }
      + old.policies.compactMap(\.name).filter { after[$0] == nil }
  }

  private mutating func explain(name: String) -> [ReplMessage] {
    guard !name.isEmpty else {
      guard let policy = lastPolicy() else { return lastPolicyFailure() }
      return [output(ReplRendering.explain(policy, usesColor: usesColor))]
    }
    if let loadedFile {
      let analysis = loadedFile.analysis
      if let policy = analysis.policies.first(where: { $0.name == name }),
        let declaration = analysis.syntax.policies.first(where: { $0.name.text == name })
      {
        current = (Self.file(of: declaration), policy)
        return [output(ReplRendering.explain(policy, usesColor: usesColor))]
      }
      if analysis.syntax.policies.contains(where: { $0.name.text == name }) {
        return failure("policy '\(name)' in '\(loadedFile.path)' has errors")
      }
    }
    if let definition = definitions[name] {
      current = (definition.syntax, definition.policy)
      return [output(ReplRendering.explain(definition.policy, usesColor: usesColor))]
    }
    let known =
      (loadedFile?.analysis.syntax.policies.map(\.name.text) ?? []) + definitions.keys.sorted()
    let hint = Suggestion.didYouMean(Suggestion.nearest(to: name, in: known))
    guard let loadedFile else {
      if !definitions.isEmpty { return failure("no policy '\(name)'\(hint)") }
      return failure("no policy '\(name)'; load a file with ':load FILE' first")
    }
    return failure("no policy '\(name)' in '\(loadedFile.path)'\(hint)")
  }

  // MARK: Helpers

  private func output(_ text: String) -> ReplMessage {
    ReplMessage(stream: .output, text: text.hasSuffix("\n") ? text : text + "\n")
  }

  private mutating func failure(_ message: String) -> [ReplMessage] {
    errorCount += 1
    let label = usesColor ? "\u{1B}[1;31merror:\u{1B}[0m" : "error:"
    return [ReplMessage(stream: .error, text: "\(label) \(message)\n")]
  }

  /// The help `:help` prints.
  static var helpText: String {
    var text = """
      Type a policy, such as 'retry 5 on serverError backoff 1s x1.5 jitter 10%', to see it
      compiled and explained. 'policy NAME {' starts a block that ends with '}'.
      Ctrl-C clears the line (and drops an open block); Ctrl-D on an empty line leaves.
      Outcomes for ':simulate': 'ok', 'cancel' or an error class, each with '*N' (N times),
      '@D' (a Retry-After of D) or '~D' (the attempt takes D), such as 'serverError*2 ok'.
      From a pipe, the exit status is 1 when any line had an error.

      Commands:

      """
    let width = commands.map { $0.name.count + $0.argument.count + 2 }.max() ?? 0
    for command in commands {
      let head = ":" + command.name + (command.argument.isEmpty ? "" : " " + command.argument)
      text += "  " + head + String(repeating: " ", count: max(1, width - head.count + 2))
      text += command.summary + "\n"
    }
    return text
  }

  /// `{` minus `}` on a line, not counting a comment.
  static func braceBalance(of line: String) -> Int {
    var balance = 0
    for character in line {
      if character == "#" { break }
      if character == "{" { balance += 1 }
      if character == "}" { balance -= 1 }
    }
    return balance
  }

  private static func firstWord(of line: String) -> Substring {
    line.prefix { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" }
  }

  private static func file(of declaration: PolicyDeclarationSyntax) -> SourceFileSyntax {
    SourceFileSyntax(policies: [declaration], comments: [], range: declaration.range)
  }

  /// Reads a file's bytes; the lexer reports any that are not UTF-8.
  @Sendable static func readFileContents(_ path: String) throws -> [UInt8] {
    // The commands' one reader: at most `PolicyInput.sizeLimit` bytes, pipes and devices too.
    Array(try PolicyInput.readFile(Array(path.utf8), name: path, streams: .allowed).get())
  }

  private static func reason(_ error: any Error) -> String {
    if let error = error as? PolicyInput.ReadError { return error.reason }
    let cocoa = error as NSError
    if cocoa.domain == NSCocoaErrorDomain {
      switch cocoa.code {
      case NSFileReadNoSuchFileError: return "no such file"
      case NSFileReadNoPermissionError: return "permission denied"
      default: break
      }
    }
    if let underlying = cocoa.userInfo[NSUnderlyingErrorKey] as? NSError,
      underlying.domain == NSPOSIXErrorDomain
    {
      return Platform.describe(errorNumber: Int32(underlying.code))
    }
    return "it is not a readable file"
  }
}
