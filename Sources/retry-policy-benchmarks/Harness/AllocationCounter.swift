import Glibc

/// Reads the allocation count kept by the LD_PRELOAD malloc counter (`.ci/malloc-counter`),
/// when the process runs under it.
enum AllocationCounter {
  private typealias CountFunction = @convention(c) () -> UInt64

  /// The counter's `malloc_counter_count`, found with `dlsym(RTLD_DEFAULT, …)`.
  private static let countFunction: CountFunction? = {
    // RTLD_DEFAULT is the null handle on glibc.
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_counter_count")
    else { return nil }
    return unsafeBitCast(symbol, to: CountFunction.self)
  }()

  /// Whether the malloc counter is loaded.
  static var isAvailable: Bool { countFunction != nil }

  /// The number of allocations the process has made so far, or nil without the counter.
  static func count() -> UInt64? {
    countFunction.map { $0() }
  }
}
