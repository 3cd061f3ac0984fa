// swift-tools-version:6.0
import PackageDescription

let package = Package(
  name: "retry-policy",
  products: [
    .library(name: "RetryPolicy", targets: ["RetryPolicy"]),
    .library(name: "RetryPolicyTesting", targets: ["RetryPolicyTesting"]),
    .executable(name: "retry-policy", targets: ["retry-policy"]),
  ],
  targets: [
    .target(name: "RetryPolicy"),
    .target(name: "RetryPolicyTesting", dependencies: ["RetryPolicy"]),
    .target(name: "RetryPolicyCLI", dependencies: ["RetryPolicy", "RetryPolicyTesting"]),
    .executableTarget(name: "retry-policy", dependencies: ["RetryPolicyCLI"]),
    .executableTarget(
      name: "retry-policy-benchmarks",
      dependencies: ["RetryPolicy", "RetryPolicyTesting"]
    ),
    .testTarget(
      name: "RetryPolicyTests",
      dependencies: ["RetryPolicy", "RetryPolicyTesting"]
    ),
    .testTarget(
      name: "RetryPolicyCLITests",
      dependencies: ["RetryPolicyCLI", "RetryPolicy", "retry-policy"],
      exclude: ["Golden"]
    ),
  ],
  swiftLanguageModes: [.v6]
)
