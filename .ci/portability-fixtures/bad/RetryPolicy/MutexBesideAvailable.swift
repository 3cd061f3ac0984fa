// expect: availability
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
func unrelated() {}

final class Counter: Sendable {
  private let count = Mutex(0)
}
