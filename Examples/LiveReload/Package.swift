// swift-tools-version:6.2
// A small service that reloads its retry policies while it runs (DocC: "Policies as
// configuration"). `.ci/live-reload` builds it and changes its policy file under it.
import PackageDescription

let package = Package(
  name: "LiveReload",
  platforms: [.macOS(.v15), .iOS(.v18)],
  dependencies: [.package(name: "retry-policy", path: "../..")],
  targets: [
    .executableTarget(
      name: "LiveReload",
      dependencies: [.product(name: "RetryPolicy", package: "retry-policy")]
    )
  ],
  swiftLanguageModes: [.v6]
)
