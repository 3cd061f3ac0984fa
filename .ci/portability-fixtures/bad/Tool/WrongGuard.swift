// expect: unguarded-import one-platform-file
#if canImport(Darwin)
  import Darwin
#elseif os(Linux)
  import Glibc
#endif
