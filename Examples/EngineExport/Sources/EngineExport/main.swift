// Exports one policy as a gRPC service config and as Envoy retry settings, from code.
//
//     swift run EngineExport ['POLICY']
//
// Standard output: the service config (JSON), then Envoy's settings (YAML), the bytes
// `retry-policy export --to grpc --service payments.Ledger` and `--to envoy` print.
// Standard error: each inexact mapping as `<policy>:LINE:COL: warning: MESSAGE`.
import Foundation
import RetryPolicy
import RetryPolicyEngines

let policy =
  CommandLine.arguments.dropFirst().first
  ?? "retry 4 on unavailable backoff 100ms x1.5 jitter 10% max 2s within 10s budget 10%"

/// Writes `text` to standard error.
func printError(_ text: String) {
  FileHandle.standardError.write(Data((text + "\n").utf8))
}

do {
  let grpc = try GRPCServiceConfig.export(policy: policy, service: "payments.Ledger")
  let envoy = try EnvoyRetrySettings.export(policy: policy)
  print(grpc.json, terminator: "")
  print(envoy.yaml, terminator: "")
  for warning in grpc.warnings + envoy.warnings {
    printError("<policy>:\(warning)")
  }
} catch let error as PolicyCompileError {
  printError(error.description)
  exit(1)
} catch {
  printError("\(error)")
  exit(1)
}
