import RetryPolicy

/// The state of a language server session, and what it answers to each message.
///
/// A pure state machine: `handle(_:)` takes one message body and returns the messages to
/// send back (responses and notifications), so tests drive it without pipes and the
/// command's loop only moves bytes (see ``LanguageServerCommand``).
package struct LanguageServer {
  /// An open document and what analyzing it found.
  struct OpenDocument {
    var document: TextDocument
    var analysis: PolicyAnalysis
  }

  /// Whether `initialize` was answered.
  private(set) var isInitialized = false
  /// Whether `shutdown` was answered.
  private(set) var isShutDown = false
  /// The exit status once `exit` arrived: 0 after `shutdown`, 1 without; nil before.
  package private(set) var exitStatus: Int32?
  /// The open documents by URI.
  var documents: [String: OpenDocument] = [:]

  /// A server before `initialize`.
  package init() {}

  /// What the server can do, as `initialize` answers.
  static let capabilities = JSONValue.object([
    .init(
      "textDocumentSync",
      .object([.init("openClose", .bool(true)), .init("change", .int(1))])),
    .init("hoverProvider", .bool(true)),
    .init(
      "completionProvider",
      .object([.init("triggerCharacters", .array([" ", ","].map { .string($0) }))])),
    .init("codeActionProvider", .object([.init("codeActionKinds", .array([.string("quickfix")]))])),
    .init("documentFormattingProvider", .bool(true)),
    .init("documentSymbolProvider", .bool(true)),
  ])

  /// Answers a framing error: a JSON-RPC parse error without an id.
  func handle(framingError reason: String) -> [JSONValue] {
    [JSONRPC.error(id: .null, .parseError, reason)]
  }

  /// Handles one message body; returns the messages to send.
  package mutating func handle(_ body: [UInt8]) -> [JSONValue] {
    guard let message = JSONInput.parse(body) else {
      return [JSONRPC.error(id: .null, .parseError, "the message is not JSON")]
    }
    guard case .object = message else {
      return [JSONRPC.error(id: .null, .invalidRequest, "a message must be a JSON object")]
    }
    let id = message["id"]
    guard let method = message["method"]?.string else {
      // A response to a request of ours (the server sends none) is dropped.
      if id != nil, message["result"] != nil || message["error"] != nil { return [] }
      return [
        JSONRPC.error(id: id?.asOutput ?? .null, .invalidRequest, "a request needs a 'method'")
      ]
    }
    let params = message["params"] ?? .null
    if let id {
      switch id {
      case .int, .string: break
      default:
        return [JSONRPC.error(id: .null, .invalidRequest, "a request id is a number or a string")]
      }
      return [request(method, id: id.asOutput, params: params)]
    }
    return notification(method, params: params)
  }

  private mutating func request(_ method: String, id: JSONValue, params: JSONInput) -> JSONValue {
    if isShutDown {
      return JSONRPC.error(id: id, .invalidRequest, "the server is shut down; send 'exit'")
    }
    if method == "initialize" {
      if isInitialized {
        return JSONRPC.error(id: id, .invalidRequest, "the server is already initialized")
      }
      isInitialized = true
      let info = JSONValue.object([
        .init("name", .string("retry-policy")),
        .init("version", .string(CommandLineTool.version)),
      ])
      return JSONRPC.response(
        id: id,
        result: .object([.init("capabilities", Self.capabilities), .init("serverInfo", info)]))
    }
    guard isInitialized else {
      return JSONRPC.error(id: id, .serverNotInitialized, "the server is not initialized")
    }
    if method == "shutdown" {
      isShutDown = true
      return JSONRPC.response(id: id, result: .null)
    }
    let features: [String: (LanguageServer, OpenDocument, JSONInput) -> JSONValue] = [
      "textDocument/hover": { $0.hover($1, params: $2) },
      "textDocument/completion": { $0.completion($1, params: $2) },
      "textDocument/codeAction": { $0.codeActions($1, params: $2) },
      "textDocument/formatting": { $0.formatting($1, params: $2) },
      "textDocument/documentSymbol": { $0.symbols($1, params: $2) },
    ]
    guard let feature = features[method] else {
      return JSONRPC.error(id: id, .methodNotFound, "unknown method '\(method)'")
    }
    guard let uri = params["textDocument"]?["uri"]?.string else {
      return JSONRPC.error(id: id, .invalidParams, "'params.textDocument.uri' is missing")
    }
    guard let open = documents[uri] else {
      return JSONRPC.error(id: id, .invalidParams, "the document '\(uri)' is not open")
    }
    return JSONRPC.response(id: id, result: feature(self, open, params))
  }

  private mutating func notification(_ method: String, params: JSONInput) -> [JSONValue] {
    if method == "exit" {
      exitStatus = isShutDown ? 0 : 1
      return []
    }
    guard isInitialized, !isShutDown else { return [] }
    switch method {
    case "textDocument/didOpen":
      guard let item = params["textDocument"], let uri = item["uri"]?.string,
        let text = item["text"]?.string
      else { return [] }
      return [open(uri: uri, version: item["version"]?.int ?? 0, text: text)]
    case "textDocument/didChange":
      guard let uri = params["textDocument"]?["uri"]?.string,
        let text = params["contentChanges"]?.array?.last?["text"]?.string
      else { return [] }
      let version = params["textDocument"]?["version"]?.int ?? 0
      return [open(uri: uri, version: version, text: text)]
    case "textDocument/didClose":
      guard let uri = params["textDocument"]?["uri"]?.string else { return [] }
      documents[uri] = nil
      return [Self.publish(uri: uri, version: nil, diagnostics: [])]
    default:
      return []
    }
  }

  /// Stores a document's new text, analyzes it, and returns its diagnostics to publish.
  mutating func open(uri: String, version: Int, text: String) -> JSONValue {
    let document = TextDocument(uri: uri, version: version, text: text)
    let analysis = analyze(policyFile: document.bytes)
    let open = OpenDocument(document: document, analysis: analysis)
    documents[uri] = open
    let diagnostics = analysis.diagnostics.map { Self.diagnostic($0, in: document) }
    return Self.publish(uri: uri, version: version, diagnostics: diagnostics)
  }

  private static func publish(uri: String, version: Int?, diagnostics: [JSONValue])
    -> JSONValue
  {
    var params: [JSONMember] = [.init("uri", .string(uri))]
    if let version { params.append(.init("version", .int(version))) }
    params.append(.init("diagnostics", .array(diagnostics)))
    return JSONRPC.notification("textDocument/publishDiagnostics", .object(params))
  }

  /// A diagnostic in the protocol's shape; its notes are related information.
  static func diagnostic(_ diagnostic: Diagnostic, in document: TextDocument) -> JSONValue {
    let severity: Int
    switch diagnostic.severity {
    case .error: severity = 1
    case .warning: severity = 2
    case .note: severity = 3
    }
    var members: [JSONMember] = [
      .init("range", document.range(of: diagnostic.range)),
      .init("severity", .int(severity)),
      .init("code", .string(diagnostic.id.rawValue)),
      .init("source", .string("retry-policy")),
      .init("message", .string(diagnostic.message)),
    ]
    if !diagnostic.notes.isEmpty {
      let related = diagnostic.notes.map { note in
        JSONValue.object([
          .init(
            "location",
            .object([
              .init("uri", .string(document.uri)), .init("range", document.range(of: note.range)),
            ])),
          .init("message", .string(note.message)),
        ])
      }
      members.append(.init("relatedInformation", .array(related)))
    }
    return .object(members)
  }
}
