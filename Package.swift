// swift-tools-version:6.2
// 6.2: the runtime uses `nonisolated(nonsending)` (SE-0461), which older compilers reject.
import PackageDescription

let package = Package(
  name: "retry-policy",
  // The lowest versions whose standard library has everything the code uses: `Int128`,
  // `Duration.attoseconds` and Synchronization's `Atomic` (and `Mutex`) arrived in macOS 15,
  // iOS 18, tvOS 18, watchOS 11 and visionOS 2; `Duration` and `Clock` in macOS 13 / iOS 16.
  // README.md, "Supported platforms", says why; .ci/portability keeps the code within them.
  platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
  products: [
    .library(name: "RetryPolicy", targets: ["RetryPolicy"]),
    .library(name: "RetryPolicyTesting", targets: ["RetryPolicyTesting"]),
    // URLSession under a policy; the only product that links FoundationNetworking (issue 11).
    .library(name: "RetryPolicyHTTP", targets: ["RetryPolicyHTTP"]),
    // Policies as gRPC service configs and Envoy retry settings, and gRPC configs as policies.
    .library(name: "RetryPolicyEngines", targets: ["RetryPolicyEngines"]),
    .executable(name: "retry-policy", targets: ["retry-policy"]),
    // The build plugin and the command plugins (README.md, "Policies in the build").
    .plugin(name: "RetryPolicyPlugin", targets: ["RetryPolicyPlugin"]),
    .plugin(name: "FormatRetryPolicies", targets: ["FormatRetryPolicies"]),
    .plugin(name: "CheckRetryPolicies", targets: ["CheckRetryPolicies"]),
  ],
  targets: [
    .target(name: "RetryPolicy"),
    // The storm and `simulate` models, the seeded generator and the immediate clock; no product.
    // The tool links it, not RetryPolicyTesting, which re-exports the last two by typealias.
    .target(name: "RetryPolicySimulation", dependencies: ["RetryPolicy"], exclude: ["README.md"]),
    .target(name: "RetryPolicyTesting", dependencies: ["RetryPolicy", "RetryPolicySimulation"]),
    .target(name: "RetryPolicyHTTP", dependencies: ["RetryPolicy"]),
    // A local HTTP/1.1 server on the platform's sockets, for RetryPolicyHTTPTests; no product.
    .target(name: "HTTPTestServer", path: "Tests/HTTPTestServer"),
    // What the test targets share: the package's root folder and a stepping clock; no product.
    .target(name: "RetryPolicyTestSupport", path: "Tests/RetryPolicyTestSupport"),
    .target(name: "RetryPolicyEngines", dependencies: ["RetryPolicy"]),
    // The language server: JSON-RPC framing, the protocol's messages, the session's state
    // machine; `retry-policy lsp` runs it on standard input and output. No product.
    .target(name: "RetryPolicyLanguageServer", dependencies: ["RetryPolicy"]),
    .target(
      name: "RetryPolicyCLI",
      dependencies: [
        "RetryPolicy", "RetryPolicySimulation", "RetryPolicyEngines", "RetryPolicyLanguageServer",
      ]),
    .executableTarget(name: "retry-policy", dependencies: ["RetryPolicyCLI"]),
    .testTarget(
      name: "RetryPolicyHTTPTests",
      dependencies: ["RetryPolicyHTTP", "RetryPolicy", "RetryPolicyTesting", "HTTPTestServer"]
    ),
    .plugin(
      name: "RetryPolicyPlugin", capability: .buildTool(), dependencies: ["retry-policy"]),
    .plugin(
      name: "FormatRetryPolicies",
      capability: .command(
        intent: .custom(
          verb: "format-retry-policies",
          description: "Rewrite the .retry files of the targets in canonical form"),
        permissions: [
          .writeToPackageDirectory(reason: "Rewrites .retry files in canonical form")
        ]),
      dependencies: ["retry-policy"]),
    .plugin(
      name: "CheckRetryPolicies",
      capability: .command(
        intent: .custom(
          verb: "check-retry-policies",
          description: "Check the .retry files of the targets and report every diagnostic")),
      dependencies: ["retry-policy"]),
    .testTarget(
      name: "RetryPolicyTests",
      dependencies: [
        "RetryPolicy", "RetryPolicyTesting", "RetryPolicySimulation", "RetryPolicyTestSupport",
      ]
    ),
    .testTarget(
      name: "RetryPolicyCLITests",
      dependencies: [
        "RetryPolicyCLI", "RetryPolicy", "RetryPolicyEngines", "RetryPolicyLanguageServer",
        "RetryPolicySimulation", "RetryPolicyTesting",
        "RetryPolicyTestSupport", "retry-policy",
      ],
      exclude: ["Golden"]
    ),
  ],
  swiftLanguageModes: [.v6]
)
