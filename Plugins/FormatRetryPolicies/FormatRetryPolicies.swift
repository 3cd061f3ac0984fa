import Foundation
import PackagePlugin

/// `swift package format-retry-policies [--target NAME…]`: rewrites the `.retry` files of the
/// package's targets in canonical form with `retry-policy fmt`.
@main
struct FormatRetryPolicies: CommandPlugin {
  func performCommand(context: PluginContext, arguments: [String]) async throws {
    let tool = try context.tool(named: "retry-policy")
    try RetryPolicyFiles.run(
      tool: tool.url, subcommand: ["fmt"], package: context.package, arguments: arguments)
  }
}
