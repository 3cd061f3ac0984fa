// The libFuzzer entry point over the whole front end: lexer, parser, checks, compiler,
// schedule, renderer and the canonical printer. Built by `.ci/fuzz` with `swiftc` over the
// library's sources (not by SwiftPM), so it can call `package` API directly.
//
// Besides "no crash, no hang, no sanitizer report", it asserts two properties and traps when
// they fail, so libFuzzer records the input:
// - text with no errors prints in canonical form, and that form compiles to the same policies;
// - printing the canonical form again changes nothing;
// - `compile(policyFile:)` and `compile(policy:)` agree with `analyze`, the one pipeline they
//   run: the same policies and warnings, or an error with the same diagnostics;
// - keeping the syntax tree for the tools changes neither the diagnostics nor the policies;
// - the file read as bytes (as `check` reads it) agrees with the same file read as text when
//   the bytes are valid UTF-8, and reports `invalid-utf8` when they are not.

#if canImport(Glibc)
  import Glibc
#endif

/// Runs one fuzz input through the front end; libFuzzer calls it.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
  guard let data else { return 0 }
  let bytes = Array(UnsafeBufferPointer(start: data, count: size))
  let source = String(decoding: bytes, as: UTF8.self)
  exercise(source)
  compareBytes(bytes, with: source)
  return 0
}

private func exercise(_ source: String) {
  let file = analyze(policyFile: source)
  let policy = analyze(policy: source)
  let plainFile = analyze(policyFile: source)
  check(plainFile.diagnostics == file.diagnostics, "keeping the tree changes the diagnostics")
  check(plainFile.policies == file.policies, "keeping the tree changes the policies")
  let renderer = DiagnosticRenderer(source: source, sourceName: "<fuzz>")
  _ = renderer.render(file.diagnostics)
  _ = renderer.render(policy.diagnostics)
  for diagnostic in file.diagnostics + policy.diagnostics {
    check(diagnostic.line >= 1 && diagnostic.column >= 1, "diagnostic without a place")
  }
  for compiled in file.policies + policy.policies {
    for rule in compiled.rules {
      let schedule = rule.schedule(limit: 20)
      for entry in schedule.entries {
        let maximum = entry.maximum ?? Duration.saturatedDelay
        check(entry.minimum >= .zero && entry.minimum <= maximum, "bad bounds")
        check(entry.maximum != nil || rule.honorsRetryAfter, "unbounded without retry-after")
        check(maximum <= (rule.maxDelay ?? Duration.saturatedDelay), "bound above cap")
      }
    }
    _ = String(describing: compiled)
  }
  agree(compiling: { try compile(policyFile: source) }, with: file)
  agree(compiling: { try compile(policy: source) }, with: policy)
  if !file.hasErrors {
    let printed = CanonicalPrinter.print(file.syntax)
    let again = analyze(policyFile: printed)
    check(!again.hasErrors, "canonical form of a valid file has errors")
    check(again.policies == file.policies, "canonical form compiles differently")
    check(CanonicalPrinter.print(again.syntax) == printed, "printer is not idempotent")
  }
}

private func compareBytes(_ bytes: [UInt8], with source: String) {
  let fromBytes = analyze(policyFile: bytes)
  _ = DiagnosticRenderer(bytes: bytes, sourceName: "<fuzz>").render(fromBytes.diagnostics)
  if String(validating: bytes, as: UTF8.self) == nil {
    check(
      fromBytes.diagnostics.contains { $0.id == .invalidUTF8 },
      "invalid UTF-8 read as bytes without an invalid-utf8 diagnostic")
  } else if !bytes.starts(with: [0xEF, 0xBB, 0xBF]) {
    let fromText = analyze(policyFile: source)
    check(fromBytes.diagnostics == fromText.diagnostics, "bytes and text disagree on diagnostics")
    check(fromBytes.policies == fromText.policies, "bytes and text compile differently")
  }
}

private func agree<Compiled: Equatable>(
  compiling: () throws -> Compiled, with analysis: PolicyAnalysis
) {
  do {
    let compiled = try compiling()
    check(!analysis.hasErrors, "compile succeeded where analyze found errors")
    if let file = compiled as? PolicyFile {
      check(file.policies == analysis.policies, "compile(policyFile:) compiled differently")
      check(file.warnings == analysis.warnings, "compile(policyFile:) lost warnings")
    } else if let policy = compiled as? CompiledPolicy {
      check([policy] == analysis.policies, "compile(policy:) compiled differently")
    }
  } catch let error as PolicyCompileError {
    check(analysis.hasErrors, "compile failed where analyze found no error")
    check(error.diagnostics == analysis.diagnostics, "compile and analyze disagree on diagnostics")
  } catch {
    check(false, "compile threw something other than PolicyCompileError")
  }
}

private func check(_ condition: Bool, _ message: StaticString) {
  if !condition {
    print("fuzz property failed: \(message)")
    abort()
  }
}
