// swift-tools-version:6.2
// A small client of the circuit breaker, the policy store and RetryPolicyHTTP, run under
// ThreadSanitizer by `.ci/tsan-client`: a user's `--sanitize=thread` build must see no report
// from this package.
import PackageDescription

let package = Package(
  name: "TSanClient",
  platforms: [.macOS(.v15), .iOS(.v18)],
  dependencies: [.package(name: "retry-policy", path: "../..")],
  targets: [
    .executableTarget(
      name: "TSanClient",
      dependencies: [
        .product(name: "RetryPolicy", package: "retry-policy"),
        .product(name: "RetryPolicyHTTP", package: "retry-policy"),
      ]
    )
  ],
  swiftLanguageModes: [.v6]
)
