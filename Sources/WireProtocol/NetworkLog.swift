import Foundation

/// The record of one HTTP exchange: what was asked, what came back, when, and
/// how it ended.
///
/// A `NetworkLog` starts life in the agent as a request with state
/// ``FlowState/pending``; the events of the wire protocol then fill in the
/// response, the timing and the outcome (see ``NetworkLog/apply(_:)-swift.method``).
/// The same value is what the inspector stores, filters, renders and exports.
///
/// Programs that read what netinspect writes read it with
/// ``init(jsonLine:)``: a line of `netinspect --json`, `--save` or `w` is one
/// `NetworkLog` (``jsonLine()`` writes one), and HAR's `_netinspect` field
/// embeds its parts in the same JSON. The model has one codec, WireJSON,
/// the hand-written one the wire uses, and no `Codable` conformance: it is
/// several times cheaper than `JSONDecoder`/`JSONEncoder` (docs/BENCHMARKS.md
/// section 2), and the golden files pin its text.
///
/// ```swift
/// for line in try String(contentsOfFile: "flows.jsonl", encoding: .utf8).split(separator: "\n") {
///     let log = try NetworkLog(jsonLine: Array(line.utf8))
///     print(log.request.method, log.request.url, log.response?.statusCode ?? 0)
/// }
/// ```
public struct NetworkLog: Sendable, Equatable, Identifiable {
    /// Stable identifier of the flow, unique across agents and runs.
    public var id: FlowID
    /// Identifies the originating `URLSession` within its agent process.
    public var sessionID: Int
    /// The originating task's `taskIdentifier`.
    public var taskID: Int
    /// The request as the app made it.
    public var request: Request
    /// The final response, once its head has arrived.
    public var response: Response?
    /// Timestamps of the exchange's phases.
    public var timing: Timing
    /// Redirects followed before the final response, in order.
    public var redirects: [RedirectHop]
    /// Why the exchange failed, when it did (also set for cancellation).
    @Boxed public var error: FlowError?
    /// Where the exchange is in its life.
    public var state: FlowState
    /// Which HTTP client the flow came from and how it was captured; nil from
    /// agents that predate it.
    public var source: CaptureSource?
    /// What traffic rules changed, when any applied (see ``TrafficRule``).
    @Boxed public var changes: FlowChanges?
    /// Whether the app received this request (``FlowDirection/inbound``) or
    /// sent it; nil means sent, as from every agent that predates the field.
    public var direction: FlowDirection?
    /// The inbound flow the app was handling when it made this one: the
    /// cause of this effect. Nil when it was made outside any handler.
    public var parentID: FlowID?
    /// The other end's address, `host:port`: for an inbound flow the client
    /// that sent the request. Nil where the capture path cannot see it.
    public var peer: String?
    /// This end's address of the connection, `host:port`: for an outbound
    /// flow, the address the app's connection was bound to. A captured
    /// service that received the call has it as its inbound flow's ``peer``,
    /// which is how a viewer links the two (see docs/PROTOCOL.md §4). Nil
    /// where the capture path cannot see it.
    public var localAddress: String?
    /// The gRPC call this flow carries, when it is one: service, method,
    /// messages and status (see ``GRPCCall``).
    @Boxed public var grpc: GRPCCall?
    /// When each part of the bodies went by, for a flow whose body came in
    /// parts while a viewer watched (see ``BodyPart``); nil otherwise.
    @Boxed public var parts: BodyParts?
    /// The WebSocket connection this flow upgraded to, when it is one:
    /// its messages in order (see ``WebSocketSession``).
    @Boxed public var webSocket: WebSocketSession?

    /// Creates a log record.
    public init(
        id: FlowID = FlowID(),
        sessionID: Int = 0,
        taskID: Int = 0,
        request: Request,
        response: Response? = nil,
        timing: Timing,
        redirects: [RedirectHop] = [],
        error: FlowError? = nil,
        state: FlowState = .pending,
        source: CaptureSource? = nil,
        changes: FlowChanges? = nil,
        direction: FlowDirection? = nil,
        parentID: FlowID? = nil,
        peer: String? = nil,
        localAddress: String? = nil,
        grpc: GRPCCall? = nil,
        parts: BodyParts? = nil,
        webSocket: WebSocketSession? = nil
    ) {
        self.id = id
        self.sessionID = sessionID
        self.taskID = taskID
        self.request = request
        self.response = response
        self.timing = timing
        self.redirects = redirects
        self.error = error
        self.state = state
        self.source = source
        self.changes = changes
        self.direction = direction
        self.parentID = parentID
        self.peer = peer
        self.localAddress = localAddress
        self.grpc = grpc
        self.parts = parts
        self.webSocket = webSocket
    }

    /// Whether the app received this request rather than sent it.
    public var isInbound: Bool { direction == .inbound }
}

/// Which way a flow went through the app.
///
/// ```swift
/// var log = NetworkLog(request: Request(method: "GET", url: "http://svc/items"), timing: Timing(startedAt: Date()))
/// log.direction = .inbound      // a request the service received
/// ```
public enum FlowDirection: String, Sendable, CaseIterable {
    /// A request a client sent to the app, which the app answered.
    case inbound
    /// A request the app sent; agents say so by leaving `direction` out.
    case outbound
}

/// Identifier of one flow: a UUID, written as its canonical string on the wire.
public struct FlowID: Sendable, Hashable, CustomStringConvertible {
    /// The underlying UUID.
    public var uuid: UUID

    /// A new identifier, unique in this process and, but for a chance of
    /// about 2^-62, across processes (see `Minting`).
    public init() { self.uuid = Minting.next() }
    /// Wraps an existing UUID.
    public init(_ uuid: UUID) { self.uuid = uuid }
    /// Parses the canonical string form; nil when it is not a UUID.
    public init?(_ string: String) {
        guard let uuid = UUID(uuidString: string) else { return nil }
        self.uuid = uuid
    }

    public var description: String { uuid.uuidString }
}

/// Where an exchange is in its life.
public enum FlowState: String, Sendable, CaseIterable {
    /// The request has started; nothing has come back yet.
    case pending
    /// The response head has arrived; the body may still be coming.
    case responded
    /// The exchange finished with a response.
    case completed
    /// The exchange failed (timeout, refused connection, TLS error…).
    case failed
    /// The app cancelled the task.
    case cancelled

    /// Whether no further events will change the flow.
    public var isFinal: Bool {
        switch self {
        case .pending, .responded: false
        case .completed, .failed, .cancelled: true
        }
    }
}

/// Captured body bytes: the whole body, or a prefix of it when it exceeded
/// the capture cap.
///
/// On the wire the bytes are base64 inside the JSON (`"base64"`).
public struct CapturedBody: Sendable, Equatable {
    /// The captured bytes (all of them, or the first ones when ``isTruncated``).
    public var data: Data
    /// The body's full size in bytes, as transferred to or from the app.
    public var size: Int
    /// Whether `data` holds only a prefix of the body.
    public var isTruncated: Bool
    /// Whether the HTTP client already removed the content coding (gzip,
    /// deflate, br) from these bytes while the headers still name it:
    /// a viewer must not decode them again. `false` on the wire when absent.
    public var isDecoded: Bool

    /// Creates a captured body. `size` defaults to the number of bytes given.
    public init(data: Data, size: Int? = nil, isTruncated: Bool = false, isDecoded: Bool = false) {
        self.data = data
        self.size = size ?? data.count
        self.isTruncated = isTruncated
        self.isDecoded = isDecoded
    }

    /// Keeps at most `cap` bytes of `data`, recording the full size.
    ///
    /// ```swift
    /// let body = CapturedBody(capturing: Data(repeating: 1, count: 10), cap: 4)
    /// // body.data.count == 4, body.size == 10, body.isTruncated == true
    /// ```
    public init(capturing data: Data, cap: Int, isDecoded: Bool = false) {
        if data.count > cap {
            self.init(data: data.prefix(cap), size: data.count, isTruncated: true, isDecoded: isDecoded)
        } else {
            self.init(data: data, size: data.count, isTruncated: false, isDecoded: isDecoded)
        }
    }
}

/// The request of an exchange.
public struct Request: Sendable, Equatable {
    /// The method exactly as sent: `GET`, `OPTIONS`, `PROPFIND`, anything.
    public var method: String
    /// The absolute URL, as text.
    public var url: String
    /// Header fields in the order they were set; duplicates kept.
    public var headers: [HTTPHeader]
    /// The body, when there was one.
    public var body: CapturedBody?
    /// Header fields the HTTP client added on its way to the wire (`Host`,
    /// `User-Agent`, `Accept-Encoding`, `Content-Length`…) that the app did
    /// not set itself, in the order they were sent. Together with
    /// ``headers`` they are the request head as sent.
    public var clientHeaders: [HTTPHeader]

    /// Creates a request record.
    ///
    /// ```swift
    /// let request = Request(method: "GET", url: "http://127.0.0.1:8080/",
    ///                       headers: [HTTPHeader(name: "Accept", value: "application/json")],
    ///                       clientHeaders: [HTTPHeader(name: "Host", value: "127.0.0.1:8080")])
    /// ```
    public init(method: String, url: String, headers: [HTTPHeader] = [], body: CapturedBody? = nil, clientHeaders: [HTTPHeader] = []) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.clientHeaders = clientHeaders
    }

    /// The request head as sent: the app's fields, then the client's.
    public var headersAsSent: [HTTPHeader] { headers + clientHeaders }
}

/// The response of an exchange.
public struct Response: Sendable, Equatable {
    /// The HTTP status code.
    public var statusCode: Int
    /// Header fields in the order they were received; duplicates kept.
    public var headers: [HTTPHeader]
    /// The body, once it has been received.
    public var body: CapturedBody?
    /// The MIME type the response declared (without parameters), if any.
    public var mimeType: String?

    /// Creates a response record.
    public init(statusCode: Int, headers: [HTTPHeader] = [], body: CapturedBody? = nil, mimeType: String? = nil) {
        self.statusCode = statusCode
        self.headers = headers
        self.body = body
        self.mimeType = mimeType
    }
}

/// One redirect the client followed.
public struct RedirectHop: Sendable, Equatable {
    /// The redirect's status code (301, 302, 303, 307, 308).
    public var statusCode: Int
    /// The URL that answered with the redirect.
    public var from: String
    /// The URL it pointed to.
    public var to: String

    /// Creates a redirect record.
    public init(statusCode: Int, from: String, to: String) {
        self.statusCode = statusCode
        self.from = from
        self.to = to
    }
}

/// Why an exchange failed.
public struct FlowError: Sendable, Equatable, Error {
    /// The error domain, e.g. `NSURLErrorDomain`.
    public var domain: String
    /// The error code within its domain, e.g. `-1001` for a timeout.
    public var code: Int
    /// A message a person can read.
    public var message: String

    /// Creates an error record.
    public init(domain: String, code: Int, message: String) {
        self.domain = domain
        self.code = code
        self.message = message
    }
}
