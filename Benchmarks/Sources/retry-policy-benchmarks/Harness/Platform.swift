// The one file of the benchmarks that imports the C library, for what only measuring needs and
// the tool has no use for: a thread's processor time and C symbols looked up by name (the
// malloc counter, glibc's `malloc_trim`). Everything else goes through Foundation. Linux-only
// facilities (`/proc`) are used on Linux only; elsewhere the figures they give are n/a.
import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#elseif canImport(ucrt)
  import ucrt
#endif

/// What the benchmarks ask of the system.
enum Platform {
  /// The number of processors online.
  static var processorCount: Int { ProcessInfo.processInfo.activeProcessorCount }

  /// The processor time this thread has used, in nanoseconds; nil when it cannot be told.
  ///
  /// On a shared machine it is what a run costs, whatever the other processes take.
  static var threadProcessorNanoseconds: Double? {
    #if os(Windows)
      return nil
    #else
      var time = timespec()
      guard clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time) == 0 else { return nil }
      return Double(time.tv_sec) * 1e9 + Double(time.tv_nsec)
    #endif
  }

  /// The processor time all threads of this process have used, in nanoseconds; nil when it
  /// cannot be told.
  static var processProcessorNanoseconds: Double? {
    #if os(Windows)
      return nil
    #else
      var time = timespec()
      guard clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time) == 0 else { return nil }
      return Double(time.tv_sec) * 1e9 + Double(time.tv_nsec)
    #endif
  }

  /// The processor time (user and system) of the children that have ended and been waited
  /// for, in nanoseconds; nil when it cannot be told.
  static var childrenProcessorNanoseconds: Double? {
    #if os(Windows)
      return nil
    #else
      var usage = rusage()
      #if canImport(Glibc)
        let children = RUSAGE_CHILDREN.rawValue
      #else
        let children = RUSAGE_CHILDREN
      #endif
      guard getrusage(children, &usage) == 0 else { return nil }
      let user = Double(usage.ru_utime.tv_sec) * 1e9 + Double(usage.ru_utime.tv_usec) * 1e3
      let system = Double(usage.ru_stime.tv_sec) * 1e9 + Double(usage.ru_stime.tv_usec) * 1e3
      return user + system
    #endif
  }

  /// Ends the process with a status.
  static func exit(_ status: Int32) -> Never {
    Foundation.exit(status)
  }

  /// Writes text to standard error (errors are ignored: there is nowhere to say so).
  static func writeToStandardError(_ text: String) {
    try? FileHandle.standardError.write(contentsOf: Data(text.utf8))
  }

  /// A C function of the process (or of a preloaded library) by name, or nil.
  static func symbol(named name: String) -> UnsafeMutableRawPointer? {
    #if os(Windows)
      return nil
    #elseif canImport(Darwin)
      // RTLD_DEFAULT is the handle -2 on Darwin.
      return dlsym(UnsafeMutableRawPointer(bitPattern: -2), name)
    #else
      // RTLD_DEFAULT is the null handle on glibc and musl.
      return dlsym(UnsafeMutableRawPointer(bitPattern: 0), name)
    #endif
  }
}

/// Reads the allocation count kept by the LD_PRELOAD malloc counter (`.ci/malloc-counter`),
/// when the process runs under it.
enum AllocationCounter {
  private typealias CountFunction = @convention(c) () -> UInt64

  /// The counter's `malloc_counter_count`, found with `dlsym(RTLD_DEFAULT, …)`.
  private static let countFunction: CountFunction? = Platform.symbol(
    named: "malloc_counter_count"
  ).map { unsafeBitCast($0, to: CountFunction.self) }

  /// Whether the malloc counter is loaded.
  static var isAvailable: Bool { countFunction != nil }

  /// The number of allocations the process has made so far, or nil without the counter.
  static func count() -> UInt64? {
    countFunction.map { $0() }
  }
}

/// The process's resident memory, from `/proc/self/status` on Linux; nil elsewhere.
enum ProcessMemory {
  /// The resident set size now (`VmRSS`), in bytes, or nil when it cannot be read.
  static func residentBytes() -> Int? {
    statusField("VmRSS")
  }

  /// The peak resident set size (`VmHWM`), in bytes, or nil when it cannot be read.
  static func peakResidentBytes() -> Int? {
    statusField("VmHWM")
  }

  /// Resets the peak resident set size to the current one, by writing 5 to
  /// `/proc/self/clear_refs`; returns whether that worked (never outside Linux).
  @discardableResult
  static func resetPeak() -> Bool {
    #if os(Linux)
      guard let file = FileHandle(forWritingAtPath: "/proc/self/clear_refs") else { return false }
      defer { try? file.close() }
      return (try? file.write(contentsOf: Data("5".utf8))) != nil
    #else
      return false
    #endif
  }

  /// Returns the allocator's free memory to the system, so the resident size measures live
  /// memory.
  ///
  /// Calls glibc's `malloc_trim(0)`, found with dlsym since the Glibc module does not import
  /// `malloc.h`; does nothing where there is no `malloc_trim`.
  static func trimAllocator() {
    typealias TrimFunction = @convention(c) (Int) -> Int32
    guard let symbol = Platform.symbol(named: "malloc_trim") else { return }
    _ = unsafeBitCast(symbol, to: TrimFunction.self)(0)
  }

  /// Reads one `Name:   1234 kB` line of `/proc/self/status`.
  private static func statusField(_ name: String) -> Int? {
    #if os(Linux)
      guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else {
        return nil
      }
      for line in status.split(separator: "\n") where line.hasPrefix(name + ":") {
        let digits = line.dropFirst(name.count + 1).filter(\.isNumber)
        return Int(digits).map { $0 * 1024 }
      }
      return nil
    #else
      return nil
    #endif
  }
}
