import Foundation
import RetryPolicy
import Testing

/// A 24-byte error: the most common shape, a code and a message.
private enum MessageError: Error {
  case serverError(code: Int, message: String)
  case unavailable
}

/// A 64-byte error.
private enum WideError: Error {
  case overloaded(a: Int, b: Int, c: Int, d: Int, e: Int, f: Int, g: Int, h: Int)
  case idle
}

/// A 9-byte error.
private enum SmallError: Error {
  case serverError(code: Int)
  case notFound
}

@Suite("Runtime: case names are reflected once, then looked up")
struct RuntimeCaseNameCacheTests {
  private func classify(_ error: any Error, times: Int) -> Bool {
    (0..<times).allSatisfy { _ in ErrorClassification(error).matches("serverError") }
  }

  @Test("a 24-byte enum value is reflected on its first failure only")
  func messageErrorReflectedOnce() {
    let error = MessageError.serverError(code: 503, message: "the service is unavailable now")
    #expect(classify(error, times: 50))
    #expect(ErrorNameCache.shared.reflections(of: MessageError.self) == 1)
    #expect(!ErrorClassification(MessageError.unavailable).matches("serverError"))
    #expect(ErrorClassification(MessageError.unavailable).matches("unavailable"))
  }

  @Test("a 64-byte enum value is reflected on its first failure only")
  func wideErrorReflectedOnce() {
    let error = WideError.overloaded(a: 1, b: 2, c: 3, d: 4, e: 5, f: 6, g: 7, h: 8)
    #expect(MemoryLayout<WideError>.size >= 64)
    for _ in 0..<50 { #expect(ErrorClassification(error).matches("overloaded")) }
    #expect(ErrorNameCache.shared.reflections(of: WideError.self) == 1)
  }

  @Test("a small enum's cases without payload are reflected once each")
  func smallErrorReflectedOnce() {
    for _ in 0..<50 {
      #expect(ErrorClassification(SmallError.notFound).matches("notFound"))
      #expect(ErrorClassification(SmallError.serverError(code: 500)).matches("serverError"))
    }
    #expect(ErrorNameCache.shared.reflections(of: SmallError.self) == 2)
  }
}
