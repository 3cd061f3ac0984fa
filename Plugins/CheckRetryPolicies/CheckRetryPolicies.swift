import Foundation
import PackagePlugin

/// `swift package check-retry-policies [--target NAME…]`: checks the `.retry` files of the
/// package's targets with `retry-policy check`, failing on any error.
@main
struct CheckRetryPolicies: CommandPlugin {
  func performCommand(context: PluginContext, arguments: [String]) async throws {
    let tool = try context.tool(named: "retry-policy")
    try RetryPolicyFiles.run(
      tool: tool.url, subcommand: ["check"], package: context.package, arguments: arguments)
  }
}
