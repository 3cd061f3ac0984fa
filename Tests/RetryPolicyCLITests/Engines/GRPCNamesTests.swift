import Foundation
import RetryPolicyTestSupport
import Testing

/// The names of gRPC method configs (issue 33): `import` needs no `--from`, and `export --to
/// grpc --file` never writes two method configs for one method without a warning.
@Suite("gRPC: method names through export and import")
struct GRPCNamesTests {
  /// Two policies, each naming its methods in a record comment, and a third for every
  /// other method.
  static let named = """
    # grpc-service-config: {"name": [{"service": "shop.Catalog", "method": "Lookup"}]}
    policy lookup = retry 3 on unavailable backoff 100ms jitter 20% max 1s

    # grpc-service-config: {"name": [{"service": "shop.Ledger"}]}
    policy ledgerWrite = retry 4 on unavailable backoff 200ms x1.5 jitter 20% max 2s

    # every other method
    policy other = retry 1 on unavailable delay 50ms jitter 20%

    """

  /// Two policies that name no method.
  static let nameless = """
    policy a = retry 3 on unavailable backoff 100ms jitter 20%
    policy b = retry 2 on unavailable backoff 1s jitter 20%

    """

  static func object(_ text: String) throws -> NSDictionary {
    try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? NSDictionary)
  }

  @Test("import reads gRPC without '--from'; '--from grpc' still works, another format not")
  func importWithoutFrom() async throws {
    let folder = try ToolRunner.makeFolder([
      "service.json": """
      {"methodConfig": [{"name": [{"service": "a.B"}], "retryPolicy": {"maxAttempts": 3,
        "initialBackoff": "0.5s", "maxBackoff": "0.5s", "backoffMultiplier": 1,
        "retryableStatusCodes": ["ABORTED"]}}]}
      """
    ])
    defer { try? FileManager.default.removeItem(at: folder) }
    let path = folder.appendingPathComponent("service.json").path
    let plain = await ToolRunner.run(["import", path])
    #expect(plain.status == 0)
    #expect(plain.standardError == "")
    #expect(plain.standardOutput.contains("policy a_B = retry 2 on aborted delay 500ms"))
    let explicit = await ToolRunner.run(["import", "--from", "grpc", path])
    #expect(explicit.status == 0)
    #expect(explicit.standardOutput == plain.standardOutput)
    let stdin = await ToolRunner.run(
      ["import", "-"], input: try String(contentsOfFile: path, encoding: .utf8))
    #expect(stdin.status == 0)
    let other = await ToolRunner.run(["import", "--from", "envoy", path])
    #expect(other.status == 2)
    #expect(other.standardError.contains("invalid value 'envoy' for '--from'; expected 'grpc'"))
    #expect(await ToolRunner.run(["import"]).status == 2)
  }

  @Test("two policies naming no method: a warning at the second, an error under --strict")
  func namelessPolicies() async throws {
    let folder = try ToolRunner.makeFolder(["two.retry": Self.nameless])
    defer { try? FileManager.default.removeItem(at: folder) }
    let path = folder.appendingPathComponent("two.retry").path
    let result = await ToolRunner.run(["export", "--to", "grpc", "--file", path])
    #expect(result.status == 0)
    let message =
      "policy 'b' names no gRPC service, nor does policy 'a': gRPC refuses two method configs"
      + " for every method; name them on the line before the policy: '# grpc-service-config:"
      + #" {"name": [{"service": "S", "method": "M"}]}'"#
    #expect(
      result.standardError.hasPrefix(
        "\(path):2:8: warning: \(message)\npolicy b = retry 2 on unavailable"))
    #expect(result.standardError.components(separatedBy: "warning:").count == 2)
    let strict = await ToolRunner.run(["export", "--to", "grpc", "--strict", "--file", path])
    #expect(strict.status == 1)
    #expect(strict.standardOutput == "")
    #expect(strict.standardError.hasPrefix("\(path):2:8: error: \(message)\n"))
    // The package's own import says the same of what was written.
    let imported = await ToolRunner.run(["import", "-"], input: result.standardOutput)
    #expect(imported.standardError.contains("names the same methods as methodConfig[0]"))
    // One policy alone is the config of every method, as gRPC means `[{}]`: no warning.
    let alone = await ToolRunner.run([
      "export", "--to", "grpc", "--strict", "--file", path, "--policy", "b",
    ])
    #expect(alone.status == 0)
    #expect(alone.standardError == "")
  }

  @Test("--service for several policies: a warning at each policy after the first")
  func serviceForSeveral() async throws {
    let folder = try ToolRunner.makeFolder(["two.retry": Self.nameless])
    defer { try? FileManager.default.removeItem(at: folder) }
    let path = folder.appendingPathComponent("two.retry").path
    let result = await ToolRunner.run([
      "export", "--to", "grpc", "--file", path, "--service", "shop.Catalog", "--method", "Find",
    ])
    #expect(result.status == 0)
    #expect(
      result.standardError.hasPrefix(
        "\(path):2:8: warning: policy 'b' names 'shop.Catalog/Find' as policy 'a' does: gRPC"
          + " refuses two method configs for one method"))
  }

  @Test("names in record comments export exactly; import and export again give them back")
  func namedRoundTrip() async throws {
    let folder = try ToolRunner.makeFolder(["named.retry": Self.named])
    defer { try? FileManager.default.removeItem(at: folder) }
    let path = folder.appendingPathComponent("named.retry").path
    let exported = await ToolRunner.run(["export", "--to", "grpc", "--strict", "--file", path])
    #expect(exported.status == 0)
    #expect(exported.standardError == "")
    let configs = try #require(
      try Self.object(exported.standardOutput)["methodConfig"] as? [NSDictionary])
    #expect(
      configs.map { $0["name"] as? [NSDictionary] } == [
        [["service": "shop.Catalog", "method": "Lookup"]], [["service": "shop.Ledger"]], [[:]],
      ])
    // The package's own import accepts what export wrote, without a word.
    let imported = await ToolRunner.run(["import", "-"], input: exported.standardOutput)
    #expect(imported.status == 0)
    #expect(imported.standardError == "")
    let again = folder.appendingPathComponent("imported.retry")
    try imported.standardOutput.write(to: again, atomically: true, encoding: .utf8)
    let reexported = await ToolRunner.run([
      "export", "--to", "grpc", "--strict", "--file", again.path,
    ])
    #expect(reexported.status == 0)
    #expect(reexported.standardError == "")
    #expect(try Self.object(reexported.standardOutput) == Self.object(exported.standardOutput))
  }
}
