import Foundation
import RetryPolicy
import RetryPolicyTestSupport
import Testing

@Suite("Canonical printer: compiled policies with comments")
struct CompiledPrinterTests {
  @Test(
    "each sample's compiled policies print in canonical form and read back equal",
    arguments: SampleSyntaxTests.validSamples)
  func samplesPrintCanonically(name: String) throws {
    let text = try String(
      contentsOf: packageRoot.appendingPathComponent("Samples").appendingPathComponent(name),
      encoding: .utf8)
    let policies = analyze(policyFile: text).policies
    try #require(!policies.isEmpty)
    let printed = CanonicalPrinter.print(
      header: ["from \(name)"],
      policies: policies.map { policy in
        CanonicalPrinter.CommentedPolicy(
          name: policy.name ?? "", comments: ["the policy \(policy.name ?? "")"], policy: policy)
      },
      trailing: ["end"])
    let readBack = analyze(policyFile: printed)
    #expect(!readBack.hasErrors, "\(readBack.diagnostics)")
    #expect(readBack.policies == policies)
    // What the syntax printer makes of the text is the text: it is already canonical.
    #expect(CanonicalPrinter.print(readBack.syntax) == printed)
  }

  @Test("one-line policies, blocks, the header and trailing comments are laid out as fmt does")
  func layout() throws {
    let quick = try compile(policy: "retry 3 immediately")
    let payments = try compile(
      policy: "retry 1 on unauthorized after refresh\nretry 5 on 5xx backoff 1s x1.5\nwithin 2m")
    let printed = CanonicalPrinter.print(
      header: ["generated", "by a test"],
      policies: [
        .init(name: "quick", policy: quick),
        .init(name: "payments", comments: ["two rules", "# and a deadline"], policy: payments),
      ],
      trailing: ["the end"])
    #expect(
      printed == """
        # generated
        # by a test

        policy quick = retry 3

        # two rules
        # and a deadline
        policy payments {
            retry 1 on unauthorized after refresh
            retry 5 on 5xx backoff 1s x1.5
            within 2m
        }

        # the end

        """)
    #expect(CanonicalPrinter.print(analyze(policyFile: printed).syntax) == printed)
  }

  @Test("without policies the comments still print, a blank line between; nothing is empty")
  func commentsAlone() {
    #expect(CanonicalPrinter.print(policies: []) == "")
    #expect(CanonicalPrinter.print(header: ["a"], policies: [], trailing: ["b"]) == "# a\n\n# b\n")
    #expect(CanonicalPrinter.print(policies: [], trailing: ["b"]) == "# b\n")
  }

  @Test("a comment is one line of printable ASCII: line ends and other characters are escaped")
  func hostileComments() throws {
    let policy = try compile(policy: "retry 1")
    let printed = CanonicalPrinter.print(
      policies: [
        .init(
          name: "p",
          comments: ["a\npolicy evil = retry 9", "caf\u{e9} \u{2028}\r\tend  ", "#  kept as is"],
          policy: policy)
      ])
    #expect(
      printed == """
        # a\\u{a}policy evil = retry 9
        # caf\\u{e9} \\u{2028}\\u{d}\\u{9}end
        #  kept as is
        policy p = retry 1

        """)
    let readBack = analyze(policyFile: printed)
    #expect(readBack.policies.map(\.name) == ["p"])
  }
}
