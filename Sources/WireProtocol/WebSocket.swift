import Foundation

/// What a WebSocket frame was. Fragmented messages reach the agent joined
/// by the framework (continuation frames are not separate messages).
public enum WebSocketOpcode: String, Sendable, CaseIterable {
    /// A text message (UTF-8).
    case text
    /// A binary message.
    case binary
    /// A ping control frame.
    case ping
    /// A pong control frame.
    case pong
    /// A close control frame: ``WebSocketMessage/closeCode`` and the reason as its body.
    case close
}

/// One message of a WebSocket connection: direction, when, what kind, and
/// its bytes (capped as bodies are; ``CapturedBody/size`` keeps the true size).
///
/// ```swift
/// let hello = WebSocketMessage(direction: .request, at: 0.2, opcode: .text,
///                              body: CapturedBody(data: Data("hello".utf8)))
/// let bye = WebSocketMessage(direction: .response, at: 1.5, opcode: .close,
///                            body: CapturedBody(data: Data("done".utf8)), closeCode: 1000)
/// ```
public struct WebSocketMessage: Sendable, Equatable {
    /// `request`: sent by the client (the side that asked for the upgrade);
    /// `response`: sent by the server.
    public var direction: StreamDirection
    /// Seconds from the flow's start (the upgrade request) until the
    /// message was sent or received, on the agent's monotonic clock.
    public var at: Double
    /// The frame's kind.
    public var opcode: WebSocketOpcode
    /// The payload (for a close frame, the reason's text), capped.
    public var body: CapturedBody
    /// A close frame's status code (1000 normal, 1001 going away…); nil for
    /// other frames and for a close frame without one.
    public var closeCode: Int?

    /// Creates a message record.
    public init(direction: StreamDirection, at: Double, opcode: WebSocketOpcode, body: CapturedBody, closeCode: Int? = nil) {
        self.direction = direction
        self.at = at
        self.opcode = opcode
        self.body = body
        self.closeCode = closeCode
    }
}

/// What a WebSocket connection adds to its flow (the upgrade request and
/// its `101` response): every message kept so far, in order.
///
/// An upgrade flow's `flowStarted` carries an empty session, so a viewer
/// knows it is one; messages arrive as ``Message/webSocketMessage(_:)``
/// events and the flow finishes when the connection closes.
///
/// ```swift
/// log.webSocket = WebSocketSession()
/// log.apply(WebSocketMessageEvent(id: log.id, message: hello))
/// log.webSocket?.close?.closeCode   // once a close frame went by
/// ```
public struct WebSocketSession: Sendable, Equatable {
    /// Every message kept so far, both directions, in the order they went by.
    public var messages: [WebSocketMessage]
    /// Messages seen but not kept (past the agent's per-flow limit).
    public var droppedMessages: Int

    /// Creates a session record.
    public init(messages: [WebSocketMessage] = [], droppedMessages: Int = 0) {
        self.messages = messages
        self.droppedMessages = droppedMessages
    }

    /// The first close frame, either side's: who closed, the code and the reason.
    public var close: WebSocketMessage? { messages.first { $0.opcode == .close } }
}

/// A message of a WebSocket connection went by.
public struct WebSocketMessageEvent: Sendable, Equatable {
    /// The flow (the upgrade) the message belongs to.
    public var id: FlowID
    /// The message.
    public var message: WebSocketMessage

    /// Creates the event.
    public init(id: FlowID, message: WebSocketMessage) {
        self.id = id
        self.message = message
    }
}

/// How a WebSocket connection ended, carried by its flow's ``FlowFinished``.
public struct WebSocketOutcome: Sendable, Equatable {
    /// Messages seen but not kept (see ``WebSocketSession/droppedMessages``).
    public var droppedMessages: Int

    /// Creates the outcome.
    public init(droppedMessages: Int = 0) {
        self.droppedMessages = droppedMessages
    }
}

extension NetworkLog {
    /// Appends a message to the flow's connection. A message for a flow
    /// that is not a WebSocket connection is ignored.
    public mutating func apply(_ event: WebSocketMessageEvent) {
        webSocket?.messages.append(event.message)
    }
}

extension WebSocketSession {
    /// Folds a connection's outcome in.
    mutating func apply(_ outcome: WebSocketOutcome) {
        droppedMessages = outcome.droppedMessages
    }
}
