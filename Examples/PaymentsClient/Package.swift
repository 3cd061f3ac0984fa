// swift-tools-version:6.2
// An app that keeps its retry policies in .retry files, compiled at build time by the
// RetryPolicyPlugin of the package two folders up.
import PackageDescription

let package = Package(
  name: "PaymentsClient",
  platforms: [.macOS(.v15), .iOS(.v18)],
  dependencies: [.package(name: "retry-policy", path: "../..")],
  targets: [
    .executableTarget(
      name: "PaymentsClient",
      dependencies: [.product(name: "RetryPolicy", package: "retry-policy")],
      plugins: [.plugin(name: "RetryPolicyPlugin", package: "retry-policy")]
    )
  ],
  swiftLanguageModes: [.v6]
)
