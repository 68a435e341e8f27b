import Foundation
import WireProtocol

extension CaptureAgent {
    /// What the agent captures, how much of it, and where it sends it.
    ///
    /// Every property has a default; set only what you need:
    ///
    /// ```swift
    /// var configuration = CaptureAgent.Configuration(destination: .tcp(host: "127.0.0.1", port: 9123))
    /// configuration.excludedHosts = ["*.telemetry.example"]
    /// configuration.redactedHeaders.insert("X-Api-Key")
    /// configuration.redactedQueryItems = ["token"]
    /// configuration.bodyCaptureLimit = 256 * 1024
    /// let agent = try CaptureAgent.start(configuration)
    /// ```
    ///
    /// Or build it in one expression:
    ///
    /// ```swift
    /// let agent = try CaptureAgent.start(.init(destination: .unix(path: "/tmp/x.sock")) {
    ///     $0.appName = "billing-worker"
    /// })
    /// ```
    public struct Configuration: Sendable {
        /// Where events go: a Unix socket path or a TCP host and port,
        /// written `unix:PATH` or `tcp:HOST:PORT` in `$NETINSPECT`.
        public typealias Destination = Endpoint

        /// Where to send events. `nil` means: `$NETINSPECT` when set, else
        /// `Endpoint.defaultEndpoint()`, the socket the inspector listens on
        /// by default.
        public var destination: Destination?

        /// Host patterns to capture; empty captures every host. A pattern is
        /// a host name, optionally with `*` wildcards (`*.example.com`),
        /// compared case-insensitively.
        public var includedHosts: [String] = []
        /// Host patterns never to capture; wins over ``includedHosts``.
        public var excludedHosts: [String] = []
        /// URL patterns to capture; empty captures every URL. `*` matches any
        /// run of characters: `http://127.0.0.1:*/api/*`.
        public var includedURLs: [String] = []
        /// URL patterns never to capture; wins over ``includedURLs``.
        public var excludedURLs: [String] = []

        /// Header names (case-insensitive) whose values are replaced by
        /// ``redactionMarker`` in the log. The request the server receives
        /// and the response the app receives are never changed.
        public var redactedHeaders: Set<String> = ["Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie"]
        /// Query item names (case-sensitive, as in `URLComponents`) whose
        /// values are replaced by ``redactionMarker`` in the logged URL.
        public var redactedQueryItems: Set<String> = []
        /// What a redacted value reads as in the log.
        public var redactionMarker = "<redacted>"

        /// The most bytes of each request or response body kept in the log.
        /// The app still sends and receives every byte; the log gets the
        /// first `bodyCaptureLimit` bytes, the full size and a truncation flag.
        public var bodyCaptureLimit = 4 * 1024 * 1024

        /// The most messages of one gRPC call or one WebSocket connection
        /// (pings, pongs and closes included) the log keeps, each capped at
        /// `bodyCaptureLimit`; later ones are counted, not sent, so a
        /// long-lived stream cannot flood the inspector. The app's traffic
        /// is the same either way.
        ///
        /// ```swift
        /// let agent = try CaptureAgent.start(.init { $0.messageLimit = 10_000 })
        /// ```
        public var messageLimit = 1000

        /// The former name of ``messageLimit``, from when only gRPC calls had messages.
        @available(*, deprecated, renamed: "messageLimit")
        public var grpcMessageLimit: Int {
            get { messageLimit }
            set { messageLimit = newValue }
        }

        /// The most events waiting to be written to the inspector. When the
        /// queue is full the oldest events are dropped and counted.
        public var maximumPendingEvents = 1024
        /// The most bytes (estimated) of events waiting to be written.
        public var maximumPendingBytes = 64 * 1024 * 1024
        /// How long a flow's first event waits to be written, at most, for
        /// the flow's later events to join it in one frame
        /// (``WriterSchedule/foldWindowNanoseconds``). Not for apps: a
        /// benchmark run under valgrind, where a request takes fifty times
        /// as long, lengthens it so that its flows fold as a real run's do.
        package var foldWindowNanoseconds = WriterSchedule.foldWindowNanoseconds

        /// How long ``CaptureAgent/start(_:)`` waits for its first connection
        /// attempt, so the app's first requests reach an inspector that is
        /// already listening. Connecting to a Unix or loopback socket takes
        /// microseconds; the wait only runs out when a TCP peer does not answer.
        public var initialConnectionWait: TimeInterval = 0.25

        /// How long ``CaptureAgent/stop()`` waits for queued events to be written.
        public var flushTimeout: TimeInterval = 2

        /// The app name sent in `hello`; the process name when `nil`.
        public var appName: String?
        /// A shared secret sent in `hello`; inspectors listening on
        /// non-loopback TCP addresses require one.
        public var token: String?
        /// Whether a viewer may change this app's traffic: map remote, map
        /// local and header rules pushed by the netinspect it connects to.
        /// Off unless the app allows it here or `NETINSPECT_CONTROL=1` is in
        /// its environment. Rules hold only while that viewer stays connected.
        ///
        /// ```swift
        /// let agent = try CaptureAgent.start(.init { $0.allowsControl = true })
        /// ```
        public var allowsControl = false
        /// With control allowed: how many recent requests (and how many
        /// bytes of their bodies) the agent keeps, unredacted, so a viewer
        /// can replay them. Nothing is kept without control.
        public var replayLimits = ReplayLimits()
        /// With control allowed: how long a flow held at a viewer's
        /// breakpoint waits for an answer before it goes on unmodified
        /// (default 60 seconds). A flow never waits longer, and never
        /// outlives the viewer's connection.
        ///
        /// ```swift
        /// let agent = try CaptureAgent.start(.init { $0.allowsControl = true; $0.breakpointTimeout = 10 })
        /// ```
        public var breakpointTimeout: TimeInterval = 60
        /// Whether each flow is also emitted as a span through the
        /// bootstrapped tracer (see ``CaptureAgent/SpanEmission``); off by default.
        public var spans = SpanEmission.disabled

        /// The bounds of the replay buffer.
        ///
        /// ```swift
        /// configuration.replayLimits = .init(requests: 20, bytes: 1 << 20)
        /// ```
        public struct ReplayLimits: Sendable, Equatable {
            /// Requests kept, newest first out of the buffer last.
            public var requests: Int
            /// Bytes of request bodies kept; a larger body is not kept at all.
            public var bytes: Int

            /// Creates bounds; the defaults keep 100 requests and 16 MiB of bodies.
            public init(requests: Int = 100, bytes: Int = 16 * 1024 * 1024) {
                self.requests = requests
                self.bytes = bytes
            }
        }

        /// Creates a configuration, optionally adjusted by `configure`.
        public init(destination: Destination? = nil, _ configure: (inout Configuration) -> Void = { _ in }) {
            self.destination = destination
            configure(&self)
        }

        /// The destination this configuration resolves to: ``destination``,
        /// else `$NETINSPECT`, else the default socket.
        /// - Throws: `Endpoint.ParseError` when `$NETINSPECT` is set but is
        ///   not `unix:PATH` or `tcp:HOST:PORT`.
        public func resolvedDestination(
            environment: [String: String] = ProcessInfo.processInfo.environment
        ) throws(Endpoint.ParseError) -> Destination {
            if let destination { return destination }
            if let text = environment[Endpoint.environmentVariable], !text.isEmpty {
                return try Endpoint(parsing: text)
            }
            return Endpoint.defaultEndpoint(environment: environment)
        }
    }
}

// MARK: - Filtering and redaction

extension CaptureAgent.Configuration {
    /// Whether a request for `url` is captured.
    package func shouldCapture(_ url: URL) -> Bool {
        shouldCapture(host: url.host ?? "", url: url.absoluteString)
    }

    /// Whether a request for the URL `text`, whose host is `host`, is captured.
    package func shouldCapture(host: String, url text: String) -> Bool {
        if excludedHosts.isEmpty, excludedURLs.isEmpty, includedHosts.isEmpty, includedURLs.isEmpty { return true }
        if excludedHosts.contains(where: { Glob.matches($0, host) }) { return false }
        if excludedURLs.contains(where: { Glob.matches($0, text) }) { return false }
        let hostIncluded = includedHosts.isEmpty || includedHosts.contains { Glob.matches($0, host) }
        let urlIncluded = includedURLs.isEmpty || includedURLs.contains { Glob.matches($0, text) }
        return hostIncluded && urlIncluded
    }

    /// `headers` with the values of redacted names replaced.
    package func redacting(_ headers: [HTTPHeader]) -> [HTTPHeader] {
        guard !redactedHeaders.isEmpty else { return headers }
        return headers.map { header in
            redactedHeaders.contains { HTTPHeader.namesMatch($0, header.name) } ? HTTPHeader(name: header.name, value: redactionMarker) : header
        }
    }

    /// `text`, a URL, redacted as a `URL` is; parsed only when
    /// it may hold credentials or a redacted query item.
    package func redacting(urlText text: String) -> String {
        let mayHaveQuery = !redactedQueryItems.isEmpty && text.utf8.contains(UInt8(ascii: "?"))
        let mayHaveCredentials = text.utf8.contains(UInt8(ascii: "@"))
        guard mayHaveQuery || mayHaveCredentials, let url = URL(string: text) else { return text }
        return redacting(url)
    }

    /// `url` as text with credentials (`user:password@`) and the values of
    /// redacted query items replaced.
    package func redacting(_ url: URL) -> String {
        let hasCredentials = url.user != nil || url.password != nil
        let queryIsRedacted = !redactedQueryItems.isEmpty
            && (URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []).contains { redactedQueryItems.contains($0.name) }
        guard hasCredentials || queryIsRedacted,
              var components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        else { return url.absoluteString }
        if hasCredentials {
            // The whole user info: a user name is often a key in itself.
            components.percentEncodedUser = redactionMarker.addingPercentEncoding(withAllowedCharacters: .urlUserAllowed) ?? ""
            components.percentEncodedPassword = nil
        }
        if queryIsRedacted {
            // Percent-encoded form, so a marker like "<redacted>" stays a legal URL.
            components.percentEncodedQueryItems = components.percentEncodedQueryItems?.map { item in
                let name = item.name.removingPercentEncoding ?? item.name
                guard redactedQueryItems.contains(name), item.value != nil else { return item }
                let marker = redactionMarker.addingPercentEncoding(withAllowedCharacters: .urlQueryAllowed) ?? ""
                return URLQueryItem(name: item.name, value: marker)
            }
        }
        return components.string ?? url.absoluteString
    }
}

/// Case-insensitive wildcard matching: `*` matches any run of characters,
/// everything else matches itself.
enum Glob {
    static func matches(_ pattern: String, _ text: String) -> Bool {
        let p = Array(pattern.lowercased().utf8)
        let t = Array(text.lowercased().utf8)
        var pi = 0, ti = 0
        var starAt = -1, resumeAt = 0
        while ti < t.count {
            if pi < p.count, p[pi] == UInt8(ascii: "*") {
                starAt = pi
                resumeAt = ti
                pi += 1
            } else if pi < p.count, p[pi] == t[ti] {
                pi += 1
                ti += 1
            } else if starAt >= 0 {
                pi = starAt + 1
                resumeAt += 1
                ti = resumeAt
            } else {
                return false
            }
        }
        while pi < p.count, p[pi] == UInt8(ascii: "*") { pi += 1 }
        return pi == p.count
    }
}
