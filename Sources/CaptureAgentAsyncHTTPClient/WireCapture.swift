// Built with the AsyncHTTPClient or Vapor trait (both on by default; Package.swift).
#if AsyncHTTPClient || Vapor
import CaptureAgent
import Foundation
import NIOCore
import NIOHTTP1
import WireProtocol

/// What one channel (an HTTP/1 connection, or one HTTP/2 stream) is doing:
/// the exchange on it now, if captured. AsyncHTTPClient sends one request at
/// a time on an HTTP/1 connection and one per HTTP/2 stream, so one slot is
/// enough. Touched only on the channel's event loop (closures that other
/// threads run hop there first).
final class ChannelExchange: @unchecked Sendable {
    let client: ClientCapture
    let scheme: String
    let isHTTP2: Bool
    /// A decompressor sits between the two handlers: the body is read
    /// behind it, as the app gets it.
    let decodes: Bool
    private(set) var isDisabled = false
    var flow: WireFlow?
    /// The request head as it left AsyncHTTPClient, before the decompressor
    /// added `Accept-Encoding` (only with a decompressor).
    var headBeforeDecompressor: HTTPRequestHead?
    /// The current flow under the viewer's control; nil unless the app allows control.
    var controlled: ControlledFlow?
    /// The request as the app's client wrote it (control allowed only): what a replay sends.
    var app: ExchangeRequest?
    /// This end's address as text, once known: a channel's local address
    /// never changes, and formatting it cost more than the rest of a
    /// flow's description (docs/BENCHMARKS.md, "Costs behind the code").
    private var localAddressText: String?

    init(client: ClientCapture, scheme: String, isHTTP2: Bool, decodes: Bool) {
        self.client = client
        self.scheme = scheme
        self.isHTTP2 = isHTTP2
        self.decodes = decodes
    }

    func disable() {
        isDisabled = true
        flow = nil
    }

    // MARK: Request, as it goes to the codec

    func requestHead(_ head: HTTPRequestHead, eventLoop: EventLoop, localAddress: SocketAddress?) {
        guard !isDisabled else { return }
        if let flow, !flow.recording.isFinished {
            // A new request on a channel that never finished the last one.
            flow.recording.finish(.failed(FlowError(
                domain: "CaptureAgent", code: 0,
                message: "AsyncHTTPClient started another request on this connection before the response ended"
            )))
        }
        flow = nil
        let appHead = headBeforeDecompressor ?? head
        headBeforeDecompressor = nil
        // The agent's patterns need the URL to decide; with none (the usual
        // case) a flow that is not built never reads it.
        var target: Target?
        if client.capturesEverything {
            guard client.agent.isCapturing else { return }
        } else {
            guard let known = self.target(of: head), shouldCapture(known) else { return }
            target = known
        }
        // Described and paired only for a flow that is built: an unbuilt one
        // costs no copies and no lookups, unless the tracer has requests
        // waiting for a connection (it watched them while flows were
        // recorded), one of which may be this one: it is carried now.
        func known() -> Target? {
            if target == nil { target = self.target(of: head) }
            return target
        }
        var claimed: ClientCapture.Claim?
        let recording = FlowRecording(agent: client.agent, start: {
            let described = known() ?? Target(url: head.uri, key: "")
            let claim = client.claim(key: described.key)
            claimed = claim
            return flowStart(head, appHead: appHead, url: described.url, claimed: claim, localAddress: localAddress)
        }(), configuration: client.configuration)
        if !recording.isBuilt, client.hasWaitingRequests, let described = known() {
            claimed = client.claim(key: described.key)
        }
        let flow = WireFlow(recording: recording, method: head.method.rawValue, url: target?.url, eventLoop: eventLoop)
        if let traced = claimed?.traced {
            flow.traced = traced
            traced.carried(by: flow)
        }
        self.flow = flow
    }

    func requestBody(_ data: IOData) {
        guard let flow else { return }
        switch data {
        case .byteBuffer(let buffer):
            buffer.withUnsafeReadableBytes { flow.recording.requestBody($0) }
        case .fileRegion(let region):
            // Sent by the kernel from a file: counted, not read.
            flow.recording.requestBodyUnread(region.readableBytes)
        }
    }

    func requestEnd() {
        flow?.recording.requestEnded()
    }

    // MARK: Response, as it comes from the codec (head) or the decompressor (body)

    func responseHead(_ head: HTTPResponseHead) {
        guard let flow else { return }
        // 1xx heads are interim: the final one follows.
        if head.status.code >= 100, head.status.code < 200, head.status != .switchingProtocols { return }
        // An unbuilt flow with no request of the tracer's has no URL and no chain to continue.
        let redirect = flow.url.flatMap { Self.redirect(head, from: $0) }
        var hops: [RedirectHop]?
        let taken = flow.recording.respond(replacing: true) { recorder in
            let headers = head.headers.map { HTTPHeader(name: $0.name, value: $0.value) }
            let event = recorder.received(statusCode: Int(head.status.code), headers: headers,
                                          mimeType: MediaType.essence(of: head.headers.first(name: "content-type")))
            if decodes {
                let coding = head.headers.first(name: "content-encoding")?.lowercased()
                recorder.responseBodyIsDecoded = coding == "gzip" || coding == "deflate"
            }
            if let redirect {
                var hop = recorder
                hop.redirected(statusCode: Int(head.status.code), from: redirect.base, to: redirect.target)
                hops = hop.redirectHops
            }
            return event
        }
        if taken, let redirect {
            flow.isRedirect = true
            if let hops { client.expectRedirect(to: redirect.key, hops: hops) }
            // An async request keeps its span across hops: the next hop carries it on.
            if let traced = flow.traced, traced.isOpen {
                traced.redirected(to: redirect.target, status: Int(head.status.code), method: flow.method)
                client.announce(traced, key: redirect.key)
            }
        }
    }

    /// Where a redirect head sends the request next, if it is one.
    private static func redirect(_ head: HTTPResponseHead, from url: String) -> (base: URL, target: URL, key: String)? {
        guard (300 ..< 400).contains(Int(head.status.code)), let location = head.headers.first(name: "location"),
              let base = URL(string: url), let target = URL(string: location, relativeTo: base)?.absoluteURL, let key = Key.of(target)
        else { return nil }
        return (base, target, key)
    }

    func responseBody(_ buffer: ByteBuffer) {
        guard let flow else { return }
        buffer.withUnsafeReadableBytes { flow.recording.responseBody($0) }
    }

    func responseEnd() {
        guard let flow else { return }
        // A response held at a breakpoint ends when the viewer lets it go (``finishHeld(_:completed:)``).
        if !flow.isHeldByControl { flow.recording.finish(.completed) }
        self.flow = nil
    }

    // MARK: The exchange ends early

    /// Something went wrong on the channel; AsyncHTTPClient will close it.
    func caught(_ error: Error) {
        guard let flow, !flow.recording.isFinished, flow.channelError == nil else { return }
        flow.channelError = error
    }

    /// The channel is closing with the exchange unfinished: AsyncHTTPClient
    /// closed it (`byClient`: cancelled, timed out, or done with a redirect),
    /// or the peer did.
    func interrupted(byClient: Bool) {
        guard let flow, !flow.recording.isFinished else { return }
        self.flow = nil
        if byClient, flow.isRedirect, flow.channelError == nil {
            // AsyncHTTPClient follows a redirect as soon as its head arrives
            // and drops the rest of that response, closing the connection
            // when the body had not all arrived: the hop itself is complete.
            flow.recording.finish(.completed)
            return
        }
        let fallback: FlowEnd
        if let error = flow.channelError {
            fallback = .thrownByAsyncHTTPClient(error)
        } else if byClient {
            fallback = .cancelled(FlowError(
                domain: "AsyncHTTPClient", code: 0,
                message: "AsyncHTTPClient closed the connection before the response ended (cancelled, or a timeout or deadline expired)"
            ))
        } else {
            fallback = .failed(FlowError(
                domain: "AsyncHTTPClient", code: 0,
                message: "the connection closed before the response ended"
            ))
        }
        // An async request still waiting for its response head ends with the
        // real reason (read timeout, deadline, cancellation) in a moment.
        if let traced = flow.traced, traced.isOpen {
            let timeout = flow.eventLoop.scheduleTask(in: .seconds(2)) {
                flow.recording.finish(fallback)
            }
            traced.whenEnded { error in
                flow.eventLoop.execute {
                    timeout.cancel()
                    flow.recording.finish(error.map(FlowEnd.thrownByAsyncHTTPClient) ?? fallback)
                }
            }
            return
        }
        flow.recording.finish(fallback)
    }

    // MARK: Helpers

    /// The flow of the request `head` (as it went out; `appHead` as the app
    /// made it) on this connection.
    private func flowStart(_ head: HTTPRequestHead, appHead: HTTPRequestHead, url: String,
                           claimed: ClientCapture.Claim, localAddress: SocketAddress?) -> FlowStart {
        let (appHeaders, added) = Self.split(wire: head.headers, app: appHead.headers)
        var start = FlowStart(method: head.method.rawValue, url: url, headers: appHeaders, sessionID: client.clientID, taskID: claimed.taskID)
        start.clientHeaders = added
        start.source = CaptureSource(client: .asyncHTTPClient, path: .wire)
        start.parentID = claimed.traced?.parentID
        start.localAddress = text(of: localAddress)
        // An async request's wait for this connection (connecting included:
        // AsyncHTTPClient does not say which) is `blocked`.
        start.measuredPhases = ("AsyncHTTPClient", claimed.traced?.waitStart)
        start.hops = claimed.hops
        start.changes = client.replayOrigin?.changes
        return start
    }

    /// `address` (this end's) as text, formatted for the channel's first flow only.
    private func text(of address: SocketAddress?) -> String? {
        if let localAddressText { return localAddressText }
        localAddressText = address.flatMap { address in
            address.ipAddress.flatMap { ip in address.port.map { PeerAddress.text(host: ip, port: $0) } }
        }
        return localAddressText
    }

    /// The request's absolute URL as text (the scheme of the connection, the
    /// `Host` field and the origin-form URI; or an absolute URI, through a
    /// proxy), and its ``Key``. No URL is parsed for the common case.
    private func target(of head: HTTPRequestHead) -> Target? {
        if head.uri.utf8.first != UInt8(ascii: "/"), Self.isAbsolute(head.uri) {
            guard let key = Key.of(urlText: head.uri) else { return nil }
            return Target(url: head.uri, key: key)
        }
        guard let hostField = head.headers.first(name: "host") else { return nil }
        return Target(url: scheme + "://" + hostField + head.uri, key: Key.of(hostField: hostField, uri: head.uri, scheme: scheme))
    }

    /// A request's absolute URL as text, and its ``Key``.
    private struct Target {
        var url: String
        var key: String
    }

    /// Whether `uri` is an absolute URI (`scheme://...`), as a request to a proxy has.
    private static func isAbsolute(_ uri: String) -> Bool {
        let bytes = uri.utf8
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")) else { return false }
        return bytes[colon...].starts(with: "://".utf8)
    }

    /// Whether the agent's patterns let `target` through; its host is read
    /// (the one URL rule, ``URLAuthority``) only when there are patterns.
    private func shouldCapture(_ target: Target) -> Bool {
        client.shouldCapture(host: URLAuthority(url: target.url).host, url: target.url)
    }

    /// Field names AsyncHTTPClient always removes and sets anew.
    private static let alwaysAdded = ["host", "content-length", "transfer-encoding"]

    /// Splits the fields on the wire into the app's and those AsyncHTTPClient
    /// added: `Host` (added when the app set none), `Content-Length` and
    /// `Transfer-Encoding` (always removed and set anew by its request
    /// validation), and what the decompressor added (`Accept-Encoding`).
    static func split(wire: HTTPHeaders, app: HTTPHeaders) -> (app: [HTTPHeader], added: [HTTPHeader]) {
        var appFields: [(name: String, value: String)] = []
        appFields.reserveCapacity(app.count)
        for field in app where !alwaysAdded.contains(where: { HTTPHeader.namesMatch($0, field.name) }) {
            appFields.append((field.name, field.value))
        }
        var mine: [HTTPHeader] = []
        var added: [HTTPHeader] = []
        mine.reserveCapacity(appFields.count)
        for field in wire {
            let header = HTTPHeader(name: field.name, value: field.value)
            if let index = appFields.firstIndex(where: { $0.value == field.value && HTTPHeader.namesMatch($0.name, field.name) }) {
                appFields.remove(at: index)
                mine.append(header)
            } else {
                added.append(header)
            }
        }
        return (mine, added)
    }
}

/// One captured exchange on a channel: its flow (which makes the events,
/// or counts them when it is not built) and what the channel learns of the
/// exchange on the way.
final class WireFlow: @unchecked Sendable {
    let recording: FlowRecording
    let method: String
    /// The request's absolute URL; nil for a flow that is not built and
    /// that no request of the tracer's waited for (nothing reads it).
    let url: String?
    let eventLoop: EventLoop
    // Touched only on `eventLoop` (the traced request hands errors over there).
    var traced: TracedRequest?
    var isRedirect = false
    var channelError: Error?
    /// A breakpoint holds the response: the flow ends when the viewer decides.
    var isHeldByControl = false

    init(recording: FlowRecording, method: String, url: String?, eventLoop: EventLoop) {
        self.recording = recording
        self.method = method
        self.url = url
        self.eventLoop = eventLoop
    }
}

/// What both capture handlers are: a connection's HTTP parts passed on
/// unchanged, each seen on its way by the connection's exchange.
class ExchangeObserver {
    typealias InboundIn = HTTPClientResponsePart
    typealias InboundOut = HTTPClientResponsePart
    typealias OutboundIn = HTTPClientRequestPart
    typealias OutboundOut = HTTPClientRequestPart

    let exchange: ChannelExchange

    init(exchange: ChannelExchange) {
        self.exchange = exchange
    }
}

/// Right behind the HTTP codec: sees the request exactly as encoded (with
/// every field AsyncHTTPClient and the decompressor added) and the response
/// head as decoded; the body too when no decompressor follows.
final class WireCaptureHandler: ExchangeObserver, ChannelDuplexHandler, RemovableChannelHandler {
    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(let head): exchange.requestHead(head, eventLoop: context.eventLoop, localAddress: context.channel.localAddress)
        case .body(let body): exchange.requestBody(body)
        case .end: exchange.requestEnd()
        }
        context.write(data, promise: promise)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            exchange.responseHead(head)
        case .body(let buffer):
            if !exchange.decodes { exchange.responseBody(buffer) }
        case .end:
            if !exchange.decodes { exchange.responseEnd() }
        }
        context.fireChannelRead(data)
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        exchange.interrupted(byClient: true)
        context.close(mode: mode, promise: promise)
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        exchange.caught(error)
        context.fireErrorCaught(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        exchange.interrupted(byClient: false)
        context.fireChannelInactive()
    }
}

/// Behind the decompressor (only when decompression is on): the request head
/// before the decompressor adds to it, and the body as the app gets it.
final class DecodedCaptureHandler: ExchangeObserver, ChannelDuplexHandler, RemovableChannelHandler {
    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .head(let head) = unwrapOutboundIn(data) { exchange.headBeforeDecompressor = head }
        context.write(data, promise: promise)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head: break
        case .body(let buffer): exchange.responseBody(buffer)
        case .end: exchange.responseEnd()
        }
        context.fireChannelRead(data)
    }
}
#endif
