import Foundation

/// A small HTTP/1.1 server on 127.0.0.1 for end-to-end tests: it plays a script of replies,
/// one per request, and records every request it receives.
///
/// Each connection carries one request (replies say `Connection: close`). The server runs on
/// its own thread, never the cooperative pool; it is bounded in requests (`maxRequests`, then
/// it stops) and in time (`timeLimit`, then it stops), and every read waits at most two
/// seconds, so a test that goes wrong cannot hang on it. Start one per test; `stop()` it at
/// the end (it also stops when released).
public final class TestHTTPServer: @unchecked Sendable {
  // Sound: the mutable state is read and written only while `lock` is held.

  /// What the server does with one request.
  public enum Reply: Sendable {
    /// A complete response with this status, these headers and this body.
    case respond(status: Int, headers: [String: String] = [:], body: String = "")
    /// A response cut off halfway: the status line, headers announcing a longer body, part
    /// of the body, then the connection closes.
    case dropMidResponse
    /// The connection closes after the request is read, before any byte of a response.
    case dropBeforeResponse
    /// A response slower than any `timeout`: nothing is sent until the client closes the
    /// connection (at most five seconds), then the connection closes.
    case hold
  }

  /// A request as the server received it.
  public struct Request: Sendable {
    /// The method, such as `POST`.
    public var method: String
    /// The request target, such as `/items`.
    public var path: String
    /// The headers, by lowercased name.
    public var headers: [String: String]
    /// The body (a chunked body decoded).
    public var body: Data
  }

  /// The port the server listens on.
  public let port: Int
  private let listener: Int32
  private let lock = NSLock()
  private var script: [Reply]
  private var received: [Request] = []
  private var isStopped = false
  private var hasFinished = false
  private var waiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
  private let finished = DispatchSemaphore(value: 0)

  /// Starts a server that answers the requests with `script`, in order; past its end it
  /// answers `418` with the body `script ended`.
  public init(script: [Reply], maxRequests: Int = 16, timeLimit: Duration = .seconds(120)) throws {
    guard let (descriptor, port) = Sockets.listen() else { throw StartError() }
    self.listener = descriptor
    self.port = port
    self.script = script
    let limitMilliseconds = Int(timeLimit.components.seconds) * 1000
    let thread = Thread { [self] in
      serve(maxRequests: maxRequests, limitMilliseconds: limitMilliseconds)
    }
    thread.start()
  }

  deinit {
    stop()
  }

  /// The server's address, `http://127.0.0.1:PORT` followed by `path`.
  public func url(_ path: String = "/") -> URL {
    URL(string: "http://127.0.0.1:\(port)\(path)") ?? URL(fileURLWithPath: "/")
  }

  /// The requests received so far, in order.
  public var requests: [Request] {
    lock.withLock { received }
  }

  /// Waits until the server has received `count` requests, or has stopped serving.
  ///
  /// A test that cuts an attempt off on its clock waits here first: until the server has the
  /// request, the cut-off may come before the request is sent, and the retry would then be
  /// the first request the server answers.
  public func waitForRequests(_ count: Int) async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      let isWaiting = lock.withLock {
        guard received.count < count, !hasFinished else { return false }
        waiters.append((count, continuation))
        return true
      }
      if !isWaiting { continuation.resume() }
    }
  }

  /// Stops serving and waits for the server's thread to finish (at most a few seconds).
  public func stop() {
    let wasStopped = lock.withLock {
      let was = isStopped
      isStopped = true
      return was
    }
    guard !wasStopped else { return }
    _ = finished.wait(timeout: .now() + 5)
    Sockets.close(listener)
  }

  /// The error of a server that could not listen.
  public struct StartError: Error {}

  private var shouldStop: Bool { lock.withLock { isStopped } }

  private func serve(maxRequests: Int, limitMilliseconds: Int) {
    defer {
      let stranded = lock.withLock {
        hasFinished = true
        defer { waiters = [] }
        return waiters
      }
      for waiter in stranded { waiter.continuation.resume() }
      finished.signal()
    }
    let start = DispatchTime.now()
    var served = 0
    while served < maxRequests, !shouldStop {
      let elapsed = Int(
        (DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1_000_000)
      if elapsed > limitMilliseconds { break }
      guard Sockets.waitReadable(listener, milliseconds: 20),
        let connection = Sockets.accept(listener)
      else { continue }
      served += 1
      if handle(connection) { Sockets.close(connection) }
    }
  }

  /// Answers one connection.
  ///
  /// Returns false when a thread of its own holds the connection (and closes it), so that a
  /// retry on a new connection is answered meanwhile.
  private func handle(_ connection: Int32) -> Bool {
    guard let request = Self.read(connection) else { return true }
    let (reply, satisfied) = lock.withLock {
      received.append(request)
      let reply =
        script.isEmpty ? Reply.respond(status: 418, body: "script ended") : script.removeFirst()
      let satisfied = waiters.filter { $0.count <= received.count }
      waiters.removeAll { $0.count <= received.count }
      return (reply, satisfied)
    }
    for waiter in satisfied { waiter.continuation.resume() }
    switch reply {
    case .respond(let status, let headers, let body):
      var head = "HTTP/1.1 \(status) \(Self.reason(status))\r\n"
      for (name, value) in headers.sorted(by: { $0.key < $1.key }) {
        head += "\(name): \(value)\r\n"
      }
      head += "Content-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n"
      Sockets.send(connection, Array(head.utf8) + Array(body.utf8))
    case .dropMidResponse:
      let head = "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\nConnection: close\r\n\r\npartial"
      Sockets.send(connection, Array(head.utf8))
    case .dropBeforeResponse:
      break
    case .hold:
      let thread = Thread { [self] in
        hold(connection)
        Sockets.close(connection)
      }
      thread.start()
      return false
    }
    return true
  }

  /// Sends nothing until the client closes the connection, the server stops, or 5 s pass.
  ///
  /// Readable with nothing to read is the client's close; bytes are ignored.
  private func hold(_ connection: Int32) {
    for _ in 0..<50 where !shouldStop {
      guard Sockets.waitReadable(connection, milliseconds: 100) else { continue }
      if Sockets.receive(connection, count: 4096, milliseconds: 0).isEmpty { break }
    }
  }

  /// Reads one request: the head up to the blank line, then a body by `Content-Length` or
  /// chunked; nil when the client goes away or is too slow.
  private static func read(_ connection: Int32) -> Request? {
    var bytes: [UInt8] = []
    let separator: [UInt8] = Array("\r\n\r\n".utf8)
    var headEnd: Int?
    while headEnd == nil {
      let more = Sockets.receive(connection, count: 4096, milliseconds: 2000)
      guard !more.isEmpty, bytes.count < 1 << 20 else { return nil }
      bytes += more
      headEnd = find(separator, in: bytes)
    }
    guard let headEnd else { return nil }
    let head = String(decoding: bytes[0..<headEnd], as: UTF8.self)
    var lines = head.components(separatedBy: "\r\n")
    let requestLine = lines.removeFirst().split(separator: " ")
    guard requestLine.count >= 2 else { return nil }
    var headers: [String: String] = [:]
    for line in lines {
      guard let colon = line.firstIndex(of: ":") else { continue }
      headers[line[..<colon].lowercased()] = line[line.index(after: colon)...]
        .trimmingCharacters(in: .whitespaces)
    }
    var body = Array(bytes[(headEnd + separator.count)...])
    if let length = headers["content-length"].flatMap(Int.init) {
      while body.count < length {
        let more = Sockets.receive(connection, count: 4096, milliseconds: 2000)
        guard !more.isEmpty else { return nil }
        body += more
      }
    } else if headers["transfer-encoding"]?.lowercased() == "chunked" {
      let end: [UInt8] = Array("0\r\n\r\n".utf8)
      while find(end, in: body) == nil {
        let more = Sockets.receive(connection, count: 4096, milliseconds: 2000)
        guard !more.isEmpty, body.count < 1 << 20 else { return nil }
        body += more
      }
      body = decodeChunks(body)
    }
    return Request(
      method: String(requestLine[0]), path: String(requestLine[1]), headers: headers,
      body: Data(body))
  }

  private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
    guard haystack.count >= needle.count else { return nil }
    for index in 0...(haystack.count - needle.count)
    where haystack[index..<(index + needle.count)].elementsEqual(needle) {
      return index
    }
    return nil
  }

  private static func decodeChunks(_ bytes: [UInt8]) -> [UInt8] {
    var result: [UInt8] = []
    var index = 0
    let crlf: [UInt8] = [13, 10]
    while let lineEnd = find(crlf, in: Array(bytes[index...])) {
      let sizeText = String(decoding: bytes[index..<(index + lineEnd)], as: UTF8.self)
      guard let size = Int(sizeText.split(separator: ";").first ?? "", radix: 16), size > 0
      else { break }
      let start = index + lineEnd + 2
      guard start + size <= bytes.count else { break }
      result += bytes[start..<(start + size)]
      index = start + size + 2
      guard index < bytes.count else { break }
    }
    return result
  }

  private static func reason(_ status: Int) -> String {
    switch status {
    case 200: "OK"
    case 201: "Created"
    case 404: "Not Found"
    case 418: "I'm a teapot"
    case 429: "Too Many Requests"
    case 500: "Internal Server Error"
    case 503: "Service Unavailable"
    default: "Status"
    }
  }
}
