// Built with the AsyncHTTPClient or Vapor trait (both on by default; Package.swift).
#if AsyncHTTPClient || Vapor
import AsyncHTTPClient
import CaptureAgent
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOHTTPCompression
import NIOSSL
import Synchronization
import WireProtocol

/// The capture state of one captured `HTTPClient.Configuration` (so of the
/// clients made from it): its flow numbering, the async requests the tracer
/// has seen but no connection has carried yet, and the redirects whose next
/// hop is expected.
///
/// Shared by the channel handlers of all its connections (each on its own
/// event loop) and by the tracer (on the app's tasks): everything here is
/// behind one lock, held only to look up or change a table.
final class ClientCapture: Sendable {
    let agent: CaptureAgent
    /// The agent's configuration (a copy: it never changes).
    let configuration: CaptureAgent.Configuration
    /// `NetworkLog.sessionID` of this client's flows.
    let clientID: Int
    /// Whether the agent has no include or exclude patterns (the usual
    /// case): then deciding to capture a request needs neither its host
    /// nor its URL.
    let capturesEverything: Bool
    /// The configuration as the app made it, before the capture: what the
    /// agent's own clients (map remote, replay) are made from.
    let appConfiguration: HTTPClient.Configuration
    /// Set on the capture of a client the agent made to replay a flow: each
    /// of its flows says which flow it replays.
    let replayOrigin: ReplayOrigin?
    /// The control tunnel this client's connections go through, when the
    /// app allows control and had no proxy of its own.
    let tunnel: ControlTunnel?

    private struct State {
        var nextTaskID = 1
        /// Async requests the tracer announced, by ``Key``, oldest first,
        /// until a connection sends one or the request ends.
        var pendingRequests: [String: [TracedRequest]] = [:]
        /// Hops of redirect chains whose next request is expected, by the
        /// ``Key`` of the redirect's target.
        var expectedRedirects: [String: [ExpectedRedirect]] = [:]
        var expectedRedirectCount = 0
    }

    private struct ExpectedRedirect {
        var hops: [RedirectHop]
        var deadline: NIODeadline
    }

    /// At most this many redirect chains wait for their next hop; a chain
    /// whose next request never comes (redirects not followed) is forgotten
    /// after ``redirectWait``.
    static let maximumExpectedRedirects = 1024
    static let redirectWait = TimeAmount.seconds(60)

    private let state = NIOLockedValueBox(State())
    /// How many requests `pendingRequests` holds, read without the lock: a
    /// connection's flow that is not built looks at the tables only when
    /// the tracer has requests waiting, since one of them may be its own.
    /// Changed under the lock; a relaxed read is enough, because a request
    /// is announced before AsyncHTTPClient hands it to a connection, and
    /// that hand-over orders the announcement before the connection's read.
    private let waitingRequests = Atomic<Int>(0)

    init(agent: CaptureAgent, appConfiguration: HTTPClient.Configuration, replayOrigin: ReplayOrigin? = nil,
         tunnel: ControlTunnel? = nil) {
        self.agent = agent
        self.tunnel = tunnel
        self.configuration = agent.configuration
        self.appConfiguration = appConfiguration
        self.replayOrigin = replayOrigin
        capturesEverything = configuration.includedHosts.isEmpty && configuration.excludedHosts.isEmpty
            && configuration.includedURLs.isEmpty && configuration.excludedURLs.isEmpty
        self.clientID = agent.nextSessionID()
    }

    /// Whether the tracer has announced requests no connection has claimed yet.
    var hasWaitingRequests: Bool { waitingRequests.load(ordering: .relaxed) > 0 }

    func nextTaskID() -> Int {
        state.withLockedValue { state in
            defer { state.nextTaskID += 1 }
            return state.nextTaskID
        }
    }

    /// Whether a request for `url` is to be captured now.
    func shouldCapture(_ url: URL) -> Bool {
        agent.isCapturing && configuration.shouldCapture(url)
    }

    /// Whether a request for the URL `text` on `host` is to be captured now.
    func shouldCapture(host: String, url text: String) -> Bool {
        agent.isCapturing && configuration.shouldCapture(host: host, url: text)
    }

    /// What a connection's request takes over: see ``claim(key:)``.
    typealias Claim = (taskID: Int, traced: TracedRequest?, hops: [RedirectHop]?)

    /// What a connection sending a request for `key` takes over, in one
    /// look at the tables: its flow number, the async request the tracer
    /// announced for it, and the hops of the redirect that led to it.
    func claim(key: String) -> Claim {
        state.withLockedValue { state in
            let taskID = state.nextTaskID
            state.nextTaskID += 1
            var traced: TracedRequest?
            // In place: a copy of the list, changed and put back, would copy
            // its storage, which the table still shares.
            if let index = state.pendingRequests.index(forKey: key), !state.pendingRequests.values[index].isEmpty {
                traced = state.pendingRequests.values[index].removeFirst()
                waitingRequests.subtract(1, ordering: .relaxed)
                if state.pendingRequests.values[index].isEmpty { state.pendingRequests.remove(at: index) }
            }
            var hops: [RedirectHop]?
            if state.expectedRedirectCount > 0, var chains = state.expectedRedirects[key] {
                let now = NIODeadline.now()
                while !chains.isEmpty, hops == nil {
                    let chain = chains.removeFirst()
                    state.expectedRedirectCount -= 1
                    if chain.deadline > now { hops = chain.hops }
                }
                state.expectedRedirects[key] = chains.isEmpty ? nil : chains
            }
            return (taskID, traced, hops)
        }
    }

    func emit(_ message: Message) {
        agent.emit(message)
    }

    // MARK: - Requests the tracer saw

    func announce(_ request: TracedRequest, key: String) {
        state.withLockedValue { state in
            state.pendingRequests[key, default: []].append(request)
            waitingRequests.add(1, ordering: .relaxed)
        }
    }

    func withdraw(_ request: TracedRequest, key: String) {
        state.withLockedValue { state in
            guard let index = state.pendingRequests.index(forKey: key) else { return }
            let waiting = state.pendingRequests.values[index].count
            state.pendingRequests.values[index].removeAll { $0 === request }
            waitingRequests.subtract(waiting - state.pendingRequests.values[index].count, ordering: .relaxed)
            if state.pendingRequests.values[index].isEmpty { state.pendingRequests.remove(at: index) }
        }
    }

    // MARK: - Redirect chains

    /// A response redirected to `key`: the request AsyncHTTPClient sends
    /// there next continues the chain `hops`.
    func expectRedirect(to key: String, hops: [RedirectHop]) {
        let now = NIODeadline.now()
        state.withLockedValue { state in
            if state.expectedRedirectCount >= Self.maximumExpectedRedirects {
                for (target, chains) in state.expectedRedirects {
                    let live = chains.filter { $0.deadline > now }
                    state.expectedRedirectCount -= chains.count - live.count
                    state.expectedRedirects[target] = live.isEmpty ? nil : live
                }
                guard state.expectedRedirectCount < Self.maximumExpectedRedirects else { return }
            }
            state.expectedRedirects[key, default: []].append(ExpectedRedirect(hops: hops, deadline: now + Self.redirectWait))
            state.expectedRedirectCount += 1
        }
    }

    /// The hops that led to a request for `key`, when one redirected there.
    func claimRedirect(key: String) -> [RedirectHop]? {
        let now = NIODeadline.now()
        return state.withLockedValue { state in
            guard var chains = state.expectedRedirects[key] else { return nil }
            var found: [RedirectHop]?
            while !chains.isEmpty, found == nil {
                let chain = chains.removeFirst()
                state.expectedRedirectCount -= 1
                if chain.deadline > now { found = chain.hops }
            }
            state.expectedRedirects[key] = chains.isEmpty ? nil : chains
            return found
        }
    }

    // MARK: - Installing on a channel

    enum ChannelKind {
        case http1Connection
        case http2Stream
    }

    /// Adds the capture handlers to a channel AsyncHTTPClient has just set up.
    /// Never fails the connection: if the pipeline is not as expected, the
    /// channel simply goes uncaptured.
    func install(on channel: Channel, kind: ChannelKind) -> EventLoopFuture<Void> {
        guard channel.eventLoop.inEventLoop else {
            return channel.eventLoop.submit { self.installNow(on: channel, kind: kind) }
        }
        installNow(on: channel, kind: kind)
        return channel.eventLoop.makeSucceededVoidFuture()
    }

    private func installNow(on channel: Channel, kind: ChannelKind) {
        let pipeline = channel.pipeline.syncOperations
        // Right behind the HTTP codec, where requests and responses are whole
        // HTTP parts and nothing of AsyncHTTPClient's own is in between.
        let codec: ChannelHandler?
        let scheme: String
        switch kind {
        case .http1Connection:
            codec = try? pipeline.handler(type: ByteToMessageHandler<HTTPResponseDecoder>.self)
            scheme = (try? pipeline.handler(type: NIOSSLClientHandler.self)) == nil ? "http" : "https"
        case .http2Stream:
            codec = try? pipeline.handler(type: HTTP2FramePayloadToHTTP1ClientCodec.self)
            scheme = "https"
        }
        guard let codec else { return }
        let decompressor = try? pipeline.handler(type: NIOHTTPResponseDecompressor.self)
        let exchange = ChannelExchange(client: self, scheme: scheme, isHTTP2: kind == .http2Stream, decodes: decompressor != nil)
        do {
            // Control only for an app that allows it: without, the pipeline is as it always was.
            let requestControl = agent.allowsControl ? RequestControlHandler(exchange: exchange) : nil
            if let requestControl { try pipeline.addHandler(requestControl, position: .after(codec)) }
            let wire = WireCaptureHandler(exchange: exchange)
            try pipeline.addHandler(wire, position: .after(requestControl ?? codec))
            var last: ChannelHandler = wire
            if let decompressor {
                // Behind the decompressor: the body as the app gets it, and the
                // request head before the decompressor adds Accept-Encoding.
                let decoded = DecodedCaptureHandler(exchange: exchange)
                try pipeline.addHandler(decoded, position: .after(decompressor))
                last = decoded
            }
            if agent.allowsControl {
                try pipeline.addHandler(ResponseControlHandler(exchange: exchange), position: .after(last))
                // A server's close that ends a held body must leave the
                // pipeline in place until the app has the body (ResponseControlHandler).
                if kind == .http1Connection { try channel.syncOptions?.setOption(.allowRemoteHalfClosure, value: true) }
            }
        } catch {
            // A half-installed pair would record nonsense: the handler that
            // is in passes everything through unrecorded.
            exchange.disable()
        }
    }
}

extension FlowEnd {
    /// How a flow ends with an error AsyncHTTPClient (or Vapor's client)
    /// reported: described as every client's are (``FlowFailure``), with its
    /// own cancellation error counted as one.
    package static func thrownByAsyncHTTPClient(_ error: Error) -> FlowEnd {
        .thrown(error, cancelled: (error as? HTTPClientError) == .cancelled)
    }
}

/// The lookup key of a request: host, port, decoded path and query, so a URL
/// the app gave (as the tracer reports it) and the head a connection sends
/// (`Host` and origin-form URI, as AsyncHTTPClient builds them in
/// HTTPHandler.swift, `URL.uri`) meet without parsing a URL per request on
/// the connection. The scheme is left out: the connection's view of it (TLS
/// or not) is a guess for HTTP/1. The path is the one that goes on the wire,
/// decoded: Foundation's `URL.path` drops a trailing slash, the wire does not.
///
/// Everything here works on UTF-8 bytes: this runs twice per request, and
/// `StringProtocol.contains(_:)` bridges through `NSString` and `Character`
/// searches segment graphemes (docs/BENCHMARKS.md, "Costs behind the code").
enum Key {
    static func make(host: some StringProtocol, port: Int, path: some StringProtocol, query: (some StringProtocol)?) -> String {
        var host = String(host)
        var path = String(path)
        var query = query.map { String($0) }
        return host.withUTF8 { host in
            path.withUTF8 { path in
                if query == nil { return build(host: host, port: port, path: path, query: nil) }
                return query!.withUTF8 { build(host: host, port: port, path: path, query: $0) }
            }
        }
    }

    /// `host:port/path?query`, the host in ASCII lower case, an empty path as `/`.
    private static func build(host: UnsafeBufferPointer<UInt8>, port: Int, path: UnsafeBufferPointer<UInt8>, query: UnsafeBufferPointer<UInt8>?) -> String {
        var port = max(port, 0)
        var divisor = 1
        var digitCount = 1
        while port / divisor >= 10 {
            divisor *= 10
            digitCount += 1
        }
        let capacity = host.count + 1 + digitCount + max(path.count, 1) + (query.map { $0.count + 1 } ?? 0)
        return String(unsafeUninitializedCapacity: capacity) { out in
            var i = 0
            for byte in host {
                out[i] = byte.lowercasedASCII
                i += 1
            }
            out[i] = UInt8(ascii: ":")
            i += 1
            while divisor > 0 {
                out[i] = UInt8(ascii: "0") + UInt8(port / divisor)
                port %= divisor
                divisor /= 10
                i += 1
            }
            if path.isEmpty {
                out[i] = UInt8(ascii: "/")
                i += 1
            } else {
                for byte in path { out[i] = byte; i += 1 }
            }
            if let query {
                out[i] = UInt8(ascii: "?")
                i += 1
                for byte in query { out[i] = byte; i += 1 }
            }
            return i
        }
    }

    static func defaultPort(scheme: String) -> Int {
        URLAuthority.defaultPort(ofScheme: scheme) ?? 80
    }

    /// From a parsed URL (a redirect's target, or a URL text ``of(urlText:)``
    /// cannot read by itself).
    static func of(_ url: URL) -> String? {
        // `URL.host` is without brackets (`URLComponents.host` keeps them).
        guard let host = url.host, !host.isEmpty else { return nil }
        return make(host: host, port: url.port ?? defaultPort(scheme: url.scheme ?? "http"),
                    path: url.path(percentEncoded: false), query: url.query(percentEncoded: true))
    }

    /// From an absolute URL as text (what the tracer gets). The common
    /// `http(s)://host[:port]/path?query#fragment` is read in place
    /// (``URLAuthority/locate(url:)``); anything else (credentials, escapes
    /// in the authority, other schemes) goes through `URL`.
    static func of(urlText: String) -> String? {
        var text = urlText
        let key = text.withUTF8 { bytes -> String? in
            let located = URLAuthority.locate(url: bytes)
            let scheme = UnsafeBufferPointer(rebasing: bytes[located.scheme])
            guard scheme.count == 4 || scheme.count == 5, let defaultPort = URLAuthority.defaultPort(ofScheme: scheme),
                  !located.authority.isEmpty,
                  !bytes[located.authority].contains(where: { $0 == UInt8(ascii: "@") || $0 == UInt8(ascii: "%") })
            else { return nil }
            var uriEnd = located.authority.upperBound
            while uriEnd < bytes.count, bytes[uriEnd] != UInt8(ascii: "#") { uriEnd += 1 }
            return of(authority: UnsafeBufferPointer(rebasing: bytes[located.authority]),
                      uri: UnsafeBufferPointer(rebasing: bytes[located.authority.upperBound ..< uriEnd]), defaultPort: defaultPort)
        }
        return key ?? URL(string: urlText).flatMap(of)
    }

    /// From a request head's `Host` field and origin-form URI.
    static func of(hostField: String, uri: String, scheme: String) -> String {
        var hostField = hostField
        var uri = uri
        let defaultPort = defaultPort(scheme: scheme)
        return hostField.withUTF8 { authority in
            uri.withUTF8 { of(authority: authority, uri: $0, defaultPort: defaultPort) }
        }
    }

    /// From `host[:port]` (or `[v6]:port`) and path-and-query bytes.
    private static func of(authority: UnsafeBufferPointer<UInt8>, uri: UnsafeBufferPointer<UInt8>, defaultPort: Int) -> String {
        let located = URLAuthority.locate(authority: authority)
        let host = UnsafeBufferPointer(rebasing: authority[located.host])
        let port = located.port ?? defaultPort
        let question = uri.firstIndex(of: UInt8(ascii: "?"))
        let path = UnsafeBufferPointer(rebasing: uri[..<(question ?? uri.count)])
        let query = question.map { UnsafeBufferPointer(rebasing: uri[($0 + 1)...]) }
        guard path.contains(UInt8(ascii: "%")) else { return build(host: host, port: port, path: path, query: query) }
        // Escapes in the path: decoded as Foundation decodes them (rare).
        let raw = String(decoding: path, as: UTF8.self)
        var decoded = raw.removingPercentEncoding ?? raw
        return decoded.withUTF8 { build(host: host, port: port, path: $0, query: query) }
    }
}
#endif
