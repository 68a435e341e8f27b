import Foundation

/// What a gRPC call adds to its flow: which RPC it was, every message in
/// order, and the status it ended with.
///
/// A gRPC call is one flow. Its ``NetworkLog/request`` is the HTTP/2 request
/// gRPC makes (`POST`, the URL ending in ``path``, the request metadata as
/// headers) and its ``NetworkLog/response`` the response head (status 200,
/// the initial metadata); messages arrive one by one as
/// ``Message/grpcMessage(_:)`` events and the status and trailers with the
/// flow's ``FlowFinished``.
///
/// ```swift
/// var log = NetworkLog(request: Request(method: "POST", url: "http://127.0.0.1:9000/echo.Echo/Get"),
///                      timing: Timing(startedAt: Date()))
/// log.grpc = GRPCCall(service: "echo.Echo", method: "Get", kind: .unary)
/// log.apply(GRPCMessageEvent(id: log.id, message: GRPCMessage(direction: .request, at: 0.001,
///                                                             body: CapturedBody(data: Data([0x0a, 0x02, 0x68, 0x69])))))
/// // log.grpc?.messages.count == 1
/// ```
public struct GRPCCall: Sendable, Equatable {
    /// The fully qualified service, `package.Service`.
    public var service: String
    /// The method's name within its service.
    public var method: String
    /// Which of the four shapes the call has, when the capturing side knows.
    public var kind: GRPCCallKind?
    /// Every message kept so far, requests and responses, in the order they
    /// were sent or received.
    public var messages: [GRPCMessage]
    /// Messages seen but not kept (past the agent's per-call limit): counted
    /// so a viewer can say so. Absent on the wire when zero.
    public var droppedMessages: Int
    /// How the call ended, once it has.
    public var status: GRPCStatus?
    /// The trailing metadata, redacted as headers are.
    public var trailers: [HTTPHeader]

    /// Creates the gRPC part of a flow.
    public init(service: String, method: String, kind: GRPCCallKind? = nil, messages: [GRPCMessage] = [],
                droppedMessages: Int = 0, status: GRPCStatus? = nil, trailers: [HTTPHeader] = []) {
        self.service = service
        self.method = method
        self.kind = kind
        self.messages = messages
        self.droppedMessages = droppedMessages
        self.status = status
        self.trailers = trailers
    }

    /// The call's HTTP/2 path, `/package.Service/Method`.
    public var path: String { "/\(service)/\(method)" }
}

/// The four shapes of a gRPC call.
public enum GRPCCallKind: String, Sendable, CaseIterable {
    /// One request message, one response message.
    case unary
    /// Many request messages, one response message.
    case clientStreaming
    /// One request message, many response messages.
    case serverStreaming
    /// Many of each, in any interleaving.
    case bidirectionalStreaming
}

/// One message of a gRPC call: its direction, when it went by, and its bytes
/// (the serialized message without gRPC's 5-byte length prefix, capped as
/// bodies are; ``CapturedBody/size`` keeps the true size).
public struct GRPCMessage: Sendable, Equatable {
    /// Which way a message went: `request`, client to server; `response`, server to client.
    public typealias Direction = StreamDirection

    /// Which way the message went.
    public var direction: Direction
    /// Seconds from the flow's start (``Timing/startedAt``) until the
    /// message was sent or received, on the agent's monotonic clock.
    public var at: Double
    /// The message's bytes, capped; `size` is the true length.
    public var body: CapturedBody

    /// Creates a message record.
    public init(direction: Direction, at: Double, body: CapturedBody) {
        self.direction = direction
        self.at = at
        self.body = body
    }
}

/// The status a gRPC call ended with: code and message as the server (or the
/// client library, for a deadline or a cancellation) set them.
///
/// ```swift
/// GRPCStatus(code: 5, message: "no such item").name   // "NOT_FOUND"
/// ```
public struct GRPCStatus: Sendable, Equatable {
    /// The numeric status code (0 is OK).
    public var code: Int
    /// The status message, when there was one.
    public var message: String?

    /// Creates a status record.
    public init(code: Int, message: String? = nil) {
        self.code = code
        self.message = message
    }

    /// Whether the call succeeded.
    public var isOK: Bool { code == 0 }

    /// The code's canonical name (`OK`, `NOT_FOUND`, …), or `CODE_<n>` for a
    /// code gRPC does not define.
    public var name: String {
        Self.names.indices.contains(code) ? Self.names[code] : "CODE_\(code)"
    }

    /// The canonical names, indexed by code.
    package static let names = [
        "OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND", "ALREADY_EXISTS",
        "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE",
        "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED",
    ]

    /// The code of a canonical name, either case (`not_found` → 5); nil for
    /// a name gRPC does not define.
    package static func code(named name: String) -> Int? {
        names.firstIndex(of: name.uppercased())
    }
}

/// A message of a gRPC call went by: sent by the client or by the server.
public struct GRPCMessageEvent: Sendable, Equatable {
    /// The flow (the call) this message belongs to.
    public var id: FlowID
    /// The message.
    public var message: GRPCMessage

    /// Creates the event.
    public init(id: FlowID, message: GRPCMessage) {
        self.id = id
        self.message = message
    }
}

extension NetworkLog {
    /// Appends a message to the flow's call. A message for a flow that is not
    /// a gRPC call is ignored.
    public mutating func apply(_ event: GRPCMessageEvent) {
        grpc?.messages.append(event.message)
    }
}

/// How a gRPC call ended, carried by its flow's ``FlowFinished``.
public struct GRPCOutcome: Sendable, Equatable {
    /// The call's final status.
    public var status: GRPCStatus
    /// The trailing metadata, redacted as headers are.
    public var trailers: [HTTPHeader]
    /// Messages seen but not kept (see ``GRPCCall/droppedMessages``).
    public var droppedMessages: Int

    /// Creates the outcome.
    public init(status: GRPCStatus, trailers: [HTTPHeader] = [], droppedMessages: Int = 0) {
        self.status = status
        self.trailers = trailers
        self.droppedMessages = droppedMessages
    }
}

extension GRPCCall {
    /// Folds a call's outcome in.
    mutating func apply(_ outcome: GRPCOutcome) {
        status = outcome.status
        trailers = outcome.trailers
        droppedMessages = outcome.droppedMessages
    }
}
