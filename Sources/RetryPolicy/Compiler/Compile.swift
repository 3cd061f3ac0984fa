import Foundation

// The compile API: `analyze`, then a throw when the text has an error (see `Analyze.swift`).

/// Compiles the text of one policy: a `retry` rule, with policy-wide clauses, or several
/// lines of them.
///
/// Throws ``PolicyCompileError`` carrying every diagnostic of the text (warnings too) when it
/// has an error. A policy that compiles with warnings is returned; its warnings are those of
/// ``analyze(policy:vocabulary:)``.
///
///     let policy = try compile(policy: "retry 5 on serverError backoff 1s x1.5 jitter 10%")
public func compile(policy source: String, vocabulary: Vocabulary = .open) throws -> CompiledPolicy
{
  // `analyze(policy:)`, with the diagnostics put in order only when they are thrown: a
  // policy that compiles is returned as it is.
  let (body, _, syntaxDiagnostics) = Parser.parsePolicy(text: source)
  var checker = PolicyChecker(vocabulary: vocabulary)
  if let policy = checker.compile(
    body, name: nil, emptyRange: body.range, hasSyntaxErrors: !syntaxDiagnostics.isEmpty)
  {
    return policy
  }
  let diagnostics = DiagnosticList.merged(syntaxDiagnostics, checker.diagnostics).finished()
  throw PolicyCompileError(diagnostics: diagnostics.diagnostics, sourceName: "<policy>")
}

/// Compiles a policy file's text: named policies, each `policy NAME = …` or a block.
///
/// Throws ``PolicyCompileError`` carrying every diagnostic of the file (warnings too),
/// reported under `sourceName`, when any policy of it has an error. Otherwise the file's
/// warnings are in ``PolicyFile/warnings``.
public func compile(
  policyFile source: String, sourceName: String = "<file>", vocabulary: Vocabulary = .open
) throws -> PolicyFile {
  let analysis = analyze(policyFile: source, vocabulary: vocabulary)
  if analysis.hasErrors {
    throw PolicyCompileError(diagnostics: analysis.diagnostics, sourceName: sourceName)
  }
  return PolicyFile(policies: analysis.policies, warnings: analysis.warnings)
}

/// The compiled policies of one policy file, by name.
///
///     let file = try PolicyFile(contentsOf: URL(fileURLWithPath: "payments.retry"))
///     let payments = file["payments"]
public struct PolicyFile: Sendable, Equatable {
  /// The policies in the order of the file.
  public var policies: [CompiledPolicy]
  /// The file's warnings, in the order of the file: what compiles but is likely not what was
  /// meant, such as `delay 0s`.
  ///
  /// `compile(policyFile:)` fails on errors and returns the warnings here;
  /// ``analyze(policyFile:vocabulary:)-(String,_)`` gives every diagnostic.
  public var warnings: [Diagnostic]

  /// Reads and compiles the policy file at `url`.
  ///
  /// The file is read as bytes: bytes that are not UTF-8, comments included, are
  /// `invalid-utf8` errors. Throws the reading error when the file cannot be read, and
  /// ``PolicyCompileError`` (naming the file by its path) when it has an error.
  public init(contentsOf url: URL, vocabulary: Vocabulary = .open) throws {
    let data = try Data(contentsOf: url)
    let sourceName = url.isFileURL ? url.path : url.absoluteString
    let analysis = analyze(policyFile: [UInt8](data), vocabulary: vocabulary)
    if analysis.hasErrors {
      throw PolicyCompileError(diagnostics: analysis.diagnostics, sourceName: sourceName)
    }
    self.init(policies: analysis.policies, warnings: analysis.warnings)
  }

  /// Creates a file from compiled policies and the warnings about them.
  public init(policies: [CompiledPolicy], warnings: [Diagnostic] = []) {
    self.policies = policies
    self.warnings = warnings
  }

  /// The policy of that name, if the file has one.
  public subscript(name: String) -> CompiledPolicy? {
    policies.first { $0.name == name }
  }
}
