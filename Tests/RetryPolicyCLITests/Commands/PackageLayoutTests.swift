import Foundation
import RetryPolicyTestSupport
import Testing

/// What the built tool is made of (issue 22), and how the package's sources are laid out
/// (issue 30): a thin executable over libraries, folders by role.
@Suite("Package layout: the built binary and the folders")
struct PackageLayoutTests {
  @Test("the retry-policy binary holds the simulation, engines and server code but no test support")
  func binaryLinksNoTestSupport() throws {
    let binary = try Data(contentsOf: ToolRunner.binary())
    // Every Swift symbol of a module carries the module's name in its mangling.
    #expect(binary.range(of: Data("RetryPolicySimulation".utf8)) != nil)
    #expect(binary.range(of: Data("RetryPolicyTesting".utf8)) == nil)
    #expect(binary.range(of: Data("RetryPolicyTestSupport".utf8)) == nil)
    // The tool runs the engines and the language server from their libraries.
    #expect(binary.range(of: Data("RetryPolicyEngines".utf8)) != nil)
    #expect(binary.range(of: Data("RetryPolicyLanguageServer".utf8)) != nil)
  }

  /// The Swift files under `folder` of the package, by path from the package's root.
  static func swiftFiles(under folder: String) -> [String] {
    let enumerator = FileManager.default.enumerator(
      atPath: packageRoot.appendingPathComponent(folder).path)
    var files: [String] = []
    while let path = enumerator?.nextObject() as? String {
      if path.hasSuffix(".swift") { files.append(folder + "/" + path) }
    }
    return files.sorted()
  }

  @Test("no folder of Sources/ or Tests/ holds more than 15 Swift files")
  func foldersStaySmall() {
    let files = Self.swiftFiles(under: "Sources") + Self.swiftFiles(under: "Tests")
    let counts = Dictionary(grouping: files) { ($0 as NSString).deletingLastPathComponent }
      .mapValues(\.count)
    #expect(!counts.isEmpty)
    #expect(counts.filter { $0.value > 15 } == [:])
  }

  @Test(
    "the executable's module stays well under 7,000 lines: the engines and the server are libraries"
  )
  func executableStaysThin() throws {
    let lines = try Self.swiftFiles(under: "Sources/RetryPolicyCLI").reduce(0) { total, path in
      let text = try String(
        contentsOf: packageRoot.appendingPathComponent(path), encoding: .utf8)
      return total + text.split(separator: "\n", omittingEmptySubsequences: false).count - 1
    }
    #expect(lines > 1_000)
    #expect(lines < 7_000)
  }
}
