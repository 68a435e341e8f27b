import Foundation

/// The record of one HTTP exchange: what was asked, what came back, when, and
/// how it ended.
///
/// A `NetworkLog` starts life in the agent as a request with state
/// ``FlowState/pending``; the events of the wire protocol then fill in the
/// response, the timing and the outcome (see ``NetworkLog/apply(_:)-swift.method``).
/// The same value is what the inspector stores, filters, renders and exports.
public struct NetworkLog: Codable, Sendable, Equatable, Identifiable {
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
    public var error: FlowError?
    /// Where the exchange is in its life.
    public var state: FlowState

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
        state: FlowState = .pending
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
    }
}

/// Identifier of one flow: a UUID, written as its canonical string on the wire.
public struct FlowID: Codable, Sendable, Hashable, CustomStringConvertible {
    /// The underlying UUID.
    public var uuid: UUID

    /// A new, random identifier.
    public init() { self.uuid = UUID() }
    /// Wraps an existing UUID.
    public init(_ uuid: UUID) { self.uuid = uuid }
    /// Parses the canonical string form; nil when it is not a UUID.
    public init?(_ string: String) {
        guard let uuid = UUID(uuidString: string) else { return nil }
        self.uuid = uuid
    }

    public var description: String { uuid.uuidString }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let string = try container.decode(String.self)
        guard let uuid = UUID(uuidString: string) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "flow id '\(string)' is not a UUID")
        }
        self.uuid = uuid
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(uuid.uuidString)
    }
}

/// Where an exchange is in its life.
public enum FlowState: String, Codable, Sendable, CaseIterable {
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
public struct CapturedBody: Codable, Sendable, Equatable {
    /// The captured bytes (all of them, or the first ones when ``isTruncated``).
    public var data: Data
    /// The body's full size in bytes, as transferred to or from the app.
    public var size: Int
    /// Whether `data` holds only a prefix of the body.
    public var isTruncated: Bool

    /// Creates a captured body. `size` defaults to the number of bytes given.
    public init(data: Data, size: Int? = nil, isTruncated: Bool = false) {
        self.data = data
        self.size = size ?? data.count
        self.isTruncated = isTruncated
    }

    /// Keeps at most `cap` bytes of `data`, recording the full size.
    public init(capturing data: Data, cap: Int) {
        if data.count > cap {
            self.init(data: data.prefix(cap), size: data.count, isTruncated: true)
        } else {
            self.init(data: data, size: data.count, isTruncated: false)
        }
    }

    private enum CodingKeys: String, CodingKey {
        case data = "base64"
        case size
        case isTruncated = "truncated"
    }
}

/// The request of an exchange.
public struct Request: Codable, Sendable, Equatable {
    /// The method exactly as sent: `GET`, `OPTIONS`, `PROPFIND`, anything.
    public var method: String
    /// The absolute URL, as text.
    public var url: String
    /// Header fields in the order they were set; duplicates kept.
    public var headers: [HTTPHeader]
    /// The body, when there was one.
    public var body: CapturedBody?

    /// Creates a request record.
    public init(method: String, url: String, headers: [HTTPHeader] = [], body: CapturedBody? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }
}

/// The response of an exchange.
public struct Response: Codable, Sendable, Equatable {
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
public struct RedirectHop: Codable, Sendable, Equatable {
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
public struct FlowError: Codable, Sendable, Equatable, Error {
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
