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
    private(set) var flow: WireFlow?
    /// The request head as it left AsyncHTTPClient, before the decompressor
    /// added `Accept-Encoding` (only with a decompressor).
    var headBeforeDecompressor: HTTPRequestHead?

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

    func requestHead(_ head: HTTPRequestHead, eventLoop: EventLoop) {
        guard !isDisabled else { return }
        if let flow, !flow.isDone {
            // A new request on a channel that never finished the last one.
            finish(flow, state: .failed, error: FlowError(
                domain: "CaptureAgent", code: 0,
                message: "AsyncHTTPClient started another request on this connection before the response ended"
            ))
        }
        flow = nil
        let appHead = headBeforeDecompressor ?? head
        headBeforeDecompressor = nil
        guard let target = target(of: head), client.shouldCapture(host: target.host, url: target.url) else { return }
        let (appHeaders, added) = Self.split(wire: head.headers, app: appHead.headers)
        let claimed = client.claim(key: target.key)
        var recorder = FlowRecorder(
            method: head.method.rawValue,
            url: target.url,
            headers: appHeaders,
            sessionID: client.clientID,
            taskID: claimed.taskID,
            configuration: client.configuration,
            clock: client.agent.clock
        )
        recorder.setClientHeaders(added)
        recorder.source = CaptureSource(client: .asyncHTTPClient, path: .wire)
        if let hops = claimed.hops { recorder.continuing(after: hops) }
        let flow = WireFlow(recorder: recorder, url: target.url, eventLoop: eventLoop, limit: client.configuration.bodyCaptureLimit)
        if let traced = claimed.traced {
            flow.traced = traced
            traced.carried(by: flow)
        }
        client.emit(flow.recorder.started())
        self.flow = flow
    }

    func requestBody(_ data: IOData) {
        guard let flow, !flow.isDone else { return }
        switch data {
        case .byteBuffer(let buffer):
            buffer.withUnsafeReadableBytes { flow.requestBody.append($0) }
        case .fileRegion(let region):
            // Sent by the kernel from a file: counted, not read.
            flow.unreadRequestBytes += region.readableBytes
        }
    }

    func requestEnd() {
        guard let flow, !flow.isDone else { return }
        flow.recorder.markRequestSent()
    }

    // MARK: Response, as it comes from the codec (head) or the decompressor (body)

    func responseHead(_ head: HTTPResponseHead) {
        guard let flow, !flow.isDone else { return }
        // 1xx heads are interim: the final one follows.
        if head.status.code >= 100, head.status.code < 200, head.status != .switchingProtocols { return }
        let headers = head.headers.map { HTTPHeader(name: $0.name, value: $0.value) }
        let mimeType = mimeType(of: head.headers.first(name: "content-type"))
        client.emit(flow.recorder.received(statusCode: Int(head.status.code), headers: headers, mimeType: mimeType))
        if decodes {
            let coding = head.headers.first(name: "content-encoding")?.lowercased()
            flow.recorder.responseBodyIsDecoded = coding == "gzip" || coding == "deflate"
        }
        if (300 ..< 400).contains(Int(head.status.code)), let location = head.headers.first(name: "location"),
           let base = URL(string: flow.url), let target = URL(string: location, relativeTo: base)?.absoluteURL, let key = Key.of(target) {
            flow.isRedirect = true
            var hop = flow.recorder
            hop.redirected(statusCode: Int(head.status.code), from: base, to: target)
            client.expectRedirect(to: key, hops: hop.redirectHops)
            // An async request keeps its span across hops: the next hop carries it on.
            if let traced = flow.traced, traced.isOpen {
                traced.redirected(to: target, status: Int(head.status.code), method: flow.recorder.method)
                client.announce(traced, key: key)
            }
        }
    }

    func responseBody(_ buffer: ByteBuffer) {
        guard let flow, !flow.isDone else { return }
        buffer.withUnsafeReadableBytes { flow.recorder.receivedBody($0) }
    }

    func responseEnd() {
        guard let flow, !flow.isDone else { return }
        finish(flow, state: .completed, error: nil)
        self.flow = nil
    }

    // MARK: The exchange ends early

    /// Something went wrong on the channel; AsyncHTTPClient will close it.
    func caught(_ error: Error) {
        guard let flow, !flow.isDone, flow.channelError == nil else { return }
        flow.channelError = error
    }

    /// The channel is closing with the exchange unfinished: AsyncHTTPClient
    /// closed it (`byClient`: cancelled, timed out, or done with a redirect),
    /// or the peer did.
    func interrupted(byClient: Bool) {
        guard let flow, !flow.isDone else { return }
        self.flow = nil
        if byClient, flow.isRedirect, flow.channelError == nil {
            // AsyncHTTPClient follows a redirect as soon as its head arrives
            // and drops the rest of that response, closing the connection
            // when the body had not all arrived: the hop itself is complete.
            return finish(flow, state: .completed, error: nil)
        }
        let fallback: (FlowState, FlowError)
        if let error = flow.channelError {
            fallback = (ErrorDescription.state(for: error), ErrorDescription.flowError(error))
        } else if byClient {
            fallback = (.cancelled, FlowError(
                domain: "AsyncHTTPClient", code: 0,
                message: "AsyncHTTPClient closed the connection before the response ended (cancelled, or a timeout or deadline expired)"
            ))
        } else {
            fallback = (.failed, FlowError(
                domain: "AsyncHTTPClient", code: 0,
                message: "the connection closed before the response ended"
            ))
        }
        // An async request still waiting for its response head ends with the
        // real reason (read timeout, deadline, cancellation) in a moment.
        if let traced = flow.traced, traced.isOpen {
            let timeout = flow.eventLoop.scheduleTask(in: .seconds(2)) {
                self.finish(flow, state: fallback.0, error: fallback.1)
            }
            traced.whenEnded { error in
                flow.eventLoop.execute {
                    timeout.cancel()
                    if let error {
                        self.finish(flow, state: ErrorDescription.state(for: error), error: ErrorDescription.flowError(error))
                    } else {
                        self.finish(flow, state: fallback.0, error: fallback.1)
                    }
                }
            }
            return
        }
        finish(flow, state: fallback.0, error: fallback.1)
    }

    private func finish(_ flow: WireFlow, state: FlowState, error: FlowError?) {
        guard !flow.isDone else { return }
        flow.isDone = true
        var body = flow.requestBody.captured
        if flow.unreadRequestBytes > 0 {
            body = CapturedBody(data: body.data, size: body.size + flow.unreadRequestBytes, isTruncated: true)
        }
        client.emit(flow.recorder.finished(state: state, error: error, requestBody: body.size > 0 ? body : nil))
    }

    // MARK: Helpers

    /// The request's absolute URL as text (the scheme of the connection, the
    /// `Host` field and the origin-form URI; or an absolute URI, through a
    /// proxy), its host and its ``Key``. No URL is parsed for the common case.
    private func target(of head: HTTPRequestHead) -> (url: String, host: String, key: String)? {
        if head.uri.contains("://") {
            guard let url = URL(string: head.uri), let key = Key.of(url) else { return nil }
            return (head.uri, url.host ?? "", key)
        }
        guard let hostField = head.headers.first(name: "host") else { return nil }
        let key = Key.of(hostField: hostField, uri: head.uri, scheme: scheme)
        let host = key[..<(key.lastIndex(of: ":") ?? key.endIndex)]
        return ("\(scheme)://\(hostField)\(head.uri)", String(host), key)
    }

    /// Splits the fields on the wire into the app's and those AsyncHTTPClient
    /// added: `Host` (added when the app set none), `Content-Length` and
    /// `Transfer-Encoding` (always removed and set anew by its request
    /// validation), and what the decompressor added (`Accept-Encoding`).
    static func split(wire: HTTPHeaders, app: HTTPHeaders) -> (app: [HTTPHeader], added: [HTTPHeader]) {
        let alwaysAdded: Set<String> = ["host", "content-length", "transfer-encoding"]
        var appFields = app.filter { !alwaysAdded.contains($0.name.lowercased()) }.map { HTTPHeader(name: $0.name, value: $0.value) }
        var mine: [HTTPHeader] = []
        var added: [HTTPHeader] = []
        for field in wire {
            let header = HTTPHeader(name: field.name, value: field.value)
            if let index = appFields.firstIndex(where: { $0.name.lowercased() == header.name.lowercased() && $0.value == header.value }) {
                appFields.remove(at: index)
                mine.append(header)
            } else {
                added.append(header)
            }
        }
        return (mine, added)
    }
}

/// One captured exchange on a channel.
final class WireFlow: @unchecked Sendable {
    // Touched only on `eventLoop` (the traced request hands errors over there).
    var recorder: FlowRecorder
    let url: String
    let eventLoop: EventLoop
    var requestBody: BodyCapture
    var unreadRequestBytes = 0
    var traced: TracedRequest?
    var isRedirect = false
    var channelError: Error?
    var isDone = false

    init(recorder: FlowRecorder, url: String, eventLoop: EventLoop, limit: Int) {
        self.recorder = recorder
        self.url = url
        self.eventLoop = eventLoop
        self.requestBody = BodyCapture(limit: limit)
    }
}

/// Right behind the HTTP codec: sees the request exactly as encoded (with
/// every field AsyncHTTPClient and the decompressor added) and the response
/// head as decoded; the body too when no decompressor follows.
final class WireCaptureHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias InboundOut = HTTPClientResponsePart
    typealias OutboundIn = HTTPClientRequestPart
    typealias OutboundOut = HTTPClientRequestPart

    private let exchange: ChannelExchange

    init(exchange: ChannelExchange) {
        self.exchange = exchange
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(let head): exchange.requestHead(head, eventLoop: context.eventLoop)
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
final class DecodedCaptureHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias InboundOut = HTTPClientResponsePart
    typealias OutboundIn = HTTPClientRequestPart
    typealias OutboundOut = HTTPClientRequestPart

    private let exchange: ChannelExchange

    init(exchange: ChannelExchange) {
        self.exchange = exchange
    }

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
