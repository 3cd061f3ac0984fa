// The crash-only libFuzzer entry point over the front end. Unlike `FuzzTarget.swift`, which
// checks properties and so runs the front end several times per input, this one runs each
// input once through the public pipeline (the file read as raw bytes, as `check` reads it,
// where invalid UTF-8 is diagnosed, and as text in the one-policy form) and renders whatever
// diagnostics come back: all it looks for is a crash, a hang or a sanitizer report. It is
// cheap per input, so with a small `-max_len` it reaches thousands of executions a second.
// Built by `.ci/fuzz crash` with `swiftc` over the library's sources.

/// Runs one fuzz input through the front end; libFuzzer calls it.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
  guard let data else { return 0 }
  let bytes = Array(UnsafeBufferPointer(start: data, count: size))
  let file = analyze(policyFile: bytes)
  _ = DiagnosticRenderer(bytes: bytes, sourceName: "<fuzz>").render(file.diagnostics)
  for policy in file.policies { _ = String(describing: policy) }
  let source = String(decoding: bytes, as: UTF8.self)
  do {
    _ = try compile(policy: source)
  } catch let error as PolicyCompileError {
    _ = DiagnosticRenderer(source: source, sourceName: "<policy>").render(error.diagnostics)
  } catch {}
  return 0
}
