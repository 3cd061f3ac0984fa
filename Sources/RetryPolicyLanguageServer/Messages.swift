// The protocol's messages the server reads and writes, as `Codable` types, in the manner of
// sourcekit-lsp's request types: a request type is its own params, names its method and the
// type of its result. Only the fields the server reads or writes are declared; a client's
// other fields are ignored when decoding.

/// A request from the client: its params' shape, its method and the type of its result.
protocol RequestType: Decodable, Sendable {
  /// What the server answers.
  associatedtype Response: Encodable & Sendable
  /// The method name on the wire.
  static var method: String { get }
  /// The value of a request that came without params (or with `null`); nil when params
  /// are required.
  static var withoutParams: Self? { get }
}

/// A notification from the client: its params' shape and its method.
protocol NotificationType: Decodable, Sendable {
  /// The method name on the wire.
  static var method: String { get }
  /// The value of a notification that came without params; nil when params are required.
  static var withoutParams: Self? { get }
}

extension RequestType {
  static var withoutParams: Self? { nil }
}

extension NotificationType {
  static var withoutParams: Self? { nil }
}

/// A request that reads one open document.
protocol TextDocumentRequest: RequestType {
  /// The document read.
  var textDocument: TextDocumentIdentifier { get }
}

/// Nothing, written as `null` (the result of `shutdown`).
struct VoidResponse: Encodable, Sendable {
  func encode(to encoder: any Encoder) throws {
    var container = encoder.singleValueContainer()
    try container.encodeNil()
  }
}

// MARK: Shared structures

/// A document named by its URI.
struct TextDocumentIdentifier: Codable, Sendable, Equatable {
  var uri: String
}

/// A document named by its URI, at a version.
struct VersionedTextDocumentIdentifier: Codable, Sendable, Equatable {
  var uri: String
  var version: Int?
}

/// A document as the client opens it.
struct TextDocumentItem: Codable, Sendable, Equatable {
  var uri: String
  var languageId: String?
  var version: Int?
  var text: String
}

/// An LSP range: from `start` up to, not including, `end`.
struct LSPRange: Codable, Sendable, Equatable {
  var start: TextDocument.Position
  var end: TextDocument.Position
}

/// A location in a document.
struct LSPLocation: Codable, Sendable, Equatable {
  var uri: String
  var range: LSPRange
}

/// A replacement of a range's text.
struct TextEdit: Codable, Sendable, Equatable {
  var range: LSPRange
  var newText: String
}

/// Text with its format: `markdown` or `plaintext`.
struct MarkupContent: Codable, Sendable, Equatable {
  var kind: String
  var value: String
}

/// A diagnostic in the protocol's shape.
struct LSPDiagnostic: Codable, Sendable, Equatable {
  /// Related information: a note of the diagnostic and where it points.
  struct RelatedInformation: Codable, Sendable, Equatable {
    var location: LSPLocation
    var message: String
  }

  var range: LSPRange
  /// 1 error, 2 warning, 3 information.
  var severity: Int
  var code: String
  var source: String
  var message: String
  var relatedInformation: [RelatedInformation]?
}

// MARK: Lifecycle

/// `initialize`: the client's first request.
struct InitializeRequest: RequestType {
  typealias Response = InitializeResult
  static let method = "initialize"
  static var withoutParams: Self? { Self() }

  var processId: Int?
  var rootUri: String?
}

/// What `initialize` answers.
struct InitializeResult: Codable, Sendable, Equatable {
  /// The server's name and version.
  struct ServerInfo: Codable, Sendable, Equatable {
    var name: String
    var version: String
  }

  var capabilities: ServerCapabilities
  var serverInfo: ServerInfo
}

/// What the server can do.
struct ServerCapabilities: Codable, Sendable, Equatable {
  /// How documents are synchronized: opened and closed, full text on each change (1).
  struct TextDocumentSyncOptions: Codable, Sendable, Equatable {
    var openClose: Bool
    var change: Int
  }

  /// The characters after which the client asks for completion.
  struct CompletionOptions: Codable, Sendable, Equatable {
    var triggerCharacters: [String]
  }

  /// The kinds of code actions offered.
  struct CodeActionOptions: Codable, Sendable, Equatable {
    var codeActionKinds: [String]
  }

  var textDocumentSync: TextDocumentSyncOptions
  var hoverProvider: Bool
  var completionProvider: CompletionOptions
  var codeActionProvider: CodeActionOptions
  var documentFormattingProvider: Bool
  var documentSymbolProvider: Bool
}

/// `shutdown`: the server stops answering requests, and waits for `exit`.
struct ShutdownRequest: RequestType {
  typealias Response = VoidResponse
  static let method = "shutdown"
  static var withoutParams: Self? { Self() }
}

/// `initialized`: the client took the answer to `initialize`.
struct InitializedNotification: NotificationType {
  static let method = "initialized"
  static var withoutParams: Self? { Self() }
}

/// `exit`: the process ends.
struct ExitNotification: NotificationType {
  static let method = "exit"
  static var withoutParams: Self? { Self() }
}

// MARK: Document synchronization

/// `textDocument/didOpen`.
struct DidOpenTextDocumentNotification: NotificationType {
  static let method = "textDocument/didOpen"
  var textDocument: TextDocumentItem
}

/// `textDocument/didChange`: with full sync, the last change holds the whole new text.
struct DidChangeTextDocumentNotification: NotificationType {
  /// One change: the whole text (a range, sent by incremental clients, is not read).
  struct ContentChange: Codable, Sendable, Equatable {
    var text: String
  }

  static let method = "textDocument/didChange"
  var textDocument: VersionedTextDocumentIdentifier
  var contentChanges: [ContentChange]
}

/// `textDocument/didClose`.
struct DidCloseTextDocumentNotification: NotificationType {
  static let method = "textDocument/didClose"
  var textDocument: TextDocumentIdentifier
}

/// `textDocument/publishDiagnostics`, sent by the server.
struct PublishDiagnosticsNotification: Codable, Sendable, Equatable {
  static let method = "textDocument/publishDiagnostics"
  var uri: String
  var version: Int?
  var diagnostics: [LSPDiagnostic]
}

// MARK: Features

/// `textDocument/hover`.
struct HoverRequest: TextDocumentRequest {
  typealias Response = Hover?
  static let method = "textDocument/hover"
  var textDocument: TextDocumentIdentifier
  var position: TextDocument.Position
}

/// What a hover shows, and over which range.
struct Hover: Codable, Sendable, Equatable {
  var contents: MarkupContent
  var range: LSPRange?
}

/// `textDocument/completion`.
struct CompletionRequest: TextDocumentRequest {
  typealias Response = CompletionList
  static let method = "textDocument/completion"
  var textDocument: TextDocumentIdentifier
  var position: TextDocument.Position
}

/// The items offered at the cursor.
struct CompletionList: Codable, Sendable, Equatable {
  var isIncomplete: Bool
  var items: [CompletionItem]
}

/// One item offered: its label, kind (the protocol's number) and, optionally, its edit.
struct CompletionItem: Codable, Sendable, Equatable {
  var label: String
  var kind: Int
  var textEdit: TextEdit?
  /// A clause's one-line summary, from the clause table.
  var detail: String?
  /// A clause's snippet, from the clause table (`insertTextFormat` 2: a snippet).
  var insertText: String?
  var insertTextFormat: Int?
}

/// `textDocument/codeAction`.
struct CodeActionRequest: TextDocumentRequest {
  typealias Response = [CodeAction]
  static let method = "textDocument/codeAction"
  var textDocument: TextDocumentIdentifier
  /// The range asked about; the whole document when absent.
  var range: LSPRange?
}

/// A quick fix: a title, the diagnostic it fixes and its edit.
struct CodeAction: Codable, Sendable, Equatable {
  /// Edits by document URI.
  struct WorkspaceEdit: Codable, Sendable, Equatable {
    var changes: [String: [TextEdit]]
  }

  var title: String
  var kind: String
  var diagnostics: [LSPDiagnostic]
  var isPreferred: Bool
  var edit: WorkspaceEdit
}

/// `textDocument/formatting`.
struct DocumentFormattingRequest: TextDocumentRequest {
  /// The client's formatting options (the canonical format ignores them).
  struct Options: Codable, Sendable, Equatable {
    var tabSize: Int?
    var insertSpaces: Bool?
  }

  typealias Response = [TextEdit]
  static let method = "textDocument/formatting"
  var textDocument: TextDocumentIdentifier
  var options: Options?
}

/// `textDocument/documentSymbol`.
struct DocumentSymbolRequest: TextDocumentRequest {
  typealias Response = [DocumentSymbol]
  static let method = "textDocument/documentSymbol"
  var textDocument: TextDocumentIdentifier
}

/// A policy of the file as a symbol.
struct DocumentSymbol: Codable, Sendable, Equatable {
  var name: String
  var detail: String
  /// The protocol's symbol kind (2 is module).
  var kind: Int
  var range: LSPRange
  var selectionRange: LSPRange
}
