import Dispatch
import Foundation

// A large policy file is read in parts, one per core (up to eight), and the parts' results are
// put together in the order of the file, so that the result is the one a single pass gives.
//
// A part starts at a line that starts with `policy ` (or `policy` and a tab) at its first
// column. The parser is then always at the top of the file there: whatever comes before ends
// at such a line (a block without its `}` is reported there as unterminated; a skipped error
// stops there), and nothing the lexer or the parser carries crosses a line end but the line
// number, which each part is given. Each part is checked and compiled on its own; the names of
// all the parts are then checked together, in order, as one pass checks them, and the
// diagnostics are put together as one pass orders and caps them.

/// How a file is split for reading in parts.
struct FileParting: Sendable {
  /// At most this many parts.
  var maximumParts: Int
  /// No part smaller than this many bytes, so that a small file is read in one pass.
  var minimumPartBytes: Int

  /// One part per core, up to eight, of at least 512 KiB each.
  ///
  /// The cores are counted once: asking the system costs more than analyzing a small file.
  static let automatic = FileParting(
    maximumParts: Swift.min(8, ProcessInfo.processInfo.activeProcessorCount),
    minimumPartBytes: 512 * 1024)

  /// Where the parts of `bytes` start: byte offsets and line numbers, the first at 0; one
  /// part when the file is too small or has no line to split at.
  func starts(of bytes: UnsafeBufferPointer<UInt8>) -> [(offset: Int, line: UInt32)] {
    let count = Swift.min(maximumParts, bytes.count / Swift.max(1, minimumPartBytes))
    var starts: [(offset: Int, line: UInt32)] = [(0, 1)]
    guard count > 1 else { return starts }
    var lines = 1
    var counted = 0  // lines are counted up to here
    for part in 1..<count {
      var index = Swift.max(bytes.count / count * part, counted + 1)
      while index < bytes.count, !Self.isPartStart(bytes, at: index) { index += 1 }
      guard index < bytes.count else { break }
      for byte in UnsafeBufferPointer(rebasing: bytes[counted..<index])
      where byte == UInt8(ascii: "\n") {
        lines += 1
      }
      counted = index
      starts.append((index, UInt32(clamping: lines)))
    }
    return starts
  }

  /// Whether a line starts at `index` with `policy` and a blank.
  private static func isPartStart(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int) -> Bool {
    guard index > 0, bytes[index - 1] == UInt8(ascii: "\n"), index + 7 <= bytes.count else {
      return false
    }
    let word: StaticString = "policy"
    let matches = word.withUTF8Buffer { word in
      (0..<word.count).allSatisfy { bytes[index + $0] == word[$0] }
    }
    let next = bytes[index + 6]
    return matches && (next == UInt8(ascii: " ") || next == UInt8(ascii: "\t"))
  }
}

/// What checking one part of a file found.
private struct PartResult: Sendable {
  var declarations: [(name: NameSyntax, policy: CompiledPolicy?)] = []
  var lexerDiagnostics = DiagnosticList()
  var parserDiagnostics = DiagnosticList()
  var policyDiagnostics = DiagnosticList()
  var end = SourceRange(start: .start, end: .start)
}

/// The parts' results, each stored once by the part's own task.
private final class PartResults: @unchecked Sendable {
  private let lock = NSLock()
  private var results: [PartResult]

  init(count: Int) {
    results = Array(repeating: PartResult(), count: count)
  }

  func store(_ result: PartResult, at index: Int) {
    lock.lock()
    results[index] = result
    lock.unlock()
  }

  /// The results, once every task has stored its own.
  var all: [PartResult] {
    lock.lock()
    defer { lock.unlock() }
    return results
  }
}

/// The bytes of the file, read by every part's task while the caller waits for them all.
private struct FileBytes: @unchecked Sendable {
  let bytes: UnsafeBufferPointer<UInt8>
}

/// Analyzes a policy file in parts, when `parting` splits it in more than one; nil otherwise.
func analyzeInParts(
  _ bytes: UnsafeBufferPointer<UInt8>, vocabulary: Vocabulary, parting: FileParting
) -> PolicyAnalysis? {
  let starts = parting.starts(of: bytes)
  guard starts.count > 1 else { return nil }
  let results = PartResults(count: starts.count)
  let file = FileBytes(bytes: bytes)
  DispatchQueue.concurrentPerform(iterations: starts.count) { index in
    let end = index + 1 < starts.count ? starts[index + 1].offset : file.bytes.count
    var checker = FileChecker(vocabulary: vocabulary)
    checker.checksNames = false
    checker.reserveCapacity(forFileOf: end - starts[index].offset)
    var result = PartResult()
    (result.end, result.lexerDiagnostics, result.parserDiagnostics) = Parser.parseFilePart(
      bytes: UnsafeBufferPointer(rebasing: file.bytes[0..<end]),
      lineStartingAt: starts[index].offset, line: starts[index].line, into: &checker)
    result.declarations = checker.declarations
    result.policyDiagnostics = checker.policyDiagnostics
    results.store(result, at: index)
  }
  return merged(results.all)
}

/// The parts' results as one pass over the file gives them: names checked across the parts,
/// and the diagnostics merged in the order one pass finds them (the lexer's, the parser's,
/// the names', the policies'), then ordered and capped.
private func merged(_ parts: [PartResult]) -> PolicyAnalysis {
  var lexer = DiagnosticList()
  var parser = DiagnosticList()
  var checks = DiagnosticList()
  var names = PolicyNameChecker()
  var policies: [CompiledPolicy] = []
  let declarationCount = parts.reduce(0) { $0 + $1.declarations.count }
  names.reserveCapacity(declarationCount)
  policies.reserveCapacity(declarationCount)
  for part in parts {
    lexer.append(contentsOf: part.lexerDiagnostics)
    parser.append(contentsOf: part.parserDiagnostics)
    checks.append(contentsOf: part.policyDiagnostics)
    for (name, policy) in part.declarations {
      let isDuplicate = names.isDuplicate(name)
      if let policy, !isDuplicate { policies.append(policy) }
    }
  }
  let syntax = DiagnosticList.merged(lexer, parser)
  let all = DiagnosticList.merged(syntax, DiagnosticList.merged(names.diagnostics, checks))
  let (diagnostics, omittedErrors, omittedWarnings) = all.finished()
  let range = SourceRange(start: .start, end: parts.last?.end.end ?? .start)
  var analysis = PolicyAnalysis(
    diagnostics: diagnostics, policies: policies,
    syntax: SourceFileSyntax(policies: [], comments: [], range: range))
  analysis.omittedErrorCount = omittedErrors
  analysis.omittedWarningCount = omittedWarnings
  return analysis
}
