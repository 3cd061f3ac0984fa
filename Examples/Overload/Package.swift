// swift-tools-version:6.2
// A client of RetryPolicyHTTP that offers twice an overloaded server's capacity under no
// limit, `limit N` and `limit adaptive`, and reports goodput and latency (issue 34, item 5).
// `.ci/overload-e2e` starts the server (.ci/overload/server.py) and runs it; BENCHMARKS.md
// ("Overload, end to end") has the figures.
import PackageDescription

let package = Package(
  name: "Overload",
  platforms: [.macOS(.v15), .iOS(.v18)],
  dependencies: [.package(name: "retry-policy", path: "../..")],
  targets: [
    .executableTarget(
      name: "Overload",
      dependencies: [
        .product(name: "RetryPolicy", package: "retry-policy"),
        .product(name: "RetryPolicyHTTP", package: "retry-policy"),
      ]
    )
  ],
  swiftLanguageModes: [.v6]
)
