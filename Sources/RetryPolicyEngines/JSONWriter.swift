import Foundation
import RetryPolicy

/// A JSON value whose objects keep their keys in the order given, so output matches the
/// contract's key order exactly.
///
/// Numbers hold their JSON text, so durations can be written exactly from a `Duration`
/// (see ``JSONValue/seconds(_:)``) instead of through a lossy `Double`.
package indirect enum JSONValue: Sendable, Equatable {
  /// `null`.
  case null
  /// `true` or `false`.
  case bool(Bool)
  /// A number, as its JSON text (such as `1.5` or `100`).
  case number(String)
  /// A string.
  case string(String)
  /// An array.
  case array([JSONValue])
  /// An object, keys in order.
  case object([JSONMember])

  /// An integer.
  package static func int(_ value: Int) -> JSONValue { .number(String(value)) }

  /// A duration as seconds, written exactly from its components: `1.0`, `0.25`, `5.0625`.
  package static func seconds(_ duration: Duration) -> JSONValue {
    .number(JSONValue.secondsLiteral(duration))
  }

  /// An optional duration as seconds, or `null`.
  package static func seconds(_ duration: Duration?) -> JSONValue {
    duration.map { .seconds($0) } ?? .null
  }

  /// A `Double` in its shortest form with at most 15 significant digits (so `0.1` stays
  /// `0.1`, not `0.1000000000000000055…`); `null` when it is not finite.
  package static func double(_ value: Double) -> JSONValue {
    guard value.isFinite else { return .null }
    return .number(NumberText.decimal(value))
  }

  /// An optional string, or `null`.
  package static func string(_ value: String?) -> JSONValue {
    value.map { .string($0) } ?? .null
  }

  /// The JSON number text of a duration in seconds; whole numbers get `.0`.
  package static func secondsLiteral(_ duration: Duration) -> String {
    let text = duration.secondsText
    return text.contains(".") ? text : text + ".0"
  }
}

/// One key and value of a JSON object.
package struct JSONMember: Sendable, Equatable {
  /// The key.
  package var key: String
  /// The value.
  package var value: JSONValue

  /// Creates a member.
  package init(_ key: String, _ value: JSONValue) {
    self.key = key
    self.value = value
  }
}

/// Writes ``JSONValue``s as text.
///
/// The pretty form indents by two spaces; an array or object that holds only scalars and
/// fits in `inlineWidth` columns is written on one line, so a schedule row reads
/// `{"retry": 1, "delay": 1.0, "min": 0.9, "max": 1.1}`.
package struct JSONWriter: Sendable {
  /// Whether to break lines and indent.
  package var isPretty: Bool
  /// The widest one-line array or object in the pretty form.
  package var inlineWidth: Int

  /// Creates a writer; pretty by default.
  package init(isPretty: Bool = true, inlineWidth: Int = 80) {
    self.isPretty = isPretty
    self.inlineWidth = inlineWidth
  }

  /// The value as JSON text, without a final line end.
  package func write(_ value: JSONValue) -> String {
    var output = ""
    if isPretty {
      writePretty(value, indent: 0, to: &output)
    } else {
      writeCompact(value, to: &output)
    }
    return output
  }

  private func writeCompact(_ value: JSONValue, to output: inout String) {
    switch value {
    case .null: output += "null"
    case .bool(let flag): output += flag ? "true" : "false"
    case .number(let text): output += text
    case .string(let text): output += Self.quoted(text)
    case .array(let elements):
      output += "["
      for (index, element) in elements.enumerated() {
        if index > 0 { output += "," }
        writeCompact(element, to: &output)
      }
      output += "]"
    case .object(let members):
      output += "{"
      for (index, member) in members.enumerated() {
        if index > 0 { output += "," }
        output += Self.quoted(member.key) + ":"
        writeCompact(member.value, to: &output)
      }
      output += "}"
    }
  }

  /// The one-line form with a space after `:` and `,`, used for short scalar collections.
  private func inlineForm(_ value: JSONValue) -> String? {
    switch value {
    case .array(let elements):
      guard elements.allSatisfy(\.isFlat) else { return nil }
      return "[" + elements.map(inlineText).joined(separator: ", ") + "]"
    case .object(let members):
      guard members.allSatisfy({ $0.value.isFlat }) else { return nil }
      let body = members.map { Self.quoted($0.key) + ": " + inlineText($0.value) }
      return "{" + body.joined(separator: ", ") + "}"
    default:
      return nil
    }
  }

  /// A scalar, or an array of scalars, on one line.
  private func inlineText(_ value: JSONValue) -> String {
    if case .array(let elements) = value {
      return "[" + elements.map(inlineText).joined(separator: ", ") + "]"
    }
    var output = ""
    writeCompact(value, to: &output)
    return output
  }

  private func writePretty(_ value: JSONValue, indent: Int, to output: inout String) {
    if let inline = inlineForm(value), indent * 2 + inline.count <= inlineWidth {
      output += inline
      return
    }
    let inner = String(repeating: "  ", count: indent + 1)
    let outer = String(repeating: "  ", count: indent)
    switch value {
    case .array(let elements) where !elements.isEmpty:
      output += "[\n"
      for (index, element) in elements.enumerated() {
        output += inner
        writePretty(element, indent: indent + 1, to: &output)
        output += index < elements.count - 1 ? ",\n" : "\n"
      }
      output += outer + "]"
    case .object(let members) where !members.isEmpty:
      output += "{\n"
      for (index, member) in members.enumerated() {
        output += inner + Self.quoted(member.key) + ": "
        writePretty(member.value, indent: indent + 1, to: &output)
        output += index < members.count - 1 ? ",\n" : "\n"
      }
      output += outer + "}"
    default:
      writeCompact(value, to: &output)
    }
  }

  /// A JSON string literal: quotes, backslashes and control characters escaped.
  package static func quoted(_ text: String) -> String {
    var output = "\""
    for scalar in text.unicodeScalars {
      switch scalar {
      case "\"": output += "\\\""
      case "\\": output += "\\\\"
      case "\n": output += "\\n"
      case "\r": output += "\\r"
      case "\t": output += "\\t"
      case "\u{08}": output += "\\b"
      case "\u{0C}": output += "\\f"
      default:
        if scalar.value < 0x20 || scalar.value == 0x7F || scalar == "\u{2028}"
          || scalar == "\u{2029}"
        {
          let hex = String(scalar.value, radix: 16)
          output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
        } else {
          output.unicodeScalars.append(scalar)
        }
      }
    }
    return output + "\""
  }
}

extension JSONValue {
  /// Whether the value is neither an array nor an object.
  fileprivate var isScalar: Bool {
    switch self {
    case .array, .object: false
    default: true
    }
  }

  /// A scalar or an array of scalars: what may sit inside a one-line collection.
  fileprivate var isFlat: Bool {
    if case .array(let elements) = self { return elements.allSatisfy(\.isScalar) }
    return isScalar
  }
}

/// Short decimal text of numbers for people and JSON.
package enum NumberText {
  /// `value` with at most 15 significant digits and no trailing zeros: `1.5`, `2`, `0.1`,
  /// `0.333` (not `0.33299999999999996`); very large or small values use an exponent
  /// (`1e+20`), which JSON accepts.
  package static func decimal(_ value: Double) -> String {
    guard value.isFinite else { return value.isNaN ? "nan" : (value < 0 ? "-inf" : "inf") }
    if value == 0 { return "0" }
    return String(format: "%.15g", value)
  }
}
