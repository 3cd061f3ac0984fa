import Foundation
import Testing

@testable import RetryPolicy

/// A client error that is a class, so that a subclass can be thrown as it.
private class BaseStatusError: HTTPStatusProviding, @unchecked Sendable {
  var statusCode: Int { 500 }
}

/// A subclass whose status differs from its superclass's.
private final class GatewayStatusError: BaseStatusError, @unchecked Sendable {
  override var statusCode: Int { 502 }
}

/// An enum client error.
private enum EnumStatusError: HTTPStatusProviding {
  case unavailable, tooMany
  var statusCode: Int { self == .unavailable ? 503 : 429 }
}

/// An error without a status.
private struct PlainError: Error {}

/// A status error of a type of its own for each `Tag`, to make many types.
private struct TaggedStatusError<Tag>: HTTPStatusProviding {
  var statusCode: Int
}

/// An error without status of a type of its own for each `Tag`.
private struct TaggedPlainError<Tag>: Error {}

/// `count` errors of distinct types, alternately with status `500 + index % 100` and without.
private func errorsOfDistinctTypes(_ count: Int) -> [(error: any Error, status: Int?)] {
  func grow<Tag>(_ tag: Tag.Type, _ index: Int, into errors: inout [(any Error, Int?)]) {
    guard index < count else { return }
    if index.isMultiple(of: 2) {
      errors.append((TaggedStatusError<Tag>(statusCode: 500 + index % 100), 500 + index % 100))
    } else {
      errors.append((TaggedPlainError<Tag>(), nil))
    }
    grow([Tag].self, index + 1, into: &errors)
  }
  var errors: [(any Error, Int?)] = []
  grow(Int.self, 0, into: &errors)
  return errors
}

@Suite("HTTP statuses read by type: the per-type table behind the status classes")
struct HTTPStatusReadersTests {
  /// The status through a fresh table, read twice: once to fill it, once from it.
  private func statusTwice(_ error: any Error, _ readers: HTTPStatusReaders) -> [Int?] {
    let type = ObjectIdentifier(type(of: error))
    return [readers.statusCode(of: error, type: type), readers.statusCode(of: error, type: type)]
  }

  @Test("a struct, an enum, a class and a subclass thrown as its superclass read their status")
  func statusOfEveryKindOfType() {
    let readers = HTTPStatusReaders()
    let base: BaseStatusError = GatewayStatusError()
    #expect(statusTwice(base, readers) == [502, 502])
    #expect(statusTwice(BaseStatusError(), readers) == [500, 500])
    #expect(statusTwice(GatewayStatusError(), readers) == [502, 502])
    #expect(statusTwice(EnumStatusError.unavailable, readers) == [503, 503])
    #expect(statusTwice(EnumStatusError.tooMany, readers) == [429, 429])
    #expect(statusTwice(TaggedStatusError<Int>(statusCode: 404), readers) == [404, 404])
    #expect(statusTwice(TaggedStatusError<Int>(statusCode: 503), readers) == [503, 503])
    #expect(statusTwice(PlainError(), readers) == [nil, nil])
    #expect(statusTwice(URLError(.timedOut), readers) == [nil, nil])
  }

  @Test("classification by status and transient agrees for a subclass thrown as its superclass")
  func classifiesSubclassByItsOwnStatus() {
    let thrown: BaseStatusError = GatewayStatusError()
    for _ in 0..<2 {
      #expect(ErrorClassification(thrown).matches("502"))
      #expect(!ErrorClassification(thrown).matches("500"))
      #expect(ErrorClassification(thrown).matches("5xx"))
      #expect(ErrorClassification(thrown).matches("transient"))
      #expect(ErrorClassification(EnumStatusError.tooMany).matches("4xx"))
      #expect(!ErrorClassification(EnumStatusError.tooMany).matches("transient"))
      #expect(!ErrorClassification(PlainError()).matches("5xx"))
      #expect(!ErrorClassification(PlainError()).matches("transient"))
    }
  }

  @Test("past the table's capacity, further types are still read right, uncached")
  func beyondCapacity() {
    let readers = HTTPStatusReaders()
    let errors = errorsOfDistinctTypes(HTTPStatusReaders.capacity * 2)
    #expect(Set(errors.map { ObjectIdentifier(type(of: $0.error)) }).count == errors.count)
    for (error, status) in errors {
      #expect(statusTwice(error, readers) == [status, status], "\(type(of: error))")
    }
  }

  @Test("tasks that read statuses of many new types at once all read them right")
  func concurrentReaders() async {
    let readers = HTTPStatusReaders()
    let errors = errorsOfDistinctTypes(HTTPStatusReaders.capacity + 8)
    let mismatches = await withTaskGroup(of: Int.self) { group in
      for task in 0..<8 {
        group.addTask {
          var mismatches = 0
          for round in 0..<errors.count {
            let (error, status) = errors[(round + task * 7) % errors.count]
            let type = ObjectIdentifier(type(of: error))
            if readers.statusCode(of: error, type: type) != status { mismatches += 1 }
          }
          return mismatches
        }
      }
      return await group.reduce(0, +)
    }
    #expect(mismatches == 0)
  }

  @Test("a URL error's code is read as the number Foundation's `code` holds")
  func urlErrorCodes() {
    let codes = Array(HTTPErrorClasses.urlErrorCodes.values) + [.badURL, .cancelled, .unknown]
    for code in codes {
      #expect(HTTPErrorClasses.urlErrorCode(of: URLError(code)) == URLError(code).code)
    }
    #expect(HTTPErrorClasses.urlErrorCode(of: PlainError()) == nil)
  }

  @Test(
    "the one-pass status form agrees with isStatusForm and statuses(of:)",
    arguments: [
      "503", "5xx", "1xx", "100", "599", "600", "6xx", "0xx", "099", "5XX", "5x", "5030", "50",
      "5", "", "transient", "timedOut", "x5x", "5xX", "5x3", "50x", "503 ", " 503", "٥٠٣",
      "5é3", String(repeating: "5", count: 40),
    ])
  func statusFormAgrees(name: String) {
    let expected: ClosedRange<Int>?? =
      HTTPErrorClasses.isStatusForm(name) ? .some(HTTPErrorClasses.statuses(of: name)) : .none
    #expect(HTTPErrorClasses.statusForm(name) == expected)
  }
}

@Suite("HTTP statuses read by type: the table's size")
struct HTTPStatusReadersSizeTests {
  @Test("the table keeps each type once, and no more than its capacity of types")
  func keepsEachTypeOnceUpToCapacity() {
    let readers = HTTPStatusReaders()
    let errors = errorsOfDistinctTypes(HTTPStatusReaders.capacity + 8)
    for (error, _) in errors.prefix(3) + errors.prefix(3) {
      _ = readers.statusCode(of: error, type: ObjectIdentifier(type(of: error)))
    }
    #expect(readers.count == 3)
    for (error, _) in errors {
      _ = readers.statusCode(of: error, type: ObjectIdentifier(type(of: error)))
    }
    #expect(readers.count == HTTPStatusReaders.capacity)
  }

  @Test("tasks that meet the same new types at once record each of them once")
  func concurrentWritersRecordOnce() async {
    let readers = HTTPStatusReaders()
    let errors = errorsOfDistinctTypes(16)
    await withTaskGroup(of: Void.self) { group in
      for task in 0..<8 {
        group.addTask {
          for round in 0..<errors.count {
            let (error, _) = errors[(round + task) % errors.count]
            _ = readers.statusCode(of: error, type: ObjectIdentifier(type(of: error)))
          }
        }
      }
    }
    #expect(readers.count == errors.count)
  }
}
