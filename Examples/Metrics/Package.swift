// swift-tools-version:6.2
// A small service that runs its calls under retry policies and serves their metrics on
// /metrics for Prometheus (DocC: "Telemetry"). `.ci/metrics-e2e` has a real Prometheus
// server scrape it, and checks the text of its fixed scenario with promtool and
// prometheus_client.
import PackageDescription

let package = Package(
  name: "Metrics",
  platforms: [.macOS(.v15), .iOS(.v18)],
  dependencies: [.package(name: "retry-policy", path: "../..")],
  targets: [
    .executableTarget(
      name: "Metrics",
      dependencies: [
        .product(name: "RetryPolicy", package: "retry-policy"),
        .product(name: "RetryPolicyTesting", package: "retry-policy"),
      ]
    )
  ],
  swiftLanguageModes: [.v6]
)
