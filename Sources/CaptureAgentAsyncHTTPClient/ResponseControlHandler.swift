// Built with the AsyncHTTPClient or Vapor trait (both on by default; Package.swift).
#if AsyncHTTPClient || Vapor
import AsyncHTTPClient
import CaptureAgent
import Foundation
import NIOCore
import NIOHTTP1
import WireProtocol

/// The viewer's breakpoints on responses, for an app that allows control:
/// the last handler before AsyncHTTPClient's own, behind the capture
/// handlers, so the flow has recorded the response (decoded, when
/// AsyncHTTPClient decompresses) before the viewer is asked about it, and
/// AsyncHTTPClient gets nothing of a held response until the viewer decides.
/// ``ExchangeControl`` decides; this keeps the parts back and fires the
/// response the viewer let through, edited or not.
///
/// A body the server ends by closing (HTTP/1.0, no `Content-Length`) ends
/// as the connection closes, and a closed channel's handlers leave its
/// pipeline a moment later: nothing fired after that reaches AsyncHTTPClient.
/// So the connection is asked to report the server's close as half of one
/// (`allowRemoteHalfClosure`, set where this handler is installed): the
/// decoder ends the body at `inputClosed`, and this handler closes the
/// channel then, or, while it holds a response, after the app has it.
final class ResponseControlHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias InboundOut = HTTPClientResponsePart
    typealias OutboundIn = HTTPClientRequestPart
    typealias OutboundOut = HTTPClientRequestPart

    private struct Held {
        var flow: WireFlow
        var head: HTTPResponseHead
        var body = ByteBuffer()
        var waiting = false
        /// The connection closed after the whole response came: told once the app has it.
        var inactive = false
        /// The server closed its side (the end of a body it frames by
        /// closing): the channel is closed once the app has the response.
        var inputClosed = false
    }

    private let exchange: ChannelExchange
    private var held: Held?

    init(exchange: ChannelExchange) {
        self.exchange = exchange
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            guard head.status.code >= 200, let flow = exchange.flow, !flow.recording.isFinished, exchange.responseArrived() == .hold else {
                return context.fireChannelRead(data)
            }
            flow.isHeldByControl = true
            held = Held(flow: flow, head: head)
        case .body(var buffer):
            guard var kept = held, !kept.waiting else { return context.fireChannelRead(data) }
            kept.body.writeBuffer(&buffer)
            held = kept
            if kept.body.readableBytes > exchange.controlled?.holdLimit ?? 0 {
                // Too large to hold whole: the app gets it unheld, as it comes,
                // so a breakpoint never costs more memory than the capture.
                exchange.controlled?.bodyOutgrewHold()
                kept.flow.isHeldByControl = false
                held = nil
                context.fireChannelRead(wrapInboundOut(.head(kept.head)))
                context.fireChannelRead(wrapInboundOut(.body(kept.body)))
            }
        case .end:
            guard var kept = held, !kept.waiting, kept.flow.recording.isBuilt, let controlled = exchange.controlled else {
                return context.fireChannelRead(data)
            }
            kept.waiting = true
            held = kept
            let loop = context.eventLoop
            let bound = NIOLoopBound((self, context), eventLoop: loop)
            let arrived = ExchangeResponse(statusCode: Int(kept.head.status.code), headers: kept.head.headers.list,
                                           body: Data(kept.body.readableBytesView))
            // The flow records the decision (an edit, a kill) as it comes.
            controlled.holdResponse(arrived) { release in
                loop.execute { bound.value.0.released(release, context: bound.value.1) }
            }
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        // AsyncHTTPClient hands parts on at read-complete; a held response has none yet.
        if held == nil { context.fireChannelReadComplete() }
    }

    /// AsyncHTTPClient gave up (cancelled, deadline): a hold ends as the app's cancel.
    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        if let kept = held {
            held = nil
            exchange.finishHeld(kept.flow, completed: false)
            if kept.waiting { exchange.client.agent.breakpoints.decide(kept.flow.recording.id, .release(.cancelled)) }
        }
        context.close(mode: mode, promise: promise)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard event as? ChannelEvent == .some(.inputClosed) else { return context.fireUserInboundEventTriggered(event) }
        if var kept = held, kept.waiting {
            kept.inputClosed = true
            held = kept
            return
        }
        context.fireUserInboundEventTriggered(event)
        // What the channel itself does at the server's close without half-closure.
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        guard var kept = held, kept.waiting else {
            if let kept = held {
                // Closed before the response ended: the app gets what came, then the close.
                held = nil
                exchange.finishHeld(kept.flow, completed: false)
                context.fireChannelRead(wrapInboundOut(.head(kept.head)))
                context.fireChannelRead(wrapInboundOut(.body(kept.body)))
            }
            return context.fireChannelInactive()
        }
        kept.inactive = true
        held = kept
    }

    private func released(_ outcome: ExchangeControl.ResponseRelease, context: ChannelHandlerContext) {
        guard let kept = held, kept.waiting else { return }
        held = nil
        kept.flow.isHeldByControl = false
        switch outcome {
        case .kill:
            context.fireErrorCaught(HTTPClientError.cancelled)
            context.close(promise: nil)
            if kept.inactive { context.fireChannelInactive() }
        case .cancelled:
            if kept.inputClosed { context.close(promise: nil) }
        case .deliver(let response, let edited):
            var head = kept.head
            var body = kept.body
            if edited {
                head.status = HTTPResponseStatus(statusCode: response.statusCode)
                head.headers = HTTPHeaders(response.headers.map { ($0.name, $0.value) })
                body = ByteBuffer(bytes: response.body)
            }
            exchange.finishHeld(kept.flow, completed: true)
            context.fireChannelRead(wrapInboundOut(.head(head)))
            if body.readableBytes > 0 { context.fireChannelRead(wrapInboundOut(.body(body))) }
            context.fireChannelRead(wrapInboundOut(.end(nil)))
            context.fireChannelReadComplete()
            if kept.inputClosed { context.close(promise: nil) }
            if kept.inactive { context.fireChannelInactive() }
        }
    }
}
#endif
