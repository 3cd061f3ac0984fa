// The crash-only libFuzzer entry point over gRPC service configs: each input is read by
// `import --from grpc` (the strict JSON reader, A6's checks, the canonical printer and the
// check that the printed text reads back), and whatever it imports is exported again with
// `export --to grpc` and written as JSON. All it looks for is a crash, a hang or a trap on
// arithmetic. Built by `.ci/fuzz grpc` with `swiftc` over the library's sources and the CLI's
// gRPC engine files, all in one module.

/// Runs one fuzz input through gRPC import and export; libFuzzer calls it.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzGRPCConfig(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
  guard let data else { return 0 }
  let bytes = Array(UnsafeBufferPointer(start: data, count: size))
  guard case .success(let imported) = GRPCImport.policyFile(bytes) else { return 0 }
  let file = Parser.parseFile(imported.text).0
  var items: [GRPCExport.Item] = []
  for (policy, declaration) in zip(imported.policies, file.policies) {
    items.append(
      GRPCExport.Item(
        policy: policy, locator: ExportLocator(body: declaration.body), names: nil,
        record: nil))
  }
  let result = GRPCExport.export(items)
  _ = JSONWriter().write(result.document)
  return 0
}
