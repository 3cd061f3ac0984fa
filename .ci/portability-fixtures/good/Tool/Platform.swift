#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#elseif canImport(ucrt)
  import ucrt
#endif

enum Platform {
  static func isTerminal(_ descriptor: Int32) -> Bool {
    #if os(Windows)
      return _isatty(descriptor) != 0
    #else
      return isatty(descriptor) != 0
    #endif
  }
}
