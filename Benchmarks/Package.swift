// swift-tools-version:6.2
// The benchmarks of retry-policy, a package of their own (as swift-nio keeps its benchmarks),
// so that users who depend on the library never build them. `.ci/bench` runs them in release
// mode; BENCHMARKS.md has the figures and the commands that reproduce them.
import PackageDescription

let package = Package(
  name: "retry-policy-benchmarks",
  platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
  dependencies: [
    // The checkout this folder belongs to, whatever its folder is called.
    .package(name: "retry-policy", path: "..")
  ],
  targets: [
    .executableTarget(
      name: "retry-policy-benchmarks",
      dependencies: [
        .product(name: "RetryPolicy", package: "retry-policy"),
        .product(name: "RetryPolicyTesting", package: "retry-policy"),
        .product(name: "RetryPolicyHTTP", package: "retry-policy"),
      ]
    )
  ],
  swiftLanguageModes: [.v6]
)
