/// The language server on a byte stream: frames what arrives, holds back changes that may
/// be superseded, hands each message to the ``LanguageServer`` and returns what it answers.
///
/// Coalescing: a `didOpen` or `didChange` (full text) is held until a message reads its
/// document, or until the input pauses (``flush()``); a later change of the same document
/// replaces it unread. So of 100 changes waiting on standard input only the last is
/// decoded and analyzed. A message that names no document (or cannot be read without
/// decoding) releases every held change first, so the server still sees the messages in
/// their order wherever the order matters.
struct LanguageServerConnection {
  private var framer = MessageFramer()
  /// The state machine the messages go to.
  private(set) var server = LanguageServer()
  /// The changes held back, oldest first, at most one a document.
  private var heldChanges: [(uri: String, body: [UInt8])] = []
  /// How many changes were dropped because a later one replaced them.
  private(set) var supersededChangeCount = 0

  /// Adds bytes read from the stream; returns the messages to send for the messages they
  /// complete.
  mutating func receive(_ bytes: [UInt8]) -> [OutgoingMessage] {
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
  mutating func flush() -> [OutgoingMessage] {
    var replies: [OutgoingMessage] = []
    let held = heldChanges
    heldChanges.removeAll()
    for change in held where server.exitStatus == nil {
      replies += server.handle(IncomingMessage.decode(change.body))
    }
    return replies
  }

  /// Whether part of a message has arrived and the rest is on its way.
  var isWithinMessage: Bool { framer.isWithinMessage }

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

  /// Serves standard input and output until `exit` or the end of the input.
  ///
  /// Returns the exit status. `report` gets the message of an output that cannot be written.
  static func serve(report: (String) -> Void) -> Int32 {
    var connection = LanguageServerConnection()
    while connection.server.exitStatus == nil {
      var replies: [OutgoingMessage]
      switch Platform.read(Platform.standardInput, capacity: 1 << 20) {
      case .bytes(let bytes):
        replies = connection.receive(bytes)
      case .interrupted:
        continue
      case .end, .failure:
        return connection.server.isShutDown ? ExitStatus.success : 1
      }
      // Analyze held changes only once nothing more is waiting: what is already on
      // standard input may supersede them.
      if connection.server.exitStatus == nil, !connection.isWithinMessage,
        !Platform.waitForInput(Platform.standardInput, milliseconds: 0)
      {
        replies += connection.flush()
      }
      for reply in replies {
        if let failure = Platform.write(JSONRPC.framed(reply), to: Platform.standardOutput) {
          report("cannot write output: " + Platform.describe(errorNumber: failure))
          return ExitStatus.usage
        }
      }
    }
    return connection.server.exitStatus ?? 1
  }
}
