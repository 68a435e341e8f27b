import Foundation
import WireProtocol

/// The HTTP Archive 1.2 format (W3C Web Performance WG draft, "HAR 1.2"),
/// as far as netinspect writes and reads it.
///
/// These types only write (`Encodable`), so fields the spec requires are
/// non-optional here. A file is read as a `JSONValue` tree instead
/// (HARFile.swift), leniently, because files from browsers and proxies omit
/// or add fields freely. Fields netinspect needs that HAR cannot express
/// (flow id, monotonic offsets, truncation, redirect hops, errors) travel in
/// the custom field `_netinspect`, which HAR allows for names starting with
/// an underscore.
struct HAR: Encodable, Sendable, Equatable {
    /// The archive's one top-level object.
    var log: Log

    /// Creates an archive.
    init(log: Log) { self.log = log }

    /// `log`: the archive proper.
    struct Log: Encodable, Sendable, Equatable {
        /// Always "1.2" when written by netinspect.
        var version: String
        /// The application that wrote the file.
        var creator: Creator
        /// One entry per exchange, in start order.
        var entries: [Entry]

        /// Creates a log.
        init(version: String = "1.2", creator: Creator, entries: [Entry]) {
            self.version = version
            self.creator = creator
            self.entries = entries
        }
    }

    /// `creator`: who wrote the file.
    struct Creator: Encodable, Sendable, Equatable {
        /// The application's name.
        var name: String
        /// The application's version.
        var version: String
        /// Creates a creator record.
        init(name: String, version: String) {
            self.name = name
            self.version = version
        }
    }

    /// One exchange.
    struct Entry: Encodable, Sendable, Equatable {
        /// ISO 8601 start date with milliseconds.
        var startedDateTime: String
        /// Total elapsed milliseconds: the sum of the non-negative `timings`.
        var time: Double
        /// The request.
        var request: Request
        /// The response (status 0 when none was received).
        var response: Response
        /// Cache information; netinspect has none and writes `{}`.
        var cache: Cache
        /// Phase durations in milliseconds.
        var timings: Timings
        /// What HAR cannot say but netinspect needs to restore a flow exactly.
        var netinspect: Extension?
        /// The person's comment on the flow (HAR 1.2's own `comment` field).
        var comment: String? = nil
        /// A WebSocket's messages, as Chrome writes them (HAR+WebSocket.swift).
        var webSocketMessages: [WebSocketMessageRecord]? = nil

        enum CodingKeys: String, CodingKey {
            case startedDateTime, time, request, response, cache, timings, comment
            case netinspect = "_netinspect"
            case webSocketMessages = "_webSocketMessages"
        }
    }

    /// An entry's request.
    struct Request: Encodable, Sendable, Equatable {
        var method: String
        var url: String
        var httpVersion: String
        var cookies: [Cookie]
        var headers: [NameValue]
        var queryString: [NameValue]
        var postData: PostData?
        var headersSize: Int
        var bodySize: Int
    }

    /// An entry's response.
    struct Response: Encodable, Sendable, Equatable {
        var status: Int
        var statusText: String
        var httpVersion: String
        var cookies: [Cookie]
        var headers: [NameValue]
        var content: Content
        var redirectURL: String
        var headersSize: Int
        var bodySize: Int
    }

    /// A header or query parameter.
    struct NameValue: Encodable, Sendable, Equatable {
        var name: String
        var value: String
    }

    /// A cookie, parsed from `Cookie` or `Set-Cookie`.
    struct Cookie: Encodable, Sendable, Equatable {
        var name: String
        var value: String
    }

    /// A request body.
    struct PostData: Encodable, Sendable, Equatable {
        var mimeType: String
        var params: [NameValue]
        var text: String
        /// "base64" when `text` is base64 (a netinspect extension: HAR 1.2
        /// has `encoding` on response content only).
        var encoding: String?

        enum CodingKeys: String, CodingKey {
            case mimeType, params, text
            case encoding = "_encoding"
        }
    }

    /// A response body.
    struct Content: Encodable, Sendable, Equatable {
        /// The body's full size in bytes.
        var size: Int
        var mimeType: String
        var text: String?
        /// "base64" for binary bodies.
        var encoding: String?
        var comment: String?
    }

    /// `cache`: written empty.
    struct Cache: Encodable, Sendable, Equatable {}

    /// Phase durations in milliseconds; -1 where a phase does not apply.
    struct Timings: Encodable, Sendable, Equatable {
        var blocked: Double
        var dns: Double
        var connect: Double
        var send: Double
        var wait: Double
        var receive: Double
        var ssl: Double
    }

    /// The `_netinspect` custom field of an entry.
    struct Extension: Encodable, Sendable, Equatable {
        var id: String
        var sessionID: Int
        var taskID: Int
        var state: String
        /// Seconds since 1970, full precision (the ISO date has milliseconds).
        var startedAt: Double
        var requestSent: Double?
        var firstResponseByte: Double?
        var finished: Double?
        var redirects: [RedirectHopRecord]
        var error: ErrorRecord?
        var requestBody: BodyRecord?
        var responseBody: BodyRecord?
        /// Whether the person marked the flow; absent when not.
        var marked: Bool? = nil
        // The flow's own parts are written as the flow's JSON writes them
        // (WireJSON), so they read as docs/PROTOCOL.md §4 describes them.
        /// Which client captured the flow, and how: the flow's `source`.
        var source: JSONValue? = nil
        /// The header fields the client added (they are also in `request.headers`, last).
        var clientHeaders: [JSONValue]? = nil
        /// The client's own phase timings, in seconds (HAR's `timings` has them in milliseconds).
        var phases: JSONValue? = nil
        /// What traffic rules changed: the flow's `changes`.
        var changes: JSONValue? = nil
        /// "inbound" for a request the app received; absent for one it sent.
        var direction: String? = nil
        /// The id of the inbound flow the app was handling when it made this one.
        var parentID: String? = nil
        /// A gRPC call whole: its messages, status and trailers, the flow's `grpc` (HAR+GRPC.swift).
        var grpc: JSONValue? = nil
    }

    /// A redirect hop inside `_netinspect`.
    struct RedirectHopRecord: Encodable, Sendable, Equatable {
        var statusCode: Int
        var from: String
        var to: String
    }

    /// An error inside `_netinspect`.
    struct ErrorRecord: Encodable, Sendable, Equatable {
        var domain: String
        var code: Int
        var message: String
    }

    /// Size and truncation of a body inside `_netinspect`.
    struct BodyRecord: Encodable, Sendable, Equatable {
        var size: Int
        var truncated: Bool
        /// The client had already removed the content coding; absent when not.
        var decoded: Bool? = nil

        init(_ body: CapturedBody) {
            size = body.size
            truncated = body.isTruncated
            decoded = body.isDecoded ? true : nil
        }
    }
}
