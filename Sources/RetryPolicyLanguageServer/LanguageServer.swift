import RetryPolicy

/// The state of a language server session, and what it answers to each message.
///
/// A pure state machine: `handle(_:)` takes one message body and returns the messages to
/// send back (responses and notifications), so tests drive it without pipes and the
/// loop of the program that runs it only moves bytes (`retry-policy lsp`).
package struct LanguageServer {
  /// An open document and what analyzing it found.
  struct OpenDocument {
    var document: TextDocument
    var analysis: PolicyAnalysis
  }

  /// Whether `initialize` was answered.
  private(set) var isInitialized = false
  /// Whether `shutdown` was answered.
  package private(set) var isShutDown = false
  /// The exit status once `exit` arrived: 0 after `shutdown`, 1 without; nil before.
  package private(set) var exitStatus: Int32?
  /// The open documents by URI.
  var documents: [String: OpenDocument] = [:]

  /// How many times a document's text was analyzed (tests count it to check that
  /// superseded changes are not analyzed).
  private(set) var analysisCount = 0

  /// What the server takes from the program that runs it.
  let host: LanguageServerHost

  /// A server before `initialize`, for `host`.
  package init(host: LanguageServerHost) {
    self.host = host
  }

  /// What the server can do, as `initialize` answers.
  static let capabilities = ServerCapabilities(
    textDocumentSync: .init(openClose: true, change: 1),
    hoverProvider: true,
    completionProvider: .init(triggerCharacters: [" ", ","]),
    codeActionProvider: .init(codeActionKinds: ["quickfix"]),
    documentFormattingProvider: true,
    documentSymbolProvider: true)

  // MARK: Handlers

  /// A request decoded and bound to its handler: run on the server, it gives the result
  /// or the error to answer.
  typealias BoundRequest =
    @Sendable (inout LanguageServer) -> Result<any Encodable & Sendable, ResponseError>

  /// A notification decoded and bound to its handler: run on the server, it gives the
  /// notifications to send.
  typealias BoundNotification = @Sendable (inout LanguageServer) -> [OutgoingMessage]

  /// How a request's params are decoded, and what answers them.
  struct RequestHandler: Sendable {
    /// Decodes the params of a message (the flag says whether it has any) and binds them.
    let bind: @Sendable (KeyedDecodingContainer<MessageKey>, Bool) throws -> BoundRequest

    init<Request: RequestType>(
      _ type: Request.Type,
      _ answer:
        @escaping @Sendable (inout LanguageServer, Request) -> Result<
          Request.Response, ResponseError
        >
    ) {
      bind = { container, hasParams in
        let request = try LanguageServer.params(
          Request.self, container, hasParams, otherwise: Request.withoutParams)
        return { server in answer(&server, request).map { $0 } }
      }
    }

    /// A request on an open document: its params name the document, which must be open.
    static func document<Request: TextDocumentRequest>(
      _ type: Request.Type,
      _ answer: @escaping @Sendable (LanguageServer, OpenDocument, Request) -> Request.Response
    ) -> RequestHandler {
      RequestHandler(type) { server, request in
        let uri = request.textDocument.uri
        guard let open = server.documents[uri] else {
          return .failure(ResponseError(.invalidParams, "the document '\(uri)' is not open"))
        }
        return .success(answer(server, open, request))
      }
    }
  }

  /// How a notification's params are decoded, and what handles them.
  struct NotificationHandler: Sendable {
    /// Decodes the params of a message (the flag says whether it has any) and binds them.
    let bind: @Sendable (KeyedDecodingContainer<MessageKey>, Bool) throws -> BoundNotification

    init<Notification: NotificationType>(
      _ type: Notification.Type,
      _ handle: @escaping @Sendable (inout LanguageServer, Notification) -> [OutgoingMessage]
    ) {
      bind = { container, hasParams in
        let notification = try LanguageServer.params(
          Notification.self, container, hasParams, otherwise: Notification.withoutParams)
        return { server in handle(&server, notification) }
      }
    }
  }

  /// The requests the server answers, by method.
  static let requestHandlers: [String: RequestHandler] = [
    InitializeRequest.method: RequestHandler(InitializeRequest.self) { server, _ in
      server.isInitialized = true
      return .success(
        InitializeResult(
          capabilities: capabilities,
          serverInfo: .init(name: server.host.name, version: server.host.version)))
    },
    ShutdownRequest.method: RequestHandler(ShutdownRequest.self) { server, _ in
      server.isShutDown = true
      return .success(VoidResponse())
    },
    HoverRequest.method: .document(HoverRequest.self) { $0.hover($1, params: $2) },
    CompletionRequest.method: .document(CompletionRequest.self) {
      $0.completion($1, params: $2)
    },
    CodeActionRequest.method: .document(CodeActionRequest.self) {
      $0.codeActions($1, params: $2)
    },
    DocumentFormattingRequest.method: .document(DocumentFormattingRequest.self) {
      $0.formatting($1, params: $2)
    },
    DocumentSymbolRequest.method: .document(DocumentSymbolRequest.self) {
      $0.symbols($1, params: $2)
    },
  ]

  /// The notifications the server handles, by method (others are ignored, as the
  /// protocol wants).
  static let notificationHandlers: [String: NotificationHandler] = [
    InitializedNotification.method: NotificationHandler(InitializedNotification.self) { _, _ in
      []
    },
    ExitNotification.method: NotificationHandler(ExitNotification.self) { server, _ in
      server.exitStatus = server.isShutDown ? 0 : 1
      return []
    },
    DidOpenTextDocumentNotification.method: NotificationHandler(
      DidOpenTextDocumentNotification.self
    ) { server, notification in
      let item = notification.textDocument
      return [server.open(uri: item.uri, version: item.version ?? 0, text: item.text)]
    },
    DidChangeTextDocumentNotification.method: NotificationHandler(
      DidChangeTextDocumentNotification.self
    ) { server, notification in
      guard let text = notification.contentChanges.last?.text else { return [] }
      let document = notification.textDocument
      return [server.open(uri: document.uri, version: document.version ?? 0, text: text)]
    },
    DidCloseTextDocumentNotification.method: NotificationHandler(
      DidCloseTextDocumentNotification.self
    ) { server, notification in
      let uri = notification.textDocument.uri
      server.documents[uri] = nil
      return [Self.publish(uri: uri, version: nil, diagnostics: [])]
    },
  ]

  /// The params of a message as `type`; `otherwise` when it has none (or `null`).
  private static func params<Params: Decodable>(
    _ type: Params.Type, _ container: KeyedDecodingContainer<MessageKey>, _ hasParams: Bool,
    otherwise: Params?
  ) throws -> Params {
    if hasParams { return try container.decode(Params.self, forKey: .params) }
    if let otherwise { return otherwise }
    throw DecodingError.keyNotFound(
      MessageKey.params,
      .init(codingPath: container.codingPath, debugDescription: "the message has no params"))
  }

  // MARK: Messages

  /// Answers a framing error: a JSON-RPC parse error without an id.
  func handle(framingError reason: String) -> [OutgoingMessage] {
    [.error(id: nil, ResponseError(.parseError, reason))]
  }

  /// Handles one message body; returns the messages to send.
  package mutating func handle(_ body: [UInt8]) -> [OutgoingMessage] {
    handle(IncomingMessage.decode(body))
  }

  /// Handles one decoded message; returns the messages to send.
  mutating func handle(_ message: IncomingMessage) -> [OutgoingMessage] {
    switch message {
    case .response:
      return []
    case .invalid(let id, let error):
      return [.error(id: id, error)]
    case .request(let id, let method, let bound):
      if isShutDown {
        return [
          .error(id: id, ResponseError(.invalidRequest, "the server is shut down; send 'exit'"))
        ]
      }
      if method == InitializeRequest.method, isInitialized {
        return [.error(id: id, ResponseError(.invalidRequest, "the server is already initialized"))]
      }
      guard isInitialized || method == InitializeRequest.method else {
        return [
          .error(id: id, ResponseError(.serverNotInitialized, "the server is not initialized"))
        ]
      }
      switch bound {
      case .failure(let error):
        return [.error(id: id, error)]
      case .success(let answer):
        switch answer(&self) {
        case .success(let result): return [.response(id: id, result: result)]
        case .failure(let error): return [.error(id: id, error)]
        }
      }
    case .notification(let method, let bound):
      guard method == ExitNotification.method || (isInitialized && !isShutDown) else {
        return []
      }
      return bound?(&self) ?? []
    }
  }

  /// Stores a document's new text, analyzes it, and returns its diagnostics to publish.
  mutating func open(uri: String, version: Int, text: String) -> OutgoingMessage {
    let document = TextDocument(uri: uri, version: version, text: text)
    let analysis = analyze(policyFile: document.bytes)
    analysisCount += 1
    documents[uri] = OpenDocument(document: document, analysis: analysis)
    let diagnostics = analysis.diagnostics.map { Self.diagnostic($0, in: document) }
    return Self.publish(uri: uri, version: version, diagnostics: diagnostics)
  }

  private static func publish(uri: String, version: Int?, diagnostics: [LSPDiagnostic])
    -> OutgoingMessage
  {
    .notification(
      method: PublishDiagnosticsNotification.method,
      params: PublishDiagnosticsNotification(uri: uri, version: version, diagnostics: diagnostics))
  }

  /// A diagnostic in the protocol's shape; its notes are related information.
  static func diagnostic(_ diagnostic: Diagnostic, in document: TextDocument) -> LSPDiagnostic {
    let severity: Int
    switch diagnostic.severity {
    case .error: severity = 1
    case .warning: severity = 2
    case .note: severity = 3
    }
    let related = diagnostic.notes.map { note in
      LSPDiagnostic.RelatedInformation(
        location: LSPLocation(uri: document.uri, range: document.range(of: note.range)),
        message: note.message)
    }
    return LSPDiagnostic(
      range: document.range(of: diagnostic.range), severity: severity,
      code: diagnostic.id.rawValue, source: "retry-policy", message: diagnostic.message,
      relatedInformation: related.isEmpty ? nil : related)
  }
}
