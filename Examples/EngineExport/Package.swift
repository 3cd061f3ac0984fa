// swift-tools-version:6.2
// A program that exports a retry policy to gRPC and Envoy through the library product
// RetryPolicyEngines, without running the `retry-policy` tool. `.ci/engines-library` builds
// it and checks that it prints what `retry-policy export` prints.
import PackageDescription

let package = Package(
  name: "EngineExport",
  platforms: [.macOS(.v15), .iOS(.v18)],
  dependencies: [.package(name: "retry-policy", path: "../..")],
  targets: [
    .executableTarget(
      name: "EngineExport",
      dependencies: [
        .product(name: "RetryPolicy", package: "retry-policy"),
        .product(name: "RetryPolicyEngines", package: "retry-policy"),
      ]
    )
  ],
  swiftLanguageModes: [.v6]
)
