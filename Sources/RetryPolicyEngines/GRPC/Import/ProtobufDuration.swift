/// protobuf's JSON form of `google.protobuf.Duration`: `1s`, `1.5s`, `.002s`, `-3s`, at most
/// nine decimals, at most 315,576,000,000 seconds.
enum ProtobufDuration {
  enum Reason: Error, Equatable {
    case noSuffix
    case malformed
    case outOfRange

    func message(_ text: String) -> String {
      let quoted = GRPCRecord.quoted(text)
      return switch self {
      case .noSuffix: "\(quoted) is not a duration (no 's' suffix), such as \"1.5s\""
      case .malformed: "\(quoted) is not a duration in protobuf's JSON form, such as \"1.5s\""
      case .outOfRange: "\(quoted) is beyond protobuf's 315576000000s"
      }
    }
  }

  static func parse(_ text: String) -> Result<Duration, Reason> {
    var bytes = Array(text.utf8)[...]
    guard bytes.last == UInt8(ascii: "s") else { return .failure(.noSuffix) }
    bytes = bytes.dropLast()
    let isNegative = bytes.first == UInt8(ascii: "-")
    if isNegative { bytes = bytes.dropFirst() }
    let parts = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
    guard parts.count <= 2, let wholePart = parts.first else { return .failure(.malformed) }
    let fractionPart = parts.count == 2 ? parts[1] : []
    guard !wholePart.isEmpty || !fractionPart.isEmpty, fractionPart.count <= 9,
      parts.count == 1 || !fractionPart.isEmpty || !wholePart.isEmpty,
      wholePart.allSatisfy({ (0x30...0x39).contains($0) }),
      fractionPart.allSatisfy({ (0x30...0x39).contains($0) })
    else { return .failure(.malformed) }
    guard wholePart.count <= 12 else { return .failure(.outOfRange) }
    var seconds: Int64 = 0
    for byte in wholePart { seconds = seconds * 10 + Int64(byte - 0x30) }
    guard seconds <= 315_576_000_000 else { return .failure(.outOfRange) }
    var nanoseconds: Int64 = 0
    for index in 0..<9 {
      let digit =
        index < fractionPart.count ? Int64(fractionPart[fractionPart.startIndex + index] - 0x30) : 0
      nanoseconds = nanoseconds * 10 + digit
    }
    let duration = Duration.seconds(seconds) + Duration.nanoseconds(nanoseconds)
    return .success(isNegative ? .zero - duration : duration)
  }
}
