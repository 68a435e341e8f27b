// Built with the Hummingbird trait (on by default; Package.swift).
#if Hummingbird
import CaptureAgent
import CaptureAgentWebSocket
import HummingbirdWebSocket
import NIOCore
import NIOHTTP1
import WireProtocol

/// What one connection of a captured WebSocket server has shown of its
/// upgrade, shared by two pass-through handlers on NIO's upgrade handler's
/// either side (hummingbird-websocket builds that pipeline itself and names
/// no place for a handler of the app's):
/// - ``HeadWatcher``, before it, reads the first request's head (an upgrade
///   request starts the flow) and the answer's head (the `101`, or the
///   refusal that ends the flow), and then leaves;
/// - ``CompletionWatcher``, after it, hears NIO's `upgradeComplete`, fired
///   once the WebSocket frame decoder is in place and before any frame
///   passes it, and puts the ``WebSocketFrameObserver`` after the decoder.
/// A connection whose first request is no upgrade loses both at once.
/// Confined to the connection's event loop.
final class UpgradeWatch {
    private let numbering: FlowNumbering
    private let flowID: EventLoopPromise<FlowID?>
    private var decided = false
    private(set) var recording: WebSocketRecording?
    /// The observer is in place: it ends the flow from now on.
    private(set) var isObserved = false
    private weak var completion: CompletionWatcher?

    private init(numbering: FlowNumbering, flowID: EventLoopPromise<FlowID?>) {
        self.numbering = numbering
        self.flowID = flowID
    }

    /// Puts both watchers around `channel`'s upgrade handler; the future
    /// gives the connection's flow once its first request head came (nil
    /// for no upgrade, or when the channel closed first).
    static func install(on channel: any Channel, numbering: FlowNumbering) throws -> EventLoopFuture<FlowID?> {
        let pipeline = channel.pipeline.syncOperations
        let upgrader = try pipeline.context(handlerType: NIOTypedHTTPServerUpgradeHandler<HTTP1WebSocketUpgradeChannel.UpgradeResult>.self)
        let watch = UpgradeWatch(numbering: numbering, flowID: channel.eventLoop.makePromise())
        let completion = CompletionWatcher(watch: watch)
        watch.completion = completion
        try pipeline.addHandler(HeadWatcher(watch: watch), position: .before(upgrader.handler))
        try pipeline.addHandler(completion, position: .after(upgrader.handler))
        return watch.flowID.futureResult
    }

    /// The first request's head: an upgrade request starts the flow.
    /// Returns whether the connection is upgrading (and still watched).
    fileprivate func requested(_ head: HTTPRequestHead, channel: any Channel) -> Bool {
        let fields = head.headers.map { HTTPHeader(name: $0.name, value: $0.value) }
        if WebSocketRecording.isUpgrade(fields) {
            let host = head.headers.first(name: "Host") ?? "localhost"
            recording = WebSocketRecording(
                agent: numbering.agent, url: "ws://\(host)\(head.uri)", headers: fields, direction: .inbound,
                peer: channel.remoteAddress.flatMap { PeerAddress.text(ip: $0.ipAddress, port: $0.port, unixPath: $0.pathname) },
                client: .hummingbird, sessionID: numbering.sessionID, taskID: numbering.nextTaskID()
            )
        }
        decide(recording?.id)
        if recording == nil, let completion { channel.pipeline.syncOperations.removeHandler(completion, promise: nil) }
        return recording != nil
    }

    private func decide(_ id: FlowID?) {
        guard !decided else { return }
        decided = true
        flowID.succeed(id)
    }

    /// The answer's head: `101`, or the refusal that ends the flow.
    fileprivate func answered(_ head: HTTPResponseHead) {
        recording?.upgraded(statusCode: Int(head.status.code), headers: head.headers.map { HTTPHeader(name: $0.name, value: $0.value) })
        if head.status != .switchingProtocols { recording?.refused() }
    }

    /// NIO has put the frame decoder in place.
    fileprivate func upgraded(_ pipeline: ChannelPipeline.SynchronousOperations) {
        guard let recording, !isObserved else { return }
        do {
            try WebSocketFrameObserver.install(on: pipeline, recording: recording, side: .server)
            isObserved = true
        } catch {
            recording.closed(cleanly: false, error: FlowFailure.describe(error))
        }
    }

    /// The connection closed, or a watcher left it: whatever is still
    /// pending ends here (the observer, once in place, ends the flow itself).
    fileprivate func ended() {
        decide(nil)
        if !isObserved { recording?.closed(cleanly: false, error: nil) }
    }
}

/// Before NIO's upgrade handler: reads the first request head and the first
/// answer head, passes everything through untouched, and leaves once the
/// answer is flushed. Only those two parts are read as HTTP: what passes later (the
/// bytes after the upgrade) is passed on without being looked at.
private final class HeadWatcher: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart

    private let watch: UpgradeWatch
    private var sawRequest = false
    private var sawAnswer = false

    init(watch: UpgradeWatch) {
        self.watch = watch
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if !sawRequest {
            sawRequest = true
            if case .head(let head) = unwrapInboundIn(data), !watch.requested(head, channel: context.channel) {
                context.fireChannelRead(data)
                return context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
            }
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if sawRequest, !sawAnswer, case .head(let head) = unwrapOutboundIn(data) {
            sawAnswer = true
            watch.answered(head)
        }
        context.write(data, promise: promise)
    }

    /// Leaves once the answer's head is flushed: the upgrade handler writes
    /// and flushes it in one call, and a handler gone between the two would
    /// take the flush with it.
    func flush(context: ChannelHandlerContext) {
        context.flush()
        if sawAnswer { context.pipeline.syncOperations.removeHandler(context: context, promise: nil) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        if !context.channel.isActive { watch.ended() }
    }

    func channelInactive(context: ChannelHandlerContext) {
        watch.ended()
        context.fireChannelInactive()
    }
}

/// After NIO's upgrade handler: waits for `upgradeComplete`, has the frame
/// observer put in place, and leaves.
private final class CompletionWatcher: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart

    private let watch: UpgradeWatch

    init(watch: UpgradeWatch) {
        self.watch = watch
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard let upgrade = event as? HTTPServerUpgradeEvents, case .upgradeComplete = upgrade else {
            return context.fireUserInboundEventTriggered(event)
        }
        watch.upgraded(context.pipeline.syncOperations)
        context.fireUserInboundEventTriggered(event)
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        watch.ended()
        context.fireChannelInactive()
    }
}
#endif
