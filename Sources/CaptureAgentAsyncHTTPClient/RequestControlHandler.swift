// Built with the AsyncHTTPClient or Vapor trait (both on by default; Package.swift).
#if AsyncHTTPClient || Vapor
import AsyncHTTPClient
import CaptureAgent
import Foundation
import NIOCore
import NIOHTTP1
import WireProtocol

/// The viewer's control of the requests on one channel, for an app that
/// allows it: between the HTTP codec and ``WireCaptureHandler``, so the
/// flow is already recorded as the app made it and what this sends is what
/// goes on the wire. ``ExchangeControl`` decides; this carries it out in
/// NIO's terms: header rules rewrite the head, map local answers the app
/// with a response fired from here (nothing is written), map remote answers
/// it with what the agent's own client fetched from the mapped origin, and
/// a breakpoint keeps head and body back until the viewer decides.
///
/// Every write promise is completed when the part is taken, so a streaming
/// upload never waits on the viewer; a kill reaches AsyncHTTPClient as
/// `HTTPClientError.cancelled`, as the app's own cancellation does.
final class RequestControlHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias InboundOut = HTTPClientResponsePart
    typealias OutboundIn = HTTPClientRequestPart
    typealias OutboundOut = HTTPClientRequestPart

    private enum Mode {
        /// Nothing to do: parts go through untouched.
        case passing
        /// Parts are kept until the request's end, then the breakpoint filter decides.
        case collecting
        /// Parts are kept until the request's end, so that server replay
        /// matches on the whole body (a streamed one too), then it decides.
        case awaitingBody
        /// Held for the viewer.
        case held(FlowID)
        /// Answered without writing anything.
        case answering(Answer)
    }

    private enum Answer {
        /// A map-local rule's file.
        case local(ExchangeResponse)
        /// What the agent's own client fetches from a mapped origin,
        /// once the request's body is in.
        case remote(ExchangeRequest)
        /// A network condition's failure, once the request's body is in.
        case failure(NetworkFailure)
    }

    let exchange: ChannelExchange
    private var mode = Mode.passing
    private var head: HTTPRequestHead?
    private var body = ByteBuffer()
    /// The body could not be kept whole (a file region, or past the hold limit).
    private var bodyIsStreamed = false
    private var replayBody: ByteBuffer?
    /// The response's wait and pace under a network condition (RequestControlHandler+Conditions.swift).
    var pace: InboundPace?
    /// A condition's failure waiting for its latency.
    var failureTimer: Scheduled<Void>?
    /// The request body's pace under a network condition (RequestControlHandler+Upload.swift).
    var upload: OutboundPace?
    /// The server closed (its side, or the connection) while the app waits
    /// for parts this handler owes it (an answer, paced parts): told after them.
    private var deferredClose = (inputClosed: false, inactive: false)
    /// A held request's connection through the control tunnel being
    /// detached from the server's (ControlTunnel.swift): it is written once that is done.
    private var detached: EventLoopFuture<Void>?

    init(exchange: ChannelExchange) {
        self.exchange = exchange
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(let head):
            start(head, context: context, promise: promise)
        case .body(let part) where isAwaitingBody:
            guard case .byteBuffer(var buffer) = part, body.readableBytes + buffer.readableBytes <= exchange.client.configuration.bodyCaptureLimit else {
                // Too large to keep: decided without it, as the part goes on.
                return decideWithoutTheBody(then: data, promise: promise, context: context)
            }
            keepForReplay(part)
            promise?.succeed(())
            body.writeBuffer(&buffer)
        case .end where isAwaitingBody:
            exchange.rememberForReplay(body: replayBody)
            promise?.succeed(())
            guard let head else { return }
            start(head, body: Data(body.readableBytesView), context: context, promise: nil)
        case .body(let part):
            keepForReplay(part)
            if case .passing = mode {
                if upload != nil { return pacedWrite(.body(part), promise: promise, context: context) }
                return context.write(data, promise: promise)
            }
            promise?.succeed(())
            if case .answering(.remote) = mode, case .byteBuffer(var buffer) = part { body.writeBuffer(&buffer) }
            guard case .collecting = mode else { return }
            guard case .byteBuffer(var buffer) = part, body.readableBytes + buffer.readableBytes <= exchange.controlled?.holdLimit ?? 0 else {
                // Too large (or a file) to hold: it goes on as it is, unheld.
                bodyIsStreamed = true
                flushKept(context: context)
                return context.write(data, promise: promise)
            }
            body.writeBuffer(&buffer)
        case .end:
            exchange.rememberForReplay(body: replayBody)
            if case .passing = mode {
                if upload != nil { return pacedWrite(.end(nil), promise: promise, context: context) }
                return context.write(data, promise: promise)
            }
            promise?.succeed(())
            ended(context: context)
        }
    }

    func flush(context: ChannelHandlerContext) {
        if case .passing = mode { context.flush() }
    }

    func close(context: ChannelHandlerContext, mode closeMode: CloseMode, promise: EventLoopPromise<Void>?) {
        // AsyncHTTPClient gave up on the request (cancelled, deadline): a hold ends as the app's cancel.
        if case .held(let id) = mode { exchange.client.agent.breakpoints.decide(id, .release(.cancelled)) }
        reset()
        stopPacing()
        stopUpload()
        context.close(mode: closeMode, promise: promise)
        // A close kept back is the only one AsyncHTTPClient will get: its
        // own close of a closed channel makes none. After this call returns.
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        context.eventLoop.execute { bound.value.0.tellDeferredClose(context: bound.value.1) }
    }

    // MARK: - The server's close

    /// Whether the app waits for parts this handler owes it.
    private var owesParts: Bool {
        if case .answering = mode { return true }
        return isPacingParts
    }

    func channelInactive(context: ChannelHandlerContext) {
        guard owesParts else {
            stopPacing()
            return context.fireChannelInactive()
        }
        deferredClose.inactive = true
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, event == .inputClosed, owesParts {
            deferredClose.inputClosed = true
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    /// Tells AsyncHTTPClient of a close kept back while it was owed parts.
    func tellDeferredClose(context: ChannelHandlerContext) {
        let close = deferredClose
        deferredClose = (false, false)
        if close.inputClosed { context.fireUserInboundEventTriggered(ChannelEvent.inputClosed) }
        if close.inactive {
            stopPacing()
            context.fireChannelInactive()
        }
    }

    // MARK: - Steps

    private var isAwaitingBody: Bool {
        if case .awaitingBody = mode { return true }
        return false
    }

    /// Decides on `appHead`, with `body` when the whole of it is here (the
    /// request has ended), else at the head; `deferrable`: it may wait
    /// for the body first, when server replay needs it to match.
    private func start(_ appHead: HTTPRequestHead, body wholeBody: Data? = nil, deferrable: Bool = true,
                       context: ChannelHandlerContext, promise: EventLoopPromise<Void>?) {
        if wholeBody == nil { reset() } else { mode = .passing }
        let agent = exchange.client.agent
        guard agent.allowsControl, let flow = exchange.flow, !flow.recording.isFinished, let url = flow.url.flatMap(URL.init(string:)) else {
            exchange.controlled = nil
            return context.write(wrapOutboundOut(.head(appHead)), promise: promise)
        }
        let controlled = ControlledFlow(recording: flow.recording, agent: agent, policy: agent.controlPolicy,
                                        ends: ChannelExchange.heldAndCancelled)
        if wholeBody == nil, deferrable, controlled.replays, Self.declaresBody(appHead) {
            mode = .awaitingBody
            head = appHead
            replayBody = ByteBuffer()
            promise?.succeed(())
            return
        }
        let request = ExchangeRequest(method: appHead.method.rawValue, url: url, headers: appHead.headers.list,
                                      body: wholeBody.flatMap { $0.isEmpty ? nil : $0 }, bodyStreams: wholeBody == nil)
        if wholeBody == nil { replayBody = ByteBuffer() }
        exchange.app = request
        var head = appHead
        stopPacing()
        stopUpload()
        if controlled.isControlled {
            // The flow records what the rules changed.
            switch controlled.decide(request) {
            case .answer(let response):
                mode = .answering(.local(response))
            case .fail(let failure):
                mode = .answering(.failure(failure))
            case .send(let sent) where controlled.changes != nil && !Self.sameOrigin(sent.url, url):
                // Another origin: this connection cannot reach it.
                mode = .answering(.remote(sent))
            case .send(let sent):
                if controlled.changes != nil { head = Self.head(appHead, carrying: sent) }
            }
            pace = InboundPace(controlled.effect)
            if case .passing = mode, !controlled.intercepts {
                upload = controlled.effect.upBytesPerSecond.map(OutboundPace.init(bytesPerSecond:))
            }
        }
        exchange.controlled = controlled
        self.head = head
        if case .passing = mode, controlled.intercepts { mode = .collecting }
        guard wholeBody == nil else {
            // The request is whole: on as if it had just ended.
            if case .passing = mode { return flushKept(context: context, end: true) }
            return ended(context: context)
        }
        switch mode {
        case .answering, .collecting:
            promise?.succeed(())
        default:
            context.write(wrapOutboundOut(.head(head)), promise: promise)
        }
    }

    /// A body too large to keep for matching: the decision is made at the
    /// head after all, and what was kept goes on as the mode now says,
    /// then `part`.
    private func decideWithoutTheBody(then part: NIOAny, promise: EventLoopPromise<Void>?, context: ChannelHandlerContext) {
        guard let appHead = head else { return }
        let kept = body
        let keptForReplay = replayBody
        start(appHead, deferrable: false, context: context, promise: nil)
        replayBody = keptForReplay
        switch mode {
        case .passing:
            if kept.readableBytes > 0 { context.write(wrapOutboundOut(.body(.byteBuffer(kept))), promise: nil) }
        default:
            body = kept
        }
        write(context: context, data: part, promise: promise)
    }

    /// Whether the head says a body follows.
    static func declaresBody(_ head: HTTPRequestHead) -> Bool {
        head.headers.contains(name: "transfer-encoding") || head.headers.first(name: "content-length").flatMap(Int.init).map { $0 > 0 } == true
    }

    private func ended(context: ChannelHandlerContext) {
        switch mode {
        case .passing, .held, .awaitingBody:
            break
        case .answering(.local(let response)):
            reset()
            let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            context.eventLoop.execute { bound.value.0.answer(response, context: bound.value.1) }
        case .answering(.failure(let failure)):
            reset()
            failAfterLatency(failure, context: context)
        case .answering(.remote(var request)):
            if body.readableBytes > 0 { request.body = Data(body.readableBytesView) }
            let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            exchange.client.fetch(request, on: context.eventLoop).whenComplete { result in
                let (handler, context) = bound.value
                guard case .answering = handler.mode else { return }
                handler.reset()
                switch result {
                case .success(let response): handler.answer(response, context: context)
                case .failure(let error): context.fireErrorCaught(error)
                }
            }
        case .collecting:
            let ready = bodyIsStreamed ? ExchangeControl.RequestAction.send : exchange.requestReady(body: body)
            guard ready == .hold, let controlled = exchange.controlled else { return flushKept(context: context, end: true) }
            mode = .held(controlled.id)
            detached = detachFromServer(context: context)
            let loop = context.eventLoop
            let bound = NIOLoopBound((self, context), eventLoop: loop)
            // The flow records the decision (an edit, a kill) as it comes.
            controlled.holdRequest { release in
                loop.execute { bound.value.0.released(release, context: bound.value.1) }
            }
        }
    }

    private func released(_ outcome: ExchangeControl.RequestRelease, context: ChannelHandlerContext) {
        guard case .held = mode, var head else { return }
        switch outcome {
        case .kill:
            reset()
            exchange.flow = nil
            context.fireErrorCaught(HTTPClientError.cancelled)
            context.close(promise: nil)
        case .cancelled:
            reset()
        case .send(let sent, let edited):
            if edited {
                head = Self.head(head, carrying: sent)
                if !sent.bodyStreams {
                    body = ByteBuffer(bytes: sent.body ?? Data())
                    head.headers.remove(name: "transfer-encoding")
                    head.headers.replaceOrAdd(name: "content-length", value: String(body.readableBytes))
                }
            }
            self.head = head
            guard let detached else { return flushKept(context: context, end: true) }
            let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            detached.hop(to: context.eventLoop).whenComplete { _ in
                let (handler, context) = bound.value
                // Still held: AsyncHTTPClient did not give up meanwhile.
                guard case .held = handler.mode else { return }
                handler.flushKept(context: context, end: true)
            }
        }
    }

    /// Through the control tunnel, a held request's connection lets go of
    /// the server's, which would close it at its idle timeout while a person
    /// reads; the request goes on a new one. Not for `https`: its TLS
    /// session is the server connection's own.
    private func detachFromServer(context: ChannelHandlerContext) -> EventLoopFuture<Void>? {
        guard let tunnel = exchange.client.tunnel, exchange.scheme == "http", !exchange.isHTTP2,
              let port = context.channel.localAddress?.port else { return nil }
        return tunnel.detachUpstream(clientPort: port)
    }

    /// Writes what was kept back and lets everything after it through.
    private func flushKept(context: ChannelHandlerContext, end: Bool = false) {
        if let head { context.write(wrapOutboundOut(.head(head)), promise: nil) }
        if body.readableBytes > 0 { context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil) }
        if end { context.write(wrapOutboundOut(.end(nil)), promise: nil) }
        reset()
        context.flush()
    }

    /// Fires `response` at AsyncHTTPClient as if it had come from the server
    /// (after this call returns: AsyncHTTPClient is still inside its write).
    /// Under a network condition the parts wait and go at its pace as a server's would.
    private func answer(_ response: ExchangeResponse, context: ChannelHandlerContext) {
        var headers = HTTPHeaders(response.headers.map { ($0.name, $0.value) })
        headers.remove(name: "transfer-encoding")
        // Left as it is when true, so the app sees the field as the answer spells it.
        if headers["content-length"] != [String(response.body.count)] {
            headers.replaceOrAdd(name: "content-length", value: String(response.body.count))
        }
        let head = HTTPResponseHead(version: .http1_1, status: HTTPResponseStatus(statusCode: response.statusCode), headers: headers)
        channelRead(context: context, data: wrapInboundOut(.head(head)))
        if !response.body.isEmpty { channelRead(context: context, data: wrapInboundOut(.body(ByteBuffer(bytes: response.body)))) }
        channelRead(context: context, data: wrapInboundOut(.end(nil)))
        channelReadComplete(context: context)
        if !isPacingParts { tellDeferredClose(context: context) }
    }

    private func keepForReplay(_ part: IOData) {
        guard replayBody != nil else { return }
        guard case .byteBuffer(var buffer) = part,
              replayBody!.readableBytes + buffer.readableBytes <= exchange.client.configuration.replayLimits.bytes
        else { return replayBody = nil }
        replayBody!.writeBuffer(&buffer)
    }

    private func reset() {
        mode = .passing
        head = nil
        body = ByteBuffer()
        bodyIsStreamed = false
        detached = nil
    }

    // MARK: - Helpers

    /// `head` carrying `request`'s method, path and query, and header fields.
    static func head(_ head: HTTPRequestHead, carrying request: ExchangeRequest) -> HTTPRequestHead {
        var head = head
        head.method = HTTPMethod(rawValue: request.method)
        let path = request.url.path(percentEncoded: true)
        head.uri = (path.isEmpty ? "/" : path) + (request.url.query(percentEncoded: true).map { "?" + $0 } ?? "")
        head.headers = HTTPHeaders(request.headers.map { ($0.name, $0.value) })
        return head
    }

    static func sameOrigin(_ a: URL, _ b: URL) -> Bool {
        a.scheme?.lowercased() == b.scheme?.lowercased() && a.host?.lowercased() == b.host?.lowercased() && a.port == b.port
    }
}

extension HTTPHeaders {
    /// The fields as the log lists them, in order.
    var list: [HTTPHeader] {
        map { HTTPHeader(name: $0.name, value: $0.value) }
    }
}
#endif
