import Foundation

/// A JSON-RPC message body with its `Content-Length` header, as an editor sends it.
func framed(_ body: [UInt8]) -> [UInt8] {
  Array("Content-Length: \(body.count)\r\n\r\n".utf8) + body
}

/// The message `body`, written as text, with its `Content-Length` header.
func framed(_ body: String) -> [UInt8] {
  framed(Array(body.utf8))
}

/// The message `object`, serialized as JSON, with its `Content-Length` header.
func framed(_ object: [String: Any]) throws -> [UInt8] {
  framed(Array(try JSONSerialization.data(withJSONObject: object)))
}
