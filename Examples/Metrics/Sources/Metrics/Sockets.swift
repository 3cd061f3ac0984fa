#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// The few socket calls the metrics server makes, over the platform's C library: a listening
/// TCP socket on 127.0.0.1, accept, receive and send with a time limit, close.
enum Sockets {
  /// A socket listening on 127.0.0.1 at a port the system picks, and that port.
  static func listen() -> (descriptor: Int32, port: Int)? {
    #if canImport(Darwin)
      let descriptor = socket(AF_INET, SOCK_STREAM, 0)
    #else
      let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    #endif
    guard descriptor >= 0 else { return nil }
    var yes: Int32 = 1
    _ = setsockopt(
      descriptor, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = 0
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
    }
    guard bound == 0, Glue.listen(descriptor, 16) == 0 else {
      close(descriptor)
      return nil
    }
    var actual = sockaddr_in()
    var actualLength = length
    let named = withUnsafeMutablePointer(to: &actual) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        getsockname(descriptor, $0, &actualLength)
      }
    }
    guard named == 0 else {
      close(descriptor)
      return nil
    }
    return (descriptor, Int(UInt16(bigEndian: actual.sin_port)))
  }

  /// Whether `descriptor` becomes readable (a connection, or bytes) within `milliseconds`.
  static func waitReadable(_ descriptor: Int32, milliseconds: Int32) -> Bool {
    var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
    return poll(&entry, 1, milliseconds) > 0
  }

  /// Accepts a connection, or nil.
  static func accept(_ descriptor: Int32) -> Int32? {
    let connection = Glue.accept(descriptor, nil, nil)
    guard connection >= 0 else { return nil }
    #if canImport(Darwin)
      // Darwin has no MSG_NOSIGNAL: a send to a closed peer must not raise SIGPIPE.
      var yes: Int32 = 1
      _ = setsockopt(
        connection, SOL_SOCKET, SO_NOSIGPIPE, &yes, socklen_t(MemoryLayout<Int32>.size))
    #endif
    return connection
  }

  /// Up to `count` bytes, waiting at most `milliseconds`; empty at the end or on a failure.
  static func receive(_ descriptor: Int32, count: Int, milliseconds: Int32) -> [UInt8] {
    guard waitReadable(descriptor, milliseconds: milliseconds) else { return [] }
    var buffer = [UInt8](repeating: 0, count: count)
    let read = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, count, 0) }
    guard read > 0 else { return [] }
    return Array(buffer[0..<read])
  }

  /// Sends all of `bytes` (never raising SIGPIPE); false when the peer has gone.
  @discardableResult
  static func send(_ descriptor: Int32, _ bytes: [UInt8]) -> Bool {
    var offset = 0
    while offset < bytes.count {
      let sent = bytes.withUnsafeBytes { raw in
        Glue.send(descriptor, raw.baseAddress.map { $0 + offset }, bytes.count - offset, noSignal)
      }
      guard sent > 0 else { return false }
      offset += sent
    }
    return true
  }

  /// Closes a socket.
  static func close(_ descriptor: Int32) {
    _ = Glue.close(descriptor)
  }

  #if canImport(Darwin)
    private static let noSignal: Int32 = 0
  #else
    private static let noSignal = Int32(MSG_NOSIGNAL)
  #endif
}

/// The C functions whose names the server's own methods shadow.
private enum Glue {
  #if canImport(Glibc)
    static let listen = Glibc.listen
    static let accept = Glibc.accept
    static let send = Glibc.send
    static let close = Glibc.close
  #elseif canImport(Musl)
    static let listen = Musl.listen
    static let accept = Musl.accept
    static let send = Musl.send
    static let close = Musl.close
  #elseif canImport(Darwin)
    static let listen = Darwin.listen
    static let accept = Darwin.accept
    static let send = Darwin.send
    static let close = Darwin.close
  #endif
}
