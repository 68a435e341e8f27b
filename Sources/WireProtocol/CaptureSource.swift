import Foundation

/// Which HTTP client a flow came from, and how the agent captured it.
///
/// Both names are open sets of strings on the wire, so an agent for another
/// client or a newer capture path never makes an older viewer fail.
///
/// ```swift
/// let source = CaptureSource(client: .urlSession, path: .inPlace)
/// let openAPI = CaptureSource(client: .openAPI, operationID: "getGreeting")
/// ```
public struct CaptureSource: Sendable, Equatable {
    /// The HTTP client the app used.
    public var client: Client
    /// How the agent saw the exchange, when the client has more than one way.
    public var path: Path?
    /// The OpenAPI operation the request belongs to.
    public var operationID: String?

    /// Creates a source record.
    public init(client: Client, path: Path? = nil, operationID: String? = nil) {
        self.client = client
        self.path = path
        self.operationID = operationID
    }

    /// The name of an HTTP client.
    public struct Client: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// Foundation's `URLSession`.
        public static let urlSession = Client(rawValue: "URLSession")
        /// swift-server's AsyncHTTPClient (also under Vapor's `app.client`).
        public static let asyncHTTPClient = Client(rawValue: "AsyncHTTPClient")
        /// A swift-openapi-generator client, through its middleware chain.
        public static let openAPI = Client(rawValue: "OpenAPI")
        /// A Hummingbird 2 server, for the requests it received.
        public static let hummingbird = Client(rawValue: "Hummingbird")
        /// A Vapor 4 server, for the requests it received.
        public static let vapor = Client(rawValue: "Vapor")
        /// A Vapor 4 application's `app.client` / `req.client`, through the agent's provider.
        public static let vaporClient = Client(rawValue: "Vapor client")
        /// grpc-swift 2, a call it made or (inbound) served.
        public static let grpcSwift = Client(rawValue: "grpc-swift")
        /// websocket-kit's client (`WebSocket.connect`, also Vapor's), a WebSocket connection it opened.
        public static let websocketKit = Client(rawValue: "websocket-kit")
    }

    /// How an exchange was captured.
    public struct Path: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The client's own machinery ran the app's request; the agent observed it.
        public static let inPlace = Path(rawValue: "in-place")
        /// The agent sent the request again on the app's behalf and relayed the result.
        public static let resent = Path(rawValue: "re-sent")
        /// Read off the connection's channel pipeline, as the bytes went out and came in.
        public static let wire = Path(rawValue: "wire")
        /// Seen only by the client's tracer: the request ended before any
        /// connection carried it (refused, DNS, connect or pool timeout).
        public static let tracer = Path(rawValue: "tracer")
    }
}
