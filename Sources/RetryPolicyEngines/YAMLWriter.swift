/// Writes a ``JSONValue`` as block-style YAML: `key: value` lines, `- ` for array elements,
/// strings double-quoted (JSON's escapes are YAML's), numbers, booleans and null as in JSON;
/// a key that YAML would not read as a plain string (such as `@type`, `@` being reserved) is
/// double-quoted too.
package struct YAMLWriter {
  package init() {}

  /// The value as YAML text, ending with a line end.
  package func write(_ value: JSONValue) -> String {
    var output = ""
    switch value {
    case .object(let members) where !members.isEmpty:
      writeMembers(members, indent: 0, firstPrefix: "", to: &output)
    case .array(let elements) where !elements.isEmpty:
      writeElements(elements, indent: 0, to: &output)
    default:
      output += scalar(value) + "\n"
    }
    return output
  }

  private func writeMembers(
    _ members: [JSONMember], indent: Int, firstPrefix: String, to output: inout String
  ) {
    let pad = String(repeating: " ", count: indent)
    for (index, member) in members.enumerated() {
      output += (index == 0 && !firstPrefix.isEmpty ? firstPrefix : pad) + key(member.key) + ":"
      writeNested(member.value, indent: indent + 2, to: &output)
    }
  }

  private func writeElements(_ elements: [JSONValue], indent: Int, to output: inout String) {
    let pad = String(repeating: " ", count: indent)
    for element in elements {
      if case .object(let members) = element, !members.isEmpty {
        writeMembers(members, indent: indent + 2, firstPrefix: pad + "- ", to: &output)
      } else if case .array(let inner) = element, !inner.isEmpty {
        output += pad + "-\n"
        writeElements(inner, indent: indent + 2, to: &output)
      } else {
        output += pad + "- " + scalar(element) + "\n"
      }
    }
  }

  private func writeNested(_ value: JSONValue, indent: Int, to output: inout String) {
    switch value {
    case .object(let members) where !members.isEmpty:
      output += "\n"
      writeMembers(members, indent: indent, firstPrefix: "", to: &output)
    case .array(let elements) where !elements.isEmpty:
      output += "\n"
      writeElements(elements, indent: indent, to: &output)
    default:
      output += " " + scalar(value) + "\n"
    }
  }

  /// `text` as a mapping key: plain when it is a letter or `_` followed by letters, digits,
  /// `_`, `.` and `-`; else double-quoted.
  private func key(_ text: String) -> String {
    func isLetter(_ byte: UInt8) -> Bool {
      (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
        || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) || byte == UInt8(ascii: "_")
    }
    func isOther(_ byte: UInt8) -> Bool {
      isLetter(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
        || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-")
    }
    guard let first = text.utf8.first, isLetter(first), text.utf8.allSatisfy(isOther) else {
      return JSONWriter.quoted(text)
    }
    return text
  }

  private func scalar(_ value: JSONValue) -> String {
    switch value {
    case .null: "null"
    case .bool(let flag): flag ? "true" : "false"
    case .number(let text): text
    case .string(let text): JSONWriter.quoted(text)
    case .array: "[]"
    case .object: "{}"
    }
  }
}
