// swift-tools-version:6.2
// A fixture for .ci/plugin-e2e: its policy file has an error, so `swift build` must fail with
// the error's PATH:LINE:COL.
import PackageDescription

let package = Package(
  name: "BrokenPolicies",
  platforms: [.macOS(.v15), .iOS(.v18)],
  dependencies: [.package(name: "retry-policy", path: "../..")],
  targets: [
    .target(
      name: "BrokenPolicies",
      dependencies: [.product(name: "RetryPolicy", package: "retry-policy")],
      plugins: [.plugin(name: "RetryPolicyPlugin", package: "retry-policy")]
    )
  ],
  swiftLanguageModes: [.v6]
)
