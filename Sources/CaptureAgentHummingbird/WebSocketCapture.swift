// Built with the Hummingbird trait (on by default; Package.swift).
#if Hummingbird
import CaptureAgent
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOHTTP1
import WireProtocol

extension HTTPServerBuilder {
    /// An HTTP/1 server whose WebSocket routes are captured: hummingbird-websocket's
    /// `http1WebSocketUpgrade(webSocketRouter:configuration:)`, with each
    /// upgrade recorded in `agent` as one flow (the upgrade request, the
    /// `101` answer, then every message, ping, pong and close either way as
    /// it goes by, until the connection closes).
    ///
    /// ```swift
    /// let agent = try CaptureAgent.start()
    /// let webSocketRouter = Router(context: BasicWebSocketRequestContext.self)
    /// webSocketRouter.ws("/chat") { inbound, outbound, _ in
    ///     for try await message in inbound.messages(maxSize: 1 << 16) { ... }
    /// }
    /// let app = Application(router: router, server: .http1WebSocketUpgrade(webSocketRouter: webSocketRouter, capturedBy: agent))
    /// ```
    ///
    /// The connection, its frames and their timing are the same as without
    /// capture: the agent watches the frames SwiftNIO decodes and encodes and
    /// passes each on at once. The WebSocket handler runs inside its flow, so
    /// the calls it makes through a captured client name the flow as their
    /// parent. The server's plain HTTP requests are not recorded here (add
    /// ``InboundCaptureMiddleware`` to `router` for those).
    public static func http1WebSocketUpgrade<WSResponderBuilder: HTTPResponderBuilder>(
        webSocketRouter: WSResponderBuilder,
        configuration: HTTP1WebSocketUpgradeChannel.Configuration = .init(),
        capturedBy agent: CaptureAgent
    ) -> HTTPServerBuilder where WSResponderBuilder.Responder.Context: WebSocketRequestContext {
        let webSocketResponder = webSocketRouter.buildResponder()
        let numbering = FlowNumbering(agent: agent)
        return HTTPServerBuilder { responder in
            WebSocketCapturingChannel(
                base: HTTP1WebSocketUpgradeChannel(responder: responder, webSocketResponder: webSocketResponder, configuration: configuration),
                numbering: numbering
            )
        }
    }
}

/// hummingbird-websocket's child channel, with the two watchers of
/// ``UpgradeWatch`` put around NIO's upgrade handler on every connection.
struct WebSocketCapturingChannel: ServerChildChannel {
    struct Value: ServerChildChannelValue {
        let base: HTTP1WebSocketUpgradeChannel.Value
        /// The connection's WebSocket flow, once its first request said
        /// whether it upgrades (nil: it does not, or it is not recorded).
        let flowID: EventLoopFuture<FlowID?>
        var channel: any Channel { base.channel }
    }

    let base: HTTP1WebSocketUpgradeChannel
    let numbering: FlowNumbering

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let numbering = numbering
        return base.setup(channel: channel, logger: logger).flatMapThrowing { value in
            let flowID = try UpgradeWatch.install(on: channel, numbering: numbering)
            return Value(base: value, flowID: flowID)
        }
    }

    /// Runs the connection as hummingbird-websocket does; an upgraded one
    /// inside its flow, so its WebSocket handler's calls name the flow as
    /// their parent. The wait is for the first request's head, which the
    /// upgrade waits for anyway.
    func handle(value: Value, logger: Logger) async {
        guard let id = try? await value.flowID.get() else {
            return await base.handle(value: value.base, logger: logger)
        }
        await CaptureAgent.handling(id) { await base.handle(value: value.base, logger: logger) }
    }
}
#endif
