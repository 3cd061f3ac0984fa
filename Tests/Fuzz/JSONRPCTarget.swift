// The libFuzzer entry point over the language server's message layer: the framer, the peek
// that coalesces changes, the typed decoding of messages and the server's handlers. Built by
// `.ci/fuzz jsonrpc` with `swiftc` into the RetryPolicyCLI module itself (for the tool's
// `LanguageServerHost`; the server's own types are `package`), linked with the modules the
// CLI imports; no ASan. All it looks for is a
// crash (an overflow, an index out of range, an unwrapped nil), a hang or a runaway
// allocation.
//
// Each input runs three ways, after `initialize` and the opening of a small document:
// as the raw stream (headers and all), as the same stream read a few bytes at a time with
// the input pausing between pieces, and as one message body framed with a correct header.

import RetryPolicyLanguageServer

/// The framed messages every run starts with: `initialize`, then a document opened.
private let opening: [UInt8] = {
  let messages = [
    #"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#,
    #"{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"#
      + #""uri":"file:///f.retry","version":1,"#
      + #""text":"policy p = retry 3 bakoff 1s\npolicy q {\n  retry 2 on a delay 2d\n}\n"}}}"#,
  ]
  return messages.flatMap { framedBody(Array($0.utf8)) }
}()

private func framedBody(_ body: [UInt8]) -> [UInt8] {
  Array("Content-Length: \(body.count)\r\n\r\n".utf8) + body
}

/// Sends every reply through the encoder and the framer's output side.
private func drain(_ replies: [OutgoingMessage]) {
  for reply in replies { _ = JSONRPC.framed(reply) }
}

/// Runs one fuzz input through the message layer; libFuzzer calls it.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
  guard let data else { return 0 }
  let bytes = Array(UnsafeBufferPointer(start: data, count: size))

  var whole = LanguageServerConnection(host: .tool)
  drain(whole.receive(opening + bytes))
  drain(whole.flush())

  var pieces = LanguageServerConnection(host: .tool)
  drain(pieces.receive(opening))
  let step = 1 + Int(bytes.first ?? 0) % 13
  var index = 0
  while index < bytes.count {
    let end = min(bytes.count, index + step)
    drain(pieces.receive(Array(bytes[index..<end])))
    if !pieces.isWithinMessage { drain(pieces.flush()) }
    index = end
  }

  var framed = LanguageServerConnection(host: .tool)
  drain(framed.receive(opening + framedBody(bytes)))
  drain(framed.flush())
  return 0
}
