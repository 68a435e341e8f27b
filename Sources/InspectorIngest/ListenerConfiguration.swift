import WireProtocol

/// Where and how ``InspectorListener`` accepts agents.
///
/// ```swift
/// var configuration = ListenerConfiguration(endpoints: [.tcp(host: "0.0.0.0", port: 9123)], token: "s3cret")
/// try configuration.validate()
/// ```
package struct ListenerConfiguration: Sendable {
    /// The addresses to listen on; the default Unix socket unless told otherwise.
    package var endpoints: [Endpoint]
    /// A shared secret every agent's hello must carry; required for any
    /// non-loopback TCP address.
    package var token: String?
    /// The largest frame payload accepted from an agent, in bytes. A larger
    /// length prefix closes that connection before the payload is buffered.
    package var maximumFrameSize: Int
    /// How long a new connection may take to send its hello before it is
    /// closed; `nil` waits for ever.
    package var helloTimeout: Duration? = .seconds(10)
    /// Traffic rules sent to every agent that accepts control, as soon as it
    /// says hello; they hold while its connection lasts.
    package var rules: [TrafficRule] = []
    /// A server replay's book as `serverReplay` frames
    /// (InspectorCore's `ServerReplaySet.frames()`), sent after the rules to every agent
    /// that accepts control; empty for none.
    package var serverReplayFrames: [[UInt8]] = []

    /// Creates a configuration.
    package init(
        endpoints: [Endpoint] = [Endpoint.defaultEndpoint()],
        token: String? = nil,
        maximumFrameSize: Int = Wire.defaultMaximumFrameSize
    ) {
        self.endpoints = endpoints
        self.token = token
        self.maximumFrameSize = maximumFrameSize
    }

    /// Checks the configuration before anything is bound.
    /// - Throws: ``ListenerError/tokenRequired(_:)`` for a TCP address off this
    ///   machine without a token, ``ListenerError/socketPathTooLong(path:)``,
    ///   ``ListenerError/noEndpoints``.
    package func validate() throws(ListenerError) {
        guard !endpoints.isEmpty else { throw .noEndpoints }
        for endpoint in endpoints {
            switch endpoint {
            case .unix(let path):
                guard !path.isEmpty, path.utf8.count <= Endpoint.maximumUnixPathLength else {
                    throw .socketPathTooLong(path: path)
                }
            case .tcp(let host, _):
                if !Endpoint.isLoopback(host: host), (token ?? "").isEmpty {
                    throw .tokenRequired(endpoint)
                }
            }
        }
    }
}

/// Why the listener could not start.
package enum ListenerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Another process (most likely another netinspect) answers on this socket.
    case alreadyListening(path: String)
    /// Something that is not a socket sits where the socket should go; it is
    /// left alone rather than deleted.
    case notASocket(path: String)
    /// A TCP address reachable from other machines was given without a token.
    case tokenRequired(Endpoint)
    /// A Unix socket path is empty or longer than the kernel accepts.
    case socketPathTooLong(path: String)
    /// The configuration names no endpoint.
    case noEndpoints
    /// `start()` was called on a listener that had already started.
    case alreadyStarted
    /// The operating system refused to bind (address in use, permission…).
    case bindFailed(Endpoint, reason: String)

    package var description: String {
        switch self {
        case .alreadyListening(let path):
            "another netinspect is already listening on \(path); quit it or pass --listen unix:OTHER-PATH"
        case .notASocket(let path):
            "\(path) exists and is not a socket; not replacing it"
        case .tokenRequired(let endpoint):
            "\(endpoint) is reachable from other machines: pass --token so only agents that know it can connect"
        case .socketPathTooLong(let path):
            "socket path '\(path)' must be 1 to \(Endpoint.maximumUnixPathLength) bytes long"
        case .noEndpoints:
            "nothing to listen on: give at least one --listen"
        case .alreadyStarted:
            "the listener has already been started"
        case let .bindFailed(endpoint, reason):
            "cannot listen on \(endpoint): \(reason)"
        }
    }
}
