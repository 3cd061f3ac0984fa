import Foundation
import PackagePlugin

/// The build-tool plugin `RetryPolicyPlugin`: compiles a target's `.retry` files into
/// `RetryPolicies.swift` with `retry-policy generate`.
///
/// One build command takes every `.retry` file of the target as input and the generated file
/// as output, so the build runs it again only when a policy file (or the tool) changed. A
/// policy file with an error fails the build with `PATH:LINE:COL: error: MESSAGE`.
@main
struct RetryPolicyPlugin: BuildToolPlugin {
  func createBuildCommands(context: PluginContext, target: Target) async throws -> [Command] {
    guard let target = target as? SourceModuleTarget else { return [] }
    let inputs = target.sourceFiles(withSuffix: "retry").map(\.url).sorted {
      $0.path < $1.path
    }
    guard !inputs.isEmpty else { return [] }
    let tool = try context.tool(named: "retry-policy")
    let output = context.pluginWorkDirectoryURL.appending(path: "RetryPolicies.swift")
    return [
      .buildCommand(
        displayName: "Generating RetryPolicies.swift from \(inputs.count) policy file(s)",
        executable: tool.url,
        arguments: ["generate", "--output", output.path] + inputs.map(\.path),
        inputFiles: inputs,
        outputFiles: [output]
      )
    ]
  }
}
