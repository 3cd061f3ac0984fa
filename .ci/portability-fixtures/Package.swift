// swift-tools-version:6.1
// The fixtures' package: tools 6.1, and a floor below Int128, Atomic and Mutex.
import PackageDescription

let package = Package(
  name: "fixtures",
  platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9), .visionOS(.v1)],
  targets: []
)
