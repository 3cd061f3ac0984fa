import Foundation
import PackagePlugin

/// What the command plugins share (one file, linked into each: plugins cannot share a target): finding
/// the `.retry` files and running the tool on them.
enum RetryPolicyFiles {
  /// A failed run of the tool; SwiftPM prints the message and the command exits non-zero.
  struct Failure: Error, CustomStringConvertible {
    var description: String
  }

  /// Runs `retry-policy SUBCOMMAND FILE…` on the `.retry` files of the targets named with
  /// `--target` (every source target when none is named).
  static func run(
    tool: URL, subcommand: [String], package: Package, arguments: [String]
  ) throws {
    var extractor = ArgumentExtractor(arguments)
    let names = extractor.extractOption(named: "target")
    let targets = try names.isEmpty ? package.targets : package.targets(named: names)
    let files = targets.compactMap { $0 as? SourceModuleTarget }
      .flatMap { $0.sourceFiles(withSuffix: "retry").map(\.url.path) }
      .sorted()
    guard !files.isEmpty else {
      print("no .retry files in \(names.isEmpty ? "the package" : names.joined(separator: ", "))")
      return
    }
    let process = Process()
    process.executableURL = tool
    process.arguments = subcommand + files
    try process.run()
    process.waitUntilExit()
    guard process.terminationReason == .exit, process.terminationStatus == 0 else {
      throw Failure(
        description:
          "retry-policy \(subcommand.joined(separator: " ")) failed "
          + "(exit status \(process.terminationStatus))")
    }
  }
}
