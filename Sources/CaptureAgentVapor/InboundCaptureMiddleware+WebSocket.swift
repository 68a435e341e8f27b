// Built with the Vapor trait (on by default; Package.swift).
#if Vapor
import CaptureAgent
import CaptureAgentWebSocket
import NIOCore
import NIOHTTP1
import Vapor
import WireProtocol

extension InboundCaptureMiddleware {
    /// A WebSocket upgrade request (`app.webSocket(...)`, `req.webSocket(...)`):
    /// recorded as a WebSocket flow, its frames watched once the connection
    /// is upgraded, through the upgrader the route answered with. No rules
    /// or breakpoints apply: the viewer's control covers HTTP exchanges.
    func captureWebSocket(_ request: Vapor.Request, chainingTo next: any AsyncResponder) async throws -> Vapor.Response {
        let fields = request.headers.map { HTTPHeader(name: $0.name, value: $0.value) }
        guard let recording = WebSocketRecording(
            agent: numbering.agent, url: WebSocketRecording.url(upgrading: Self.url(of: request)), headers: fields,
            direction: .inbound, peer: Self.peer(of: request), client: .vapor,
            sessionID: numbering.sessionID, taskID: numbering.nextTaskID()
        ) else {
            return try await next.respond(to: request)
        }
        let response: Vapor.Response
        do {
            response = try await CaptureAgent.handling(recording.id) { try await next.respond(to: request) }
        } catch {
            recording.upgraded(statusCode: Int((error as? any AbortError)?.status.code ?? 500), headers: [])
            recording.refused()
            throw error
        }
        if response.status == .switchingProtocols, let upgrader = response.upgrader {
            response.upgrader = CapturingUpgrader(base: upgrader, recording: recording)
        } else {
            recording.upgraded(statusCode: Int(response.status.code), headers: response.headers.map { HTTPHeader(name: $0.name, value: $0.value) })
            recording.refused()
        }
        return response
    }
}

/// The route's upgrader, unchanged, with the flow told of the handshake's
/// answer and the frame observer put in place as the connection is upgraded.
private struct CapturingUpgrader: Upgrader {
    let base: any Upgrader
    let recording: WebSocketRecording

    func applyUpgrade(req: Vapor.Request, res: Vapor.Response) -> any HTTPServerProtocolUpgrader {
        CapturingProtocolUpgrader(base: base.applyUpgrade(req: req, res: res), recording: recording)
    }
}

private struct CapturingProtocolUpgrader: HTTPServerProtocolUpgrader {
    let base: any HTTPServerProtocolUpgrader
    let recording: WebSocketRecording

    var supportedProtocol: String { base.supportedProtocol }
    var requiredUpgradeHeaders: [String] { base.requiredUpgradeHeaders }

    /// The `101`'s fields are these headers, as Vapor writes them.
    func buildUpgradeResponse(channel: any Channel, upgradeRequest: HTTPRequestHead,
                              initialResponseHeaders: HTTPHeaders) -> EventLoopFuture<HTTPHeaders> {
        let recording = recording
        let built = base.buildUpgradeResponse(channel: channel, upgradeRequest: upgradeRequest, initialResponseHeaders: initialResponseHeaders)
        built.whenComplete { result in
            switch result {
            case .success(let headers):
                recording.upgraded(statusCode: 101, headers: headers.map { HTTPHeader(name: $0.name, value: $0.value) })
            case .failure(let error):
                // The route's shouldUpgrade refused, or the request was no valid handshake:
                // Vapor closes the connection without an answer.
                recording.failed(FlowFailure.describe(error))
            }
        }
        return built
    }

    /// NIO's upgrader adds the frame decoder at once; websocket-kit adds its
    /// own handler and calls the route's `onUpgrade` in a later event-loop
    /// turn, and the bytes the client sent meanwhile are held until the
    /// upgrade ends. So the observer, put after the decoder here, sees every
    /// frame, the first `onUpgrade` sends included.
    func upgrade(context: ChannelHandlerContext, upgradeRequest: HTTPRequestHead) -> EventLoopFuture<Void> {
        let upgraded = base.upgrade(context: context, upgradeRequest: upgradeRequest)
        do {
            try WebSocketFrameObserver.install(on: context.pipeline.syncOperations, recording: recording, side: .server)
        } catch {
            recording.closed(cleanly: false, error: FlowFailure.describe(error))
        }
        return upgraded
    }
}
#endif
