import Foundation
import Testing

/// What the built tool is made of (issue 22): the shipped binary links no test support.
@Suite("Package layout: the built binary")
struct PackageLayoutTests {
  @Test("the retry-policy binary holds the simulation module's code but none of RetryPolicyTesting")
  func binaryLinksNoTestSupport() throws {
    let binary = try Data(contentsOf: ToolRunner.binary())
    // Every Swift symbol of a module carries the module's name in its mangling.
    #expect(binary.range(of: Data("RetryPolicySimulation".utf8)) != nil)
    #expect(binary.range(of: Data("RetryPolicyTesting".utf8)) == nil)
  }
}
