import Foundation
import WireProtocol

/// The record of one WebSocket connection as one flow, for every framework
/// the agent captures WebSocket traffic of (hummingbird-websocket, Vapor's
/// and websocket-kit's): the upgrade request starts it, the handshake's
/// answer is its response head, each message, ping, pong and close is its
/// own `webSocketMessage` event (past ``CaptureAgent/Configuration/messageLimit``
/// only counted), and it finishes when the connection closes: `completed`
/// after a close handshake both ways, `failed` otherwise.
///
/// Thread-safe; its events go through the flow's ``FlowRecording``, each
/// once and in order.
///
/// ```swift
/// guard let recording = WebSocketRecording(agent: agent, url: "ws://svc/chat", headers: fields, direction: .inbound,
///                                          peer: "127.0.0.1:50000", client: .hummingbird, sessionID: 1, taskID: 1)
/// else { return }
/// recording.upgraded(statusCode: 101, headers: answer)
/// recording.message(.request, complete)          // from WebSocketFrames
/// recording.closed(cleanly: true, error: nil)
/// ```
package final class WebSocketRecording: Sendable {
    private let flow: FlowRecording
    private let agent: CaptureAgent

    /// The flow's id: what the calls a WebSocket handler makes name as their parent.
    package var id: FlowID { flow.id }
    /// Whether the flow builds its events (an inspector was connected as it started).
    package var isBuilt: Bool { flow.isBuilt }
    /// The most bytes of one message kept: none for a flow that is not built.
    package var bodyLimit: Int { flow.isBuilt ? agent.configuration.bodyCaptureLimit : 0 }

    /// Starts recording an upgrade request (method GET) and sends
    /// `flowStarted`; nil when the agent is not capturing or the URL is
    /// excluded. `url` as the client addressed it (`ws://`, `wss://`);
    /// `direction` `.inbound` for a connection the app accepted.
    package init?(agent: CaptureAgent, url: String, headers: [HTTPHeader], direction: FlowDirection?, peer: String?,
                  localAddress: String? = nil, parentID: FlowID? = nil, client: CaptureSource.Client,
                  sessionID: Int, taskID: Int) {
        let configuration = agent.configuration
        guard agent.isCapturing, configuration.shouldCapture(host: URLAuthority(url: url).host, url: url) else { return nil }
        self.agent = agent
        var start = FlowStart(method: "GET", url: url, headers: headers, sessionID: sessionID, taskID: taskID)
        start.source = CaptureSource(client: client, path: .inPlace)
        start.direction = direction
        start.parentID = parentID
        start.peer = peer
        start.localAddress = localAddress
        start.webSocket = WebSocketSession()
        flow = FlowRecording(agent: agent, start: start)
        // An upgrade request has no body: it has gone whole once it started.
        flow.requestEnded()
    }

    /// The handshake's answer: `101 Switching Protocols` when the
    /// connection was upgraded, else the refusal the server sent (the flow
    /// then ends with it, ``refused()``).
    package func upgraded(statusCode: Int, headers: [HTTPHeader]) {
        flow.respond { $0.received(statusCode: statusCode, headers: headers, mimeType: MediaType.essence(of: headers.first("Content-Type"))) }
    }

    /// One message, ping, pong or close went `direction` (`.request`: from
    /// the client to the server).
    package func message(_ direction: StreamDirection, _ message: WebSocketFrames.Complete) {
        flow.message(limit: agent.configuration.messageLimit) { recorder in
            .webSocketMessage(WebSocketMessageEvent(id: recorder.id, message: WebSocketMessage(
                direction: direction, at: recorder.elapsed, opcode: message.opcode, body: message.body, closeCode: message.closeCode
            )))
        }
    }

    /// The server answered the upgrade request with something else than
    /// `101` (the head through ``upgraded(statusCode:headers:)``): the flow
    /// is an HTTP exchange that ended there.
    package func refused() {
        flow.finish { recorder, parts in
            recorder.finished(state: .completed, error: nil, requestBody: nil,
                              webSocket: WebSocketOutcome(droppedMessages: parts.droppedMessages))
        }
    }

    /// The connection closed: `cleanly` when close frames went both ways.
    /// `error`: what the connection failed with, if anything. Only the first end counts.
    package func closed(cleanly: Bool, error: FlowError?) {
        flow.finish { recorder, parts in
            let failure = cleanly ? nil : error ?? .closedWithoutHandshake
            return recorder.finished(state: failure == nil ? .completed : .failed, error: failure, requestBody: nil,
                                     webSocket: WebSocketOutcome(droppedMessages: parts.droppedMessages))
        }
    }

    /// The upgrade failed before any answer (the client could not connect,
    /// the server refused the handshake the way a client library reports it).
    package func failed(_ error: FlowError) {
        flow.finish { recorder, parts in
            recorder.finished(state: .failed, error: error, requestBody: nil,
                              webSocket: WebSocketOutcome(droppedMessages: parts.droppedMessages))
        }
    }

    /// The app's end of the connection, known once it connected: `flowFinished` carries it.
    package func connected(from address: String?) {
        flow.update { $0.connected(from: address) }
    }

    /// Whether the flow has ended.
    package var isFinished: Bool { flow.isFinished }

    /// Whether a request asks to become a WebSocket connection (its
    /// `Upgrade` field names `websocket`): its flow is recorded here, not
    /// as a plain exchange.
    package static func isUpgrade(_ headers: [HTTPHeader]) -> Bool {
        headers.contains { HTTPHeader.namesMatch($0.name, "Upgrade")
            && $0.value.split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces).caseInsensitiveCompare("websocket") == .orderedSame } }
    }

    /// A WebSocket URL for the URL of its upgrade request as a server
    /// saw it: `ws://` for `http://`, `wss://` for `https://`.
    package static func url(upgrading httpURL: String) -> String {
        if httpURL.hasPrefix("https://") { return "wss://" + httpURL.dropFirst("https://".count) }
        if httpURL.hasPrefix("http://") { return "ws://" + httpURL.dropFirst("http://".count) }
        return httpURL
    }
}

extension FlowError {
    /// What a WebSocket flow ends with when its connection closed before
    /// close frames went both ways (a peer vanished, a reset).
    package static let closedWithoutHandshake = FlowError(
        domain: "netinspect.websocket", code: 1, message: "The connection closed without a close handshake"
    )
}
