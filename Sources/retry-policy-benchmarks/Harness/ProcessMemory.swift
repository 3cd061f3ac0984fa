import Glibc

/// The process's resident memory, from `/proc/self/status`.
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
  /// `/proc/self/clear_refs`; returns whether that worked.
  @discardableResult
  static func resetPeak() -> Bool {
    guard let file = fopen("/proc/self/clear_refs", "w") else { return false }
    defer { fclose(file) }
    return fputs("5", file) >= 0 && fflush(file) == 0
  }

  /// Returns the allocator's free memory to the system (glibc's `malloc_trim(0)`, found with
  /// dlsym since the Glibc module does not import `malloc.h`), so that the resident size
  /// measures live memory.
  static func trimAllocator() {
    typealias TrimFunction = @convention(c) (Int) -> Int32
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return }
    _ = unsafeBitCast(symbol, to: TrimFunction.self)(0)
  }

  /// Reads one `Name:   1234 kB` line of `/proc/self/status`.
  private static func statusField(_ name: String) -> Int? {
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
  }
}
