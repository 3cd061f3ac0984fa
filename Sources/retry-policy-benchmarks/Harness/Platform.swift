// The one file of the benchmarks that imports the C library. Linux-only facilities (`/proc`,
// glibc's `malloc_trim`) are used on Linux only; elsewhere the figures they give are n/a.
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
  /// The number of processors online, or 0 when it cannot be told.
  static var processorCount: Int {
    #if os(Windows)
      return 0
    #else
      return max(0, sysconf(Int32(_SC_NPROCESSORS_ONLN)))
    #endif
  }

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

  /// Ends the process with a status.
  static func exit(_ status: Int32) -> Never {
    #if canImport(Glibc)
      Glibc.exit(status)
    #elseif canImport(Musl)
      Musl.exit(status)
    #elseif canImport(Darwin)
      Darwin.exit(status)
    #else
      ucrt.exit(status)
    #endif
  }

  /// Writes text to standard error in full (errors are ignored: there is nowhere to say so).
  static func writeToStandardError(_ text: String) {
    var text = text
    text.withUTF8 { bytes in
      var offset = 0
      while offset < bytes.count, let base = bytes.baseAddress {
        #if os(Windows)
          let written = Int(_write(2, base + offset, UInt32(bytes.count - offset)))
        #else
          let written = write(2, base + offset, bytes.count - offset)
        #endif
        guard written > 0 else { return }
        offset += written
      }
    }
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
      guard let file = fopen("/proc/self/clear_refs", "w") else { return false }
      defer { fclose(file) }
      return fputs("5", file) >= 0 && fflush(file) == 0
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
      guard let file = fopen("/proc/self/status", "r") else { return nil }
      defer { fclose(file) }
      var buffer = [CChar](repeating: 0, count: 256)
      while fgets(&buffer, Int32(buffer.count), file) != nil {
        let line = String(
          decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard line.hasPrefix(name + ":") else { continue }
        let digits = line.dropFirst(name.count + 1).filter(\.isNumber)
        return Int(digits).map { $0 * 1024 }
      }
      return nil
    #else
      return nil
    #endif
  }
}
