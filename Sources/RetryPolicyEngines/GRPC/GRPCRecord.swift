/// What `import` keeps of a method config that the language cannot say.
///
/// It is a record comment before its policy: `# grpc-service-config: {"name": [...], "retryThrottling": {...}}`, in
/// JSON with every character outside printable ASCII escaped, so that it stays one comment
/// line whatever the names hold. `export --to grpc --file` reads it back.
package struct GRPCRecord: Equatable {
  /// The comment's start, before the JSON object.
  static let marker = "grpc-service-config:"

  /// The method config's `name` list, or nil when it has none.
  var names: [GRPCMethodName]?
  /// The config's `retryThrottling`.
  var throttling: GRPCThrottling?
  /// `maxAttempts` as written, when it was above gRPC's cap of 5.
  var maxAttempts: String?

  /// The comment text, `#` included.
  var comment: String {
    var members: [String] = []
    if let names {
      let entries = names.map { name -> String in
        var parts: [String] = []
        if !name.service.isEmpty { parts.append("\"service\": " + Self.quoted(name.service)) }
        if !name.method.isEmpty { parts.append("\"method\": " + Self.quoted(name.method)) }
        return "{" + parts.joined(separator: ", ") + "}"
      }
      members.append("\"name\": [" + entries.joined(separator: ", ") + "]")
    }
    if let maxAttempts { members.append("\"maxAttempts\": " + maxAttempts) }
    if let throttling {
      members.append(
        "\"retryThrottling\": {\"maxTokens\": \(throttling.maxTokens), \"tokenRatio\": "
          + Self.milliText(throttling.milliRatio) + "}")
    }
    return "# " + Self.marker + " {" + members.joined(separator: ", ") + "}"
  }

  /// The record a comment holds, or nil when it is no record.
  package static func read(_ comment: String) -> GRPCRecord? {
    var text = Substring(comment)
    guard text.first == "#" else { return nil }
    text = text.dropFirst().drop { $0 == " " }
    guard text.hasPrefix(marker) else { return nil }
    text = text.dropFirst(marker.count)
    guard case .success(.object(let members)) = GRPCConfigJSON.parse(Array(text.utf8)) else {
      return nil
    }
    var reader = ConfigReader()
    var record = GRPCRecord()
    if let names = reader.member("name", of: members) {
      record.names = reader.names(names, at: "name")
    }
    if case .number(let attempts)? = reader.member("maxAttempts", of: members) {
      record.maxAttempts = attempts
    }
    record.throttling = reader.throttling(members)
    return reader.errors.isEmpty ? record : nil
  }

  /// A string as JSON, in printable ASCII: `"a\nb"`, `"caf\u00e9"`.
  static func quoted(_ text: String) -> String {
    var result = "\""
    for unit in text.utf16 {
      switch unit {
      case 0x22: result += "\\\""
      case 0x5C: result += "\\\\"
      case 0x0A: result += "\\n"
      case 0x09: result += "\\t"
      case 0x20..<0x7F: result.unicodeScalars.append(Unicode.Scalar(UInt8(unit)))
      default:
        let hex = String(unit, radix: 16)
        result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
      }
    }
    return result + "\""
  }

  /// Thousandths as a decimal: 546 → `0.546`, 2000 → `2`.
  static func milliText(_ milli: Int) -> String {
    let whole = milli / 1000
    var fraction = String(milli % 1000)
    guard fraction != "0" else { return String(whole) }
    fraction = String(repeating: "0", count: 3 - fraction.count) + fraction
    while fraction.hasSuffix("0") { fraction.removeLast() }
    return "\(whole).\(fraction)"
  }
}
