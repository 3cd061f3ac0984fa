import Foundation
import RetryPolicy

/// A tiny HTTP/1.1 server on 127.0.0.1 that answers `GET /metrics` with the metrics'
/// OpenMetrics text, one connection at a time, on a thread of its own.
final class MetricsServer: @unchecked Sendable {
  // Sound: `isStopped` is read and written only while `lock` is held; the rest is constant.
  let port: Int
  private let listener: Int32
  private let metrics: RetryMetrics
  private let lock = NSLock()
  private var isStopped = false

  init?(metrics: RetryMetrics) {
    guard let (descriptor, port) = Sockets.listen() else { return nil }
    self.listener = descriptor
    self.port = port
    self.metrics = metrics
  }

  func start() {
    let thread = Thread { [self] in serve() }
    thread.start()
  }

  func stop() {
    lock.withLock { isStopped = true }
  }

  private var stopped: Bool { lock.withLock { isStopped } }

  private func serve() {
    while !stopped {
      guard Sockets.waitReadable(listener, milliseconds: 50),
        let connection = Sockets.accept(listener)
      else { continue }
      respond(on: connection)
      Sockets.close(connection)
    }
    Sockets.close(listener)
  }

  /// Reads the request's head and answers it.
  private func respond(on connection: Int32) {
    var request: [UInt8] = []
    while !request.ends(with: Array("\r\n\r\n".utf8)), request.count < 65_536 {
      let bytes = Sockets.receive(connection, count: 4096, milliseconds: 1000)
      guard !bytes.isEmpty else { return }
      request += bytes
    }
    let head = String(decoding: request, as: UTF8.self)
    let line = head.prefix { $0 != "\r" }
    let parts = line.split(separator: " ")
    // Prometheus asks for OpenMetrics in its Accept header; other clients get the classic
    // text format.
    let asksForOpenMetrics = head.lowercased().contains("application/openmetrics-text")
    let (status, type, body): (String, String, String)
    if parts.count >= 2, parts[0] == "GET", parts[1] == "/metrics", !asksForOpenMetrics {
      (status, type, body) = (
        "200 OK", RetryMetrics.prometheusContentType, metrics.prometheusText()
      )
    } else if parts.count >= 2, parts[0] == "GET", parts[1] == "/metrics" {
      (status, type, body) = (
        "200 OK", RetryMetrics.openMetricsContentType, metrics.openMetricsText()
      )
    } else {
      (status, type, body) = ("404 Not Found", "text/plain; charset=utf-8", "not found\n")
    }
    let response =
      "HTTP/1.1 \(status)\r\nContent-Type: \(type)\r\nContent-Length: \(body.utf8.count)\r\n"
      + "Connection: close\r\n\r\n"
    Sockets.send(connection, Array(response.utf8) + Array(body.utf8))
  }
}

extension Array where Element == UInt8 {
  fileprivate func ends(with suffix: [UInt8]) -> Bool {
    count >= suffix.count && Array(self[(count - suffix.count)...]) == suffix
  }
}
