// The crash-only libFuzzer entry point over gRPC service configs: each input is read by
// `import --from grpc` (the strict JSON reader, A6's checks, the canonical printer and the
// check that the printed text reads back), and whatever it imports is exported again with
// `export --to grpc` (with the records the import wrote) and written as JSON. It looks for a
// crash, a hang or a trap on arithmetic, and for the one property the import checks itself: a
// config that passes every check prints text that reads back as its policies. Built by
// `.ci/fuzz grpc` with `swiftc` over the library's sources and those of RetryPolicyEngines,
// all in one module.

/// Runs one fuzz input through gRPC import and export; libFuzzer calls it.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzGRPCConfig(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
  guard let data else { return 0 }
  let bytes = Array(UnsafeBufferPointer(start: data, count: size))
  let imported: GRPCImport.Imported
  switch GRPCImport.policyFile(bytes) {
  case .success(let result): imported = result
  case .failure(let failure):
    // A config that passed every check must print text that reads back as its policies.
    if failure.problems.contains(where: { $0.message.hasPrefix("internal error") }) {
      preconditionFailure("\(failure.problems)")
    }
    return 0
  }
  let analysis = analyze(policyFile: imported.text)
  let records = analysis.syntax.comments.compactMap { GRPCRecord.read($0.text) }
  var items: [GRPCExport.Item] = []
  for (index, checked) in analysis.checked.enumerated() {
    items.append(
      GRPCExport.Item(
        policy: checked.policy, locator: ExportLocator(checked), names: nil,
        record: index < records.count ? records[index] : nil))
  }
  let result = GRPCExport.export(items)
  _ = JSONWriter().write(result.document)
  return 0
}
