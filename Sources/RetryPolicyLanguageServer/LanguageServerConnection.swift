/// The language server on a byte stream: frames what arrives, holds back changes that may
/// be superseded, hands each message to the ``LanguageServer`` and returns what it answers.
///
/// Coalescing: a `didOpen` or `didChange` (full text) is held until a message reads its
/// document, or until the input pauses (``flush()``); a later change of the same document
/// replaces it unread. So of 100 changes waiting on standard input only the last is
/// decoded and analyzed. A message that names no document (or cannot be read without
/// decoding) releases every held change first, so the server still sees the messages in
/// their order wherever the order matters.
package struct LanguageServerConnection {
  private var framer = MessageFramer()
  /// The state machine the messages go to.
  package private(set) var server: LanguageServer
  /// The changes held back, oldest first, at most one a document.
  private var heldChanges: [(uri: String, body: [UInt8])] = []
  /// How many changes were dropped because a later one replaced them.
  private(set) var supersededChangeCount = 0

  /// A connection to a server before `initialize`, for `host`.
  package init(host: LanguageServerHost) {
    server = LanguageServer(host: host)
  }

  /// Adds bytes read from the stream; returns the messages to send for the messages they
  /// complete.
  package mutating func receive(_ bytes: [UInt8]) -> [OutgoingMessage] {
    framer.append(bytes)
    var replies: [OutgoingMessage] = []
    while server.exitStatus == nil, let item = framer.next() {
      switch item {
      case .framingError(let reason):
        replies += server.handle(framingError: reason)
      case .message(let body):
        replies += receive(message: body)
      }
    }
    return replies
  }

  /// Handles the held changes: the input paused, so no later change is on its way yet.
  package mutating func flush() -> [OutgoingMessage] {
    var replies: [OutgoingMessage] = []
    let held = heldChanges
    heldChanges.removeAll()
    for change in held where server.exitStatus == nil {
      replies += server.handle(IncomingMessage.decode(change.body))
    }
    return replies
  }

  /// Whether part of a message has arrived and the rest is on its way.
  package var isWithinMessage: Bool { framer.isWithinMessage }

  private mutating func receive(message body: [UInt8]) -> [OutgoingMessage] {
    switch MessagePeek(body) {
    case .change(let uri):
      if let index = heldChanges.firstIndex(where: { $0.uri == uri }) {
        heldChanges.remove(at: index)
        supersededChangeCount += 1
      }
      heldChanges.append((uri, body))
      return []
    case .reads(let uri):
      var replies: [OutgoingMessage] = []
      if let index = heldChanges.firstIndex(where: { $0.uri == uri }) {
        let change = heldChanges.remove(at: index)
        replies += server.handle(IncomingMessage.decode(change.body))
      }
      return replies + process(body)
    case .unknown:
      return flush() + process(body)
    }
  }

  /// Decodes and handles a message; a body that is not JSON was probably framed with a
  /// wrong length, so the framer skips to the next header (the parse error is the report).
  private mutating func process(_ body: [UInt8]) -> [OutgoingMessage] {
    let message = IncomingMessage.decode(body)
    if case .invalid(nil, let error) = message, error.code == .parseError {
      framer.skipToNextHeader()
    }
    return server.handle(message)
  }
}
