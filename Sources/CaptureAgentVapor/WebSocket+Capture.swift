// Built with the Vapor trait (on by default; Package.swift).
#if Vapor
import CaptureAgent
import CaptureAgentWebSocket
import NIOCore
import Vapor
import WireProtocol

extension WebSocket {
    /// Opens a WebSocket connection with websocket-kit (Vapor's client) as
    /// `connect(to:headers:configuration:on:onUpgrade:)` does, and records
    /// it in `agent` as one flow: the upgrade request, then every message,
    /// ping, pong and close either way as it goes by, until the connection
    /// closes. The connection, its frames and their timing are the same as
    /// without capture.
    ///
    /// ```swift
    /// try await WebSocket.connect(to: "ws://127.0.0.1:8080/chat", on: eventLoopGroup, capturedBy: agent) { ws in
    ///     ws.onText { ws, text in print(text) }
    ///     ws.send("hello")
    /// }.get()
    /// ```
    ///
    /// websocket-kit shows no one the handshake itself: the flow's request
    /// has the fields the app passed (not the `Sec-WebSocket-Key` and
    /// `Upgrade` fields websocket-kit adds), and its `101` response no fields.
    /// Called inside a captured handler, the flow names the handler's
    /// inbound flow as its parent.
    @preconcurrency
    public static func connect(
        to url: String,
        headers: HTTPHeaders = [:],
        configuration: WebSocketClient.Configuration = .init(),
        on eventLoopGroup: any EventLoopGroup,
        capturedBy agent: CaptureAgent,
        onUpgrade: @Sendable @escaping (WebSocket) -> ()
    ) -> EventLoopFuture<Void> {
        let numbering = FlowNumbering(agent: agent)
        guard let recording = WebSocketRecording(
            agent: agent, url: url, headers: headers.map { HTTPHeader(name: $0.name, value: $0.value) },
            direction: nil, peer: nil, parentID: CaptureAgent.currentInboundFlowID, client: .websocketKit,
            sessionID: numbering.sessionID, taskID: numbering.nextTaskID()
        ) else {
            return connect(to: url, headers: headers, configuration: configuration, on: eventLoopGroup, onUpgrade: onUpgrade)
        }
        let connected = connect(to: url, headers: headers, configuration: configuration, on: eventLoopGroup) { webSocket in
            // Called on the channel's event loop once websocket-kit's own
            // handler is in place and before any frame has gone either way.
            recording.upgraded(statusCode: 101, headers: [])
            if let channel = webSocket.capturedChannel {
                recording.connected(from: channel.localAddress.flatMap { PeerAddress.text(ip: $0.ipAddress, port: $0.port, unixPath: $0.pathname) })
                do {
                    try WebSocketFrameObserver.install(on: channel.pipeline.syncOperations, recording: recording, side: .client)
                } catch {
                    recording.closed(cleanly: false, error: FlowFailure.describe(error))
                }
            } else {
                recording.closed(cleanly: false, error: .unobservableWebSocket)
            }
            onUpgrade(webSocket)
        }
        connected.whenFailure { recording.failed(FlowFailure.describe($0)) }
        return connected
    }

    /// The connection's channel. websocket-kit keeps it internal; the
    /// agent reads it (by name, once per connection) only to put its
    /// observer in the pipeline, and records no frames if it is ever gone.
    var capturedChannel: (any Channel)? {
        Mirror(reflecting: self).descendant("channel") as? any Channel
    }
}

extension FlowError {
    /// What a websocket-kit flow ends with when the agent could not reach
    /// the connection to watch it (a websocket-kit that no longer keeps its channel by that name).
    static let unobservableWebSocket = FlowError(
        domain: "netinspect.websocket", code: 2, message: "websocket-kit's connection could not be observed; its messages were not recorded"
    )
}
#endif
